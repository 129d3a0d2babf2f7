//! The known-failures list of an implementation: one `fixture-id: reason` per line;
//! blank lines and `#` comments are ignored; a reason is mandatory.

/// One entry of a known-failures list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownFailure {
    /// The fixture id.
    pub id: String,
    /// Why the implementation fails it.
    pub reason: String,
}

/// A line of a known-failures list that is not `fixture-id: reason`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownFailuresError {
    /// The line, counted from 1.
    pub line: usize,
}

impl std::fmt::Display for KnownFailuresError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "known failures line {}: expected `fixture-id: reason`",
            self.line
        )
    }
}

impl std::error::Error for KnownFailuresError {}

/// Parses a known-failures list; an entry without a reason is an error naming its line.
pub fn parse_known_failures(text: &str) -> Result<Vec<KnownFailure>, KnownFailuresError> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once(':') {
            Some((id, reason)) if !id.trim().is_empty() && !reason.trim().is_empty() => {
                entries.push(KnownFailure {
                    id: id.trim().to_owned(),
                    reason: reason.trim().to_owned(),
                });
            }
            _ => return Err(KnownFailuresError { line: number + 1 }),
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::parse_known_failures;

    #[test]
    fn every_entry_needs_a_reason() {
        let list = parse_known_failures("# c\n\nbind/x: not yet\n").unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].reason, "not yet");
        let error = parse_known_failures("a/b: ok\nbind/x\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.to_string().contains("line 2"), "{error}");
        assert!(parse_known_failures("bind/x:   \n").is_err());
    }
}
