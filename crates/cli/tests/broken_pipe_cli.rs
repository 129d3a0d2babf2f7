//! A reader that stops early (`weight-manifest coverage P --format json | head -c 1`) ends
//! the program quietly, by SIGPIPE as any Unix tool, and never makes it panic.

#[allow(dead_code)]
mod cli_support;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// A valid placement of `n` replicated one-fragment tensors: its coverage report is far
/// larger than a pipe's buffer.
fn many_tensors(n: usize) -> String {
    let tensors: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"dtype":"float32","expert_id":null,"global_shape":[4],"itemsize":4,"layer_id":null,"layout_fingerprint":"f","partition_dim":null,"shard_dims":null,"tensor_id":"t{i:05}"}}"#
            )
        })
        .collect();
    let fragments: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"aliases":[],"global_offset":[0],"local_shape":[4],"nbytes":16,"placement_fragment_id":"f{i:05}","rank":{{"dp":0,"ep":0,"pp":0,"tp":0}},"tensor_id":"t{i:05}"}}"#
            )
        })
        .collect();
    format!(
        r#"{{"fragments":[{}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{}]}}"#,
        fragments.join(","),
        tensors.join(",")
    )
}

#[test]
fn a_reader_that_stops_early_ends_the_program_without_a_panic() {
    let dir = cli_support::ScratchDir::new("broken-pipe");
    let path = dir.join("placement.json");
    std::fs::write(&path, many_tensors(3000)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .arg("coverage")
        .arg(&path)
        .args(["--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe while the program is still writing.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "ends by SIGPIPE: {:?} {stderr}",
        output.status
    );
}
