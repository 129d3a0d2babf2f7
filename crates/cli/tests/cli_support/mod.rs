//! Running the built `weight-manifest` binary from the CLI's tests.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Writes `text` to `name` in a folder of this test process (`tag` keeps the test files
/// apart) and returns its path.
pub fn scratch(tag: &str, name: &str, text: impl AsRef<[u8]>) -> String {
    let dir = std::env::temp_dir().join(format!("wm-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

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
