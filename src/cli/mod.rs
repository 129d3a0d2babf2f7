//! Argument parsing and dispatch. No contract logic lives here: every command calls the
//! library and renders its result or error.

mod adapt;
mod args;
mod bench_data;
mod commands;
mod coverage;
mod input;
mod limits;
mod output;
mod plan;
mod plan_bind;
mod render;

use std::process::ExitCode;

use clap::Parser;

/// Parses the arguments and runs the command. Exit codes: 0 accepted, 1 rejected (or a
/// conformance failure), 2 usage or I/O error.
pub(crate) fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let outcome =
        limits::from_settings(&cli.limits).and_then(|limits| commands::run(cli.command, &limits));
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
