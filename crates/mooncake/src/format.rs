//! Which of Mooncake's formats a text is, told apart before it is read: a placement has a
//! `placement_set_id` member, a Store manifest a `manifest_key` member, and this
//! contract's placement neither. A string holding those characters escapes its quotes, so
//! only a member name matches; the text is scanned once, without being parsed.

/// Whether `text` has the member name `key` (quotes included).
fn has_member(text: &[u8], key: &[u8]) -> bool {
    memchr::memmem::find_iter(text, key).any(|i| i == 0 || text.get(i - 1) != Some(&b'\\'))
}

/// Whether `text` is a Mooncake placement (§20.3): it has a `placement_set_id` member.
pub fn is_mooncake_placement(text: &[u8]) -> bool {
    has_member(text, b"\"placement_set_id\"")
}

/// Whether `text` is a Mooncake Store manifest (§20.6): it has a `manifest_key` member.
pub fn is_mooncake_store(text: &[u8]) -> bool {
    has_member(text, b"\"manifest_key\"")
}

#[cfg(test)]
mod tests {
    use super::{is_mooncake_placement, is_mooncake_store};

    #[test]
    fn only_a_member_name_is_a_key() {
        assert!(is_mooncake_store(br#"{"manifest_key":"g/manifest"}"#));
        assert!(!is_mooncake_store(
            br#"{"resource_id":"a \"manifest_key\" b"}"#
        ));
        assert!(is_mooncake_placement(br#"{"placement_set_id":"s"}"#));
        assert!(!is_mooncake_placement(br#"{"manifest_key":"k"}"#));
    }
}
