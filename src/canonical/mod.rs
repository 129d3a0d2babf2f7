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
mod value;
mod writer;

#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub(crate) use escape::{write_str, write_u64};
pub use value::encode_value;
pub use writer::Canonical;
pub(crate) use writer::{Hole, Raw};

/// A byte destination for the encoder: a buffer, a hasher, ...
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// Marks the place of a member written later (see `Hole`); most sinks ignore it.
    fn hole(&mut self) {}
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for Sha256 {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        Digest::update(self, bytes);
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        (**self).put(bytes);
    }

    fn hole(&mut self) {
        (**self).hole();
    }
}

/// A value the canonical encoding cannot represent (a float, bytes, a non-string map key,
/// an unsorted struct, ...). Always a programming error, never caused by document input
/// that passed the reader and the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    message: String,
}

impl EncodeError {
    /// An error with `message`.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        EncodeError {
            message: message.into(),
        }
    }

    /// The description of the problem.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "canonical JSON encoding failed: {}", self.message)
    }
}

impl std::error::Error for EncodeError {}

impl serde::ser::Error for EncodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        EncodeError::new(msg.to_string())
    }
}

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

/// A SHA-256 sink that gathers the encoder's many small writes into blocks of a few
/// kilobytes before hashing them (one hasher call per field costs more than the field).
/// A clone continues from the same state: two texts with a common prefix hash it once.
#[derive(Clone)]
pub(crate) struct HashSink {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl HashSink {
    const BLOCK: usize = 8 << 10;

    /// An empty sink.
    pub(crate) fn new() -> Self {
        HashSink {
            hasher: Sha256::new(),
            buffer: Vec::with_capacity(Self::BLOCK + 256),
        }
    }

    /// The digest of everything written; the sink starts again empty.
    pub(crate) fn finish(&mut self) -> [u8; 32] {
        self.hasher.update(&self.buffer);
        self.buffer.clear();
        std::mem::take(&mut self.hasher).finalize().into()
    }

    /// `prefix` + the digest of everything written in hex: an identity of §7.
    pub(crate) fn id(&mut self, prefix: &str) -> String {
        format!("{prefix}{}", hex(&self.finish()))
    }
}

impl Sink for HashSink {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if bytes.len() >= Self::BLOCK {
            // A large piece (a plan's regions text) is hashed where it is, not copied.
            self.hasher.update(&self.buffer);
            self.buffer.clear();
            self.hasher.update(bytes);
            return;
        }
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= Self::BLOCK {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }
}

/// The SHA-256 digest of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes).into())
}

/// A digest as 64 lowercase hex digits.
pub fn hex(digest: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for &byte in digest {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}
