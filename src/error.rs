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
    detail: Option<Box<Detail>>,
}

/// The values a message interpolates, for rejections whose rendering differs between
/// languages (contract §16 D8), so a binding can render them its own way.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// `address_overlap`: the two runtime fragment_ids and their address space.
    AddressOverlap {
        /// The fragment named first.
        first: String,
        /// The fragment named second.
        second: String,
        /// The manifest's instance_id.
        instance_id: String,
        /// The shared worker_id.
        worker_id: String,
        /// The shared device.
        device: String,
    },
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
            detail: None,
        }
    }

    /// An error located at `path` in the input document.
    pub fn at(code: Code, message: impl Into<String>, path: &Path<'_>) -> Self {
        Error {
            code,
            message: message.into(),
            path: Some(path.to_pointer()),
            detail: None,
        }
    }

    /// Replaces the location with `path`.
    #[must_use]
    pub fn with_pointer(mut self, pointer: Option<String>) -> Self {
        self.path = pointer;
        self
    }

    /// Attaches the interpolated values.
    #[must_use]
    pub fn with_detail(mut self, detail: Detail) -> Self {
        self.detail = Some(Box::new(detail));
        self
    }

    /// The interpolated values, for the rejections that carry them.
    pub fn detail(&self) -> Option<&Detail> {
        self.detail.as_deref()
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
