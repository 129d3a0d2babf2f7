//! The global `--limit NAME=VALUE` option: applied to the commands that read documents,
//! repeatable, and a usage error (exit 2) for an unknown name or a bad value.

#[allow(dead_code)]
mod cli_support;

use cli_support::{run, stderr, stdout, ScratchDir};
use std::process::Command;

/// Two replicated fragments of one 2-dimensional tensor.
const PLACEMENT: &str = r#"{"fragments":[{"aliases":[],"global_offset":[0,0],"local_shape":[2,2],"nbytes":8,"placement_fragment_id":"a","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"w"},{"aliases":[],"global_offset":[0,0],"local_shape":[2,2],"nbytes":8,"placement_fragment_id":"b","rank":{"dp":1,"ep":0,"pp":0,"tp":0},"tensor_id":"w"}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{"dtype":"bfloat16","expert_id":null,"global_shape":[2,2],"itemsize":2,"layer_id":null,"layout_fingerprint":"fp","partition_dim":null,"shard_dims":null,"tensor_id":"w"}]}"#;

#[test]
fn limits_apply_to_the_commands_that_read_documents() {
    let dir = ScratchDir::new("limits-cli");
    let file = dir.write("placement.json", PLACEMENT);
    let accepted = run(&["placement", "validate", &file, "--limit", "max_fragments=2"]);
    assert_eq!(accepted.status.code(), Some(0), "{}", stderr(&accepted));

    // The option is global: before or after the subcommand, repeatable, last one wins.
    let rejected = run(&[
        "--limit",
        "max_fragments=1",
        "placement",
        "validate",
        &file,
        "--format",
        "json",
    ]);
    assert_eq!(rejected.status.code(), Some(1));
    let body: serde_json::Value = serde_json::from_str(&stdout(&rejected)).unwrap();
    assert_eq!(body["error"]["code"], "limit_exceeded");
    assert_eq!(
        body["error"]["message"],
        "2 fragments exceed max_fragments (1)"
    );
    assert_eq!(body["error"]["path"], "/fragments");

    let dims = run(&[
        "placement",
        "validate",
        &file,
        "--limit",
        "max_dims=2",
        "--limit",
        "max_dims=1",
    ]);
    assert_eq!(dims.status.code(), Some(1));
    assert!(
        stderr(&dims).contains(
            "error[limit_exceeded]: tensor has 2 dimensions, above max_dims (1) at /tensors/0/global_shape"
        ),
        "{}",
        stderr(&dims)
    );

    // coverage and plan read placements too.
    let depth = ["--limit", "max_depth=3"];
    let coverage = run(&[&["coverage", &file][..], &depth[..]].concat());
    assert_eq!(coverage.status.code(), Some(1));
    assert!(
        stderr(&coverage).contains("max_depth (3)"),
        "{}",
        stderr(&coverage)
    );
    let plan = run(&[&["plan", &file, &file][..], &depth[..]].concat());
    assert_eq!(plan.status.code(), Some(1));
    assert!(
        stderr(&plan).contains("limit_exceeded"),
        "{}",
        stderr(&plan)
    );

    let size = run(&[
        "placement",
        "id",
        &file,
        "--limit",
        &format!("max_document_bytes={}", PLACEMENT.len() - 1),
    ]);
    assert_eq!(size.status.code(), Some(1));
    assert!(
        stderr(&size).contains("exceeds max_document_bytes"),
        "{}",
        stderr(&size)
    );
    let strings = run(&["placement", "id", &file, "--limit", "max_string_bytes=8"]);
    assert_eq!(strings.status.code(), Some(1));
    assert!(stderr(&strings).contains("max_string_bytes (8)"));
}

#[test]
fn bad_settings_are_usage_errors() {
    let dir = ScratchDir::new("limits-cli");
    let file = dir.write("placement-usage.json", PLACEMENT);
    for setting in [
        "max_nesting=3",
        "max_depth=513",
        "max_depth=-1",
        "max_dims=many",
        "max_dims",
        "max_tensors=",
    ] {
        let output = run(&["placement", "validate", &file, "--limit", setting]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{setting}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("limit"), "{}", stderr(&output));
    }
    let help = run(&["placement", "validate", "--help"]);
    let help = stdout(&help);
    assert!(help.contains("--limit <NAME=VALUE>"), "{help}");
    assert!(help.contains("max_string_bytes=65536"), "{help}");
}

/// The CLI copies at most `max_document_bytes` + 1 bytes of an input: a large file is
/// mapped and rejected from its full length; standard input stops one byte past the limit.
#[test]
fn oversized_inputs_are_rejected_without_being_copied() {
    // The placement padded with trailing whitespace to 2 MiB (files of 1 MiB and more are
    // mapped).
    let padded = format!("{PLACEMENT}{}", " ".repeat(2 << 20));
    let dir = ScratchDir::new("limits-cli");
    let file = dir.write("padded.json", &padded);
    let accepted = run(&["placement", "validate", &file]);
    assert_eq!(accepted.status.code(), Some(0), "{}", stderr(&accepted));
    let limit = "max_document_bytes=1000";
    let rejected = run(&["placement", "validate", &file, "--limit", limit]);
    assert_eq!(rejected.status.code(), Some(1));
    assert_eq!(
        stderr(&rejected).trim(),
        format!(
            "error[limit_exceeded]: document of {} bytes exceeds max_document_bytes (1000) at /",
            padded.len()
        )
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .args(["placement", "validate", "-", "--limit", limit])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The writer may see a closed pipe once the reader has stopped: that is the point.
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, padded.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).trim(),
        "error[limit_exceeded]: document of 1001 bytes exceeds max_document_bytes (1000) at /"
    );
}
