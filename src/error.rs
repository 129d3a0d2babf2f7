//! Rejections: a stable [`Code`], the contract's message, and a JSON pointer (or, for
//! `invalid_json`, a [`JsonLocation`] in the text).
//!
//! Errors are data created where the rule lives; rendering (CLI text, JSON, Python
//! `ValueError`, C struct) happens at the edges.

use std::fmt;

pub use crate::code::Code;
use crate::detail::shown;
pub use crate::detail::{Detail, DocumentKind, JsonLocation};
use crate::locate::{Orders, Origin, Site};
use crate::path::Path;

/// One rejection: exactly one code and one message (contract §1.3), and where it is
/// defined (contract §15) the RFC 6901 pointer to the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
    path: Option<String>,
    detail: Option<Box<Detail>>,
    /// Where a list rule found the violation, until the constructor locates it.
    sites: Option<Box<Sites>>,
}

/// The element a list rule rejected and, for a rule on two elements, the other one.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sites {
    at: Option<Site>,
    other: Option<Site>,
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
            sites: None,
        }
    }

    /// An error located at `path` in the input document.
    pub fn at(code: Code, message: impl Into<String>, path: &Path<'_>) -> Self {
        Error {
            code,
            message: message.into(),
            path: Some(path.to_pointer()),
            detail: None,
            sites: None,
        }
    }

    /// An error of a rule on a manifest's lists at `site`, located later by the
    /// constructor ([`Error::locate`]).
    pub(crate) fn at_site(code: Code, message: impl Into<String>, site: Site) -> Self {
        Error {
            sites: Some(Box::new(Sites {
                at: Some(site),
                other: None,
            })),
            ..Error::new(code, message)
        }
    }

    /// Names the other element of a rule on two elements (the detail's `other`).
    #[must_use]
    pub(crate) fn with_other_site(mut self, other: Site) -> Self {
        let sites = self.sites.get_or_insert_with(|| {
            Box::new(Sites {
                at: None,
                other: None,
            })
        });
        sites.other = Some(other);
        self
    }

    /// Turns the sites of a list rule's error into pointers into the document whose lists
    /// `origin` names, the rules having seen them in `orders`. Other errors pass unchanged.
    #[must_use]
    pub(crate) fn locate(mut self, origin: &Origin<'_>, orders: &Orders<'_>) -> Self {
        if let Some(sites) = self.sites.take() {
            if self.path.is_none() {
                self.path = sites.at.and_then(|at| origin.pointer(at, orders));
            }
            if let (Some(other), Some(detail)) = (sites.other, self.detail.as_deref_mut()) {
                detail.set_other(origin.pointer(other, orders));
            }
        }
        self
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

    /// Where in the text the document stops being JSON: present on every `invalid_json`
    /// rejection of the strict reader ([`crate::reader`]), absent on every other error.
    ///
    /// ```
    /// let text = "{\n  \"a\": tru!";
    /// let error = weight_manifest::reader::read_str(text, "placement manifest", &weight_manifest::Limits::default()).unwrap_err();
    /// assert_eq!(error.message(), "placement manifest is not valid JSON");
    /// let at = error.json_location().unwrap();
    /// assert_eq!((at.line, at.column, at.offset), (2, 11, 12));
    /// assert_eq!(
    ///     error.to_string(),
    ///     "error[invalid_json]: placement manifest is not valid JSON at line 2 column 11 (byte 12)"
    /// );
    /// ```
    pub fn json_location(&self) -> Option<JsonLocation> {
        match self.detail() {
            Some(Detail::JsonLocation(at)) => Some(*at),
            _ => None,
        }
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
    /// Renders `error[code]: message at /pointer`, the CLI's format; the document root
    /// (the pointer `""`) reads ` at /`. An error with a [`JsonLocation`] ends in
    /// ` at line 3 column 17 (byte 52)` instead.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.code, self.message)?;
        if let Some(path) = &self.path {
            write!(f, " at {}", shown(path))?;
        }
        if let Some(at) = self.json_location() {
            write!(f, " at {at}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
