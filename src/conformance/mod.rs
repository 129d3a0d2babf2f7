//! Conformance: the language-neutral fixtures (`tests/conformance/`), the NDJSON testee
//! protocol, and a runner that checks any testee against the fixtures
//! (`shared/spec/conformance.md`, `tests/conformance/README.md`).

mod compare;
mod fixture;
mod glob;
mod known_failures;
mod runner;
mod testee;

pub use compare::{compare, Verdict};
pub use fixture::{load_fixtures, Fixture};
pub use glob::glob_match;
pub use known_failures::{parse_known_failures, KnownFailure};
pub use runner::{run, RunOptions, Summary};
pub use testee::{respond, serve};
