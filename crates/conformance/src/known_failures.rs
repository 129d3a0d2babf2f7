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

/// Parses a known-failures list; an entry without a reason is an error naming its line.
pub fn parse_known_failures(text: &str) -> Result<Vec<KnownFailure>, String> {
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
            _ => {
                return Err(format!(
                    "known failures line {}: expected `fixture-id: reason`",
                    number + 1
                ))
            }
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
        assert!(parse_known_failures("bind/x\n").is_err());
        assert!(parse_known_failures("bind/x:   \n").is_err());
    }
}
