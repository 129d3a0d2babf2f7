//! The strict JSON reader of contract §4.
//!
//! One left-to-right pass over the text, hand-written so that it follows the contract exactly
//! where general-purpose JSON libraries differ: integers keep their exact value or text
//! (§4.3), escaped lone surrogates are rejected (§4.1), duplicate keys are an error found when
//! their object closes (§4.4), and `NaN`/`Infinity`/`-Infinity` have a code of their own
//! (§4.2). Errors are reported in the order of §4.5.
//!
//! The reader never recurses: nesting is tracked on an explicit stack, and more than
//! [`MAX_DEPTH`] nested arrays and objects are rejected as `invalid_json`, so no input can
//! exhaust the native stack (neither here nor when the resulting tree is dropped).
//!
//! Strings without escapes borrow from the input ([`Cow::Borrowed`](std::borrow::Cow)).

mod dup;
mod parser;
mod scan;

#[cfg(test)]
mod tests;

use crate::code::Code;
use crate::error::Error;
use crate::value::Value;

/// The deepest nesting of arrays and objects the reader accepts; a deeper document is
/// `invalid_json`.
pub const MAX_DEPTH: usize = 512;

/// Reads a document supplied as bytes.
///
/// The bytes must be UTF-8 (contract §4.1, §16 D3). Like the reference, which decodes the
/// bytes before it parses them, invalid UTF-8 anywhere in the text is `invalid_json`
/// whatever else the text contains. `label` names the document kind in messages (§4).
///
/// # Errors
///
/// `invalid_json`, `non_finite_number` or `duplicate_key` as described in contract §4.
pub fn read<'a>(text: &'a [u8], label: &str) -> Result<Value<'a>, Error> {
    match std::str::from_utf8(text) {
        Ok(text) => read_str(text, label),
        Err(_) => Err(invalid_json(label)),
    }
}

/// Reads a document supplied as text. `label` names the document kind in messages (§4).
///
/// The top-level value may be of any type; the `not_an_object` check (§4.6) is the caller's.
///
/// # Errors
///
/// `invalid_json`, `non_finite_number` or `duplicate_key` as described in contract §4.
pub fn read_str<'a>(text: &'a str, label: &str) -> Result<Value<'a>, Error> {
    parser::Parser::new(text, label).parse()
}

pub(crate) use scan::{find_special, parse_u64, skip_whitespace};

/// The `invalid_json` error for the document kind `label`.
#[cold]
pub(crate) fn invalid_json(label: &str) -> Error {
    Error::new(Code::InvalidJson, format!("{label} is not valid JSON"))
}

/// The `non_finite_number` error for `token` as written.
#[cold]
fn non_finite(token: &str) -> Error {
    Error::new(
        Code::NonFiniteNumber,
        format!("non-finite JSON number is unsupported: {token}"),
    )
}

/// The `duplicate_key` error for the unescaped `key`.
#[cold]
fn duplicate_key(key: &str) -> Error {
    Error::new(Code::DuplicateKey, format!("duplicate JSON field: {key}"))
}
