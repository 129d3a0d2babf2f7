//! The wire types, generated from `schema/` by `weight-manifest-codegen`.
//!
//! They are the shapes of the documents, nothing more: values of these types are not
//! validated. The validated domain values ([`crate::Placement`] and friends) hold them.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod generated;
pub use generated::*;

// Generated for every wire type: not every writer has a caller.
#[rustfmt::skip]
#[allow(dead_code, clippy::wildcard_imports, clippy::too_many_arguments)]
pub(crate) mod members;
pub use members::key;

mod typed;
pub(crate) use typed::{check_id, read_typed};
