//! `weight-manifest adapt safetensors` end to end: docs/cli.md's three commands on the
//! MiniLM header, the inventory template through the other commands, and rejections.

#[path = "../../adapt/tests/adapt_support/mod.rs"]
mod adapt_support;

use std::path::Path;
use std::process::{Command, Output};

use adapt_support::{root, scratch, write_header_file};

fn cli(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn from_checkpoint_to_validated_placement() {
    let dir = scratch("cli");
    let header =
        std::fs::read(root().join("tests/vectors/minilm/model.safetensors.header.json")).unwrap();
    write_header_file(&dir.join("model.safetensors"), &header);
    let rules = root().join("examples/rules/bert.json");
    let rules = rules.to_str().unwrap();
    let adapt = [
        "adapt",
        "safetensors",
        ".",
        "--rules",
        rules,
        "--tp",
        "2",
        "--model-id",
        "sentence-transformers/all-MiniLM-L6-v2",
        "--revision",
        "main",
        "-o",
        "placement.json",
        "--inventory",
        "inventory.json",
    ];
    let out = cli(&adapt, &dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("adapted 104 tensors into 208 fragments: sha256:"));

    let out = cli(&["placement", "validate", "placement.json"], &dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("tensors: 104, fragments: 208"));

    let out = cli(
        &["runtime", "validate", "--inventory", "inventory.json"],
        &dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = cli(
        &[
            "project",
            "placement",
            "inventory.json",
            "-o",
            "projected.json",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(dir.join("projected.json")).unwrap(),
        std::fs::read(dir.join("placement.json")).unwrap()
    );

    // Without -o the canonical placement goes to standard output.
    let out = cli(&adapt[..11], &dir);
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        std::fs::read(dir.join("placement.json")).unwrap()
    );

    let mut json = adapt[..11].to_vec();
    json.extend(["--format", "json"]);
    let out = cli(&json, &dir);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (value["ok"].as_bool(), value["fragments"].as_u64()),
        (Some(true), Some(208))
    );
}

#[test]
fn rejections_print_code_message_and_pointer() {
    let dir = scratch("cli-errors");
    let header =
        std::fs::read(root().join("tests/vectors/minilm/model.safetensors.header.json")).unwrap();
    write_header_file(&dir.join("model.safetensors"), &header);
    std::fs::write(
        dir.join("rules.json"),
        r#"{"layout_fingerprint": "f", "rules": [{"match": "embeddings\\..*", "action": "replicate"}]}"#,
    )
    .unwrap();
    let base = [
        "adapt",
        "safetensors",
        "model.safetensors",
        "--rules",
        "rules.json",
        "--model-id",
        "m",
        "--revision",
        "r",
    ];
    let out = cli(&base, &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        "error[adapt_unmatched_tensor]: no rule matches tensor encoder.layer.0.attention.output.LayerNorm.bias at /rules"
    );
    let mut json = base.to_vec();
    json.extend(["--format", "json"]);
    let out = cli(&json, &dir);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["error"]["code"], "adapt_unmatched_tensor");
    assert_eq!(value["error"]["path"], "/rules");

    let mut zero = base.to_vec();
    zero.extend(["--tp", "0"]);
    assert_eq!(
        cli(&zero, &dir).status.code(),
        Some(2),
        "clap rejects a zero grid size"
    );
    let mut missing = base.to_vec();
    missing[2] = "nothing.safetensors";
    let out = cli(&missing, &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read"));
}
