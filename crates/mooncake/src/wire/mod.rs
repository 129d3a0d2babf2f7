//! Mooncake's wire types, generated from `schema/mooncake-*.schema.json` by
//! `weight-manifest-codegen` (the core's `wire` holds the contract's documents only): their
//! member names (`key`) and field lists (`FIELDS`, `REQUIRED`), which the readers check
//! documents against. Never edited by hand.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs, dead_code)]
mod generated;
pub(crate) use generated::*;

// Generated for every wire type: not every list has a reader.
#[rustfmt::skip]
#[allow(dead_code, clippy::wildcard_imports)]
mod writers;
pub(crate) use writers::key;
