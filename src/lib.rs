//! # weight-manifest
//!
//! A schema-first implementation of the framework-neutral model-weight manifest contract.
#![doc = "See `README.md` for the crate layout."]

pub mod code;
pub mod error;
pub mod path;
pub mod value;

pub use code::Code;
pub use error::{Error, Result};
pub use path::Path;
pub use value::{Object, Value};
