//! The weight-manifest conformance suite: the language-neutral fixtures
//! (`tests/conformance/`), the contract's operations ([`ops`], §14) as one dispatcher, the
//! NDJSON testee protocol, and a runner that checks any testee against the fixtures
//! (`tests/conformance/README.md`).

mod compare;
mod content;
mod fixture;
mod glob;
mod known_failures;
pub mod ops;
mod outcome;
mod runner;
mod testee;

pub use compare::{compare, Verdict};
pub use fixture::{load_fixtures, Fixture, GenerationExpectation};
pub use glob::glob_match;
pub use known_failures::{parse_known_failures, KnownFailure, KnownFailuresError};
pub use runner::{run, RunOptions, Summary};
pub use testee::{respond, serve};
