//! Running the built `weight-manifest` binary from the CLI's tests, and the folders they
//! write their files in.

use std::process::{Command, Output};

#[path = "../../../../tests/scratch_support/mod.rs"]
mod scratch_support;
#[allow(unused_imports)] // not every test including this module makes folders
pub use scratch_support::ScratchDir;

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .args(args)
        .output()
        .unwrap()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}
