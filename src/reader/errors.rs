//! The reader's three rejections (§4): `invalid_json` with its location in the text,
//! `non_finite_number` and `duplicate_key`.

use crate::code::Code;
use crate::error::{Detail, Error, JsonLocation};

/// The `invalid_json` error for the document kind `label`, located at byte `offset` of
/// `text` (the first offending byte, or `text.len()`: see [`JsonLocation`]).
#[cold]
pub(crate) fn invalid_json(label: &str, text: &[u8], offset: usize) -> Error {
    Error::new(Code::InvalidJson, format!("{label} is not valid JSON"))
        .with_detail(Detail::JsonLocation(JsonLocation::in_text(text, offset)))
}

/// The `non_finite_number` error for `token` as written.
#[cold]
pub(super) fn non_finite(token: &str) -> Error {
    Error::new(
        Code::NonFiniteNumber,
        format!("non-finite JSON number is unsupported: {token}"),
    )
}

/// The `duplicate_key` error for the unescaped `key`.
#[cold]
pub(super) fn duplicate_key(key: &str) -> Error {
    Error::new(Code::DuplicateKey, format!("duplicate JSON field: {key}"))
}
