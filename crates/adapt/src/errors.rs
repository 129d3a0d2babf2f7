//! The rejections of the rules file and the index: an error at a JSON pointer, and the
//! pointer of a rule.

use weight_manifest::error::{Code, Error};

/// An error with `code` at the JSON `pointer` of the rules file (or the index file).
pub(crate) fn error_at(
    code: Code,
    message: impl Into<String>,
    pointer: impl Into<String>,
) -> Error {
    Error::new(code, message).with_pointer(Some(pointer.into()))
}

/// The pointer of rule `index`, or of one of its members when `tail` is not empty.
pub(crate) fn rule_pointer(index: usize, tail: &str) -> String {
    format!("/rules/{index}{tail}")
}
