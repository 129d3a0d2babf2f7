//! Where the encoder writes: the [`Sink`] trait and its buffer and hashing sinks, and the
//! encoder's one error type. A leaf of the encoder: the writers below it import these.

use std::fmt;

use sha2::{Digest, Sha256};

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

/// A SHA-256 sink that gathers the encoder's many small writes into blocks of a few
/// kilobytes before hashing them (one hasher call per field costs more than the field).
/// A clone continues from the same state: two texts with a common prefix hash it once.
#[derive(Clone)]
pub struct HashSink {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl Default for HashSink {
    fn default() -> Self {
        HashSink::new()
    }
}

impl HashSink {
    const BLOCK: usize = 8 << 10;

    /// An empty sink.
    pub fn new() -> Self {
        HashSink {
            hasher: Sha256::new(),
            buffer: Vec::with_capacity(Self::BLOCK + 256),
        }
    }

    /// The digest of everything written; the sink starts again empty.
    pub fn finish(&mut self) -> [u8; 32] {
        self.hasher.update(&self.buffer);
        self.buffer.clear();
        std::mem::take(&mut self.hasher).finalize().into()
    }

    /// `prefix` + the digest of everything written in hex: an identity of §7.
    pub fn id(&mut self, prefix: &str) -> String {
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
