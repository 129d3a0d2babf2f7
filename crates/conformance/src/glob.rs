//! `--filter` patterns: `*` matches any run of characters (including `/`), `?` one.

/// Whether `text` matches `pattern`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn matches_stars_and_marks() {
        assert!(glob_match("placement/*", "placement/a-b"));
        assert!(glob_match("*overlap*", "bind/address-overlap-x"));
        assert!(glob_match("bind/?", "bind/x"));
        assert!(!glob_match("bind/?", "bind/xy"));
        assert!(!glob_match("placement/*", "runtime/a"));
        assert!(glob_match("*", ""));
    }
}
