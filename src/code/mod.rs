//! The stable error codes (docs/contract.md §18).
//!
//! One variant per rule family; [`Code::as_str`] is the wire spelling that conformance
//! fixtures compare. The enum, [`Code::ALL`] and the spellings are generated from
//! `schema/codes.json` by `weight-manifest-codegen`, which writes the C enum and the
//! Python list from the same file; this module adds parsing and display.

use std::fmt;
use std::str::FromStr;

mod generated;

pub use generated::Code;

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string names no code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCode(pub String);

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown error code: {}", self.0)
    }
}

impl std::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCode(s.to_owned()))
    }
}
