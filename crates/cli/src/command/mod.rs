//! One module per command: its arguments (clap) and its run (read, call the library,
//! render).

pub(crate) mod adapt;
pub(crate) mod bench_data;
pub(crate) mod bind;
pub(crate) mod binding;
pub(crate) mod conformance;
pub(crate) mod content;
pub(crate) mod coverage;
pub(crate) mod fence;
pub(crate) mod mooncake;
pub(crate) mod placement;
pub(crate) mod plan;
pub(crate) mod plan_bind;
pub(crate) mod project;
pub(crate) mod runtime;
pub(crate) mod schema;
