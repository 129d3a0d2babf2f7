//! Rejections: a stable [`Code`], the contract's message, and a JSON pointer.
//!
//! Errors are data created where the rule lives; rendering (CLI text, JSON, Python
//! `ValueError`, C struct) happens at the edges.

use std::fmt;

pub use crate::code::Code;
use crate::path::Path;

/// One rejection: exactly one code and one message (contract §1.3), and where it is
/// defined (contract §15) the RFC 6901 pointer to the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
    path: Option<String>,
}

/// The result type of every fallible operation in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error without a location.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            path: None,
        }
    }

    /// An error located at `path` in the input document.
    pub fn at(code: Code, message: impl Into<String>, path: &Path<'_>) -> Self {
        Error {
            code,
            message: message.into(),
            path: Some(path.to_pointer()),
        }
    }

    /// Replaces the location with `path`.
    #[must_use]
    pub fn with_pointer(mut self, pointer: Option<String>) -> Self {
        self.path = pointer;
        self
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message text (for people; conformance compares codes).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON pointer into the input document, where the contract defines one.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
}

impl fmt::Display for Error {
    /// Renders `error[code]: message at /pointer`, the CLI's format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.code, self.message)?;
        if let Some(path) = &self.path {
            write!(f, " at {}", if path.is_empty() { "\"\"" } else { path })?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
