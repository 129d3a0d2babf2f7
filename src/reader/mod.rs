//! The strict JSON reader of contract §4.
//!
//! One left-to-right pass over the text, hand-written so that it follows the contract exactly
//! where general-purpose JSON libraries differ: integers keep their exact value or text
//! (§4.3), escaped lone surrogates are rejected (§4.1), duplicate keys are an error found when
//! their object closes (§4.4), and `NaN`/`Infinity`/`-Infinity` have a code of their own
//! (§4.2). Errors are reported in the order of §4.5.
//!
//! The reader never recurses: nesting is tracked on an explicit stack. It enforces the
//! reader's part of [`Limits`]: the document size before anything is read, and the nesting
//! depth and string lengths as it goes, each as `limit_exceeded` at the container or string
//! that crosses the limit. The depth never exceeds [`MAX_DEPTH`], so no input can exhaust
//! the native stack (neither here nor when the resulting tree is dropped).
//!
//! Strings without escapes borrow from the input ([`Cow::Borrowed`](std::borrow::Cow)).
//!
//! Every `invalid_json` rejection carries a [`JsonLocation`](crate::error::JsonLocation) (byte offset, line, column of
//! the first offending byte; [`Error::json_location`]); its message stays the contract's
//! and its [`Error::path`] stays `None`. The line and column are computed from the text
//! only when the error is raised: the parsing loop tracks nothing but the byte position.

pub mod cursor;
mod dup;
mod errors;
mod frame;
mod locate;
mod parser;
mod scan;

#[cfg(test)]
mod limit_tests;
#[cfg(test)]
mod location_tests;
#[cfg(test)]
mod tests;

use crate::error::Error;
use crate::limits::Limits;
use crate::value::Value;

/// The deepest nesting of arrays and objects the reader accepts under any limits (the
/// ceiling of [`Limits::max_depth`]); a deeper document is `limit_exceeded`.
pub const MAX_DEPTH: usize = crate::limits::MAX_DEPTH_CEILING;

/// Reads a document supplied as bytes, under `limits` (`Limits::default()` for the
/// defaults): the document size is checked first, then the bytes must be UTF-8, then the
/// text is read with the depth and string limits.
///
/// The bytes must be UTF-8 (contract §4.1, §16 D3). Like the reference, which decodes the
/// bytes before it parses them, invalid UTF-8 anywhere in the text is `invalid_json`
/// whatever else the text contains (located at the first byte of the first ill-formed
/// sequence). `label` names the document kind in messages (§4). The top-level value may be
/// of any type; the `not_an_object` check (§4.6) is the caller's.
///
/// # Errors
///
/// `invalid_json`, `non_finite_number` or `duplicate_key` as described in contract §4;
/// `limit_exceeded` as described in [`crate::limits`].
pub fn read<'a>(text: &'a [u8], label: &str, limits: &Limits) -> Result<Value<'a>, Error> {
    limits.check_document_bytes(text.len())?;
    parse(utf8(text, label)?, label, limits)
}

/// Reads a document supplied as text, under `limits`; as [`read`] without the UTF-8 check.
///
/// # Errors
///
/// As [`read`].
pub fn read_str<'a>(text: &'a str, label: &str, limits: &Limits) -> Result<Value<'a>, Error> {
    limits.check_document_bytes(text.len())?;
    parse(text, label, limits)
}

/// The bytes as text, else `invalid_json` located at the first byte of the first
/// ill-formed UTF-8 sequence (the second step of [`read`]).
///
/// # Errors
///
/// `invalid_json`.
pub fn utf8<'a>(text: &'a [u8], label: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(text).map_err(|e| invalid_json(label, text, e.valid_up_to()))
}

/// Reads text whose size has been checked (the last step of [`read`]): the depth and
/// string limits apply.
pub(crate) fn parse<'a>(text: &'a str, label: &str, limits: &Limits) -> Result<Value<'a>, Error> {
    parser::Parser::new(text, label, limits).parse()
}

pub(crate) use errors::invalid_json;
pub(crate) use scan::{find_special, parse_u64, skip_whitespace};
