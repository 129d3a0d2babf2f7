//! The canonical JSON encoding of contract §5, and the SHA-256 helpers built on it.
//!
//! The output is byte-for-byte Python's
//! `json.dumps(value, sort_keys=True, separators=(",", ":"))` (with `ensure_ascii=True`):
//! no whitespace, object keys in code point order, integers in plain decimal, and every
//! scalar outside printable ASCII written as a lowercase `\u` escape. The encoder writes into
//! a [`Sink`], so an identity can be hashed without materialising the text.
//!
//! Two inputs are supported: any [`serde::Serialize`] value ([`write()`], [`to_vec`],
//! [`to_string`], [`hash`]) and the reader's document tree ([`encode_value`]).
//!
//! Serde structs are written without buffering, in declaration order; the schemas declare
//! fields in sorted order and the encoder checks it (an unsorted struct is an
//! [`EncodeError`]). Maps are buffered and sorted. Floats and byte strings are rejected:
//! they never occur in the contract's documents.

mod escape;
mod key;
mod ser;
mod sink;
mod value;
mod writer;

#[cfg(test)]
mod tests;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use escape::{write_str, write_u64};
pub use sink::{hex, EncodeError, HashSink, Sink};
pub use value::encode_value;
pub use writer::Canonical;
pub(crate) use writer::{Hole, Raw};

/// Encodes `value` canonically into `sink`.
///
/// On error the sink may hold a partial encoding.
pub fn write<T, S>(value: &T, sink: &mut S) -> Result<(), EncodeError>
where
    T: Serialize + ?Sized,
    S: Sink + ?Sized,
{
    value.serialize(ser::Encoder::new(sink))
}

/// Encodes `value` canonically into a new buffer.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(128);
    write(value, &mut out)?;
    Ok(out)
}

/// Encodes `value` canonically as text (always ASCII).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, EncodeError> {
    String::from_utf8(to_vec(value)?)
        .map_err(|_| EncodeError::new("internal error: encoder produced non-UTF-8 output"))
}

/// The SHA-256 digest of the canonical encoding of `value`, computed without materialising
/// the text.
pub fn hash<T: Serialize + ?Sized>(value: &T) -> Result<[u8; 32], EncodeError> {
    let mut sink = HashSink::new();
    write(value, &mut sink)?;
    Ok(sink.finish())
}

/// The SHA-256 digest of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes).into())
}
