//! The `plan-bind` command on the vectors of `tests/vectors/plan_bind/`: the bound plan
//! byte for byte, `--format json`, `--inventory`, and the rejections of stale bindings
//! and bindings of another placement (exit code 1 and the `error[code]` line).

#[allow(dead_code)]
mod cli_support;

use std::path::PathBuf;
use std::process::{Command, Output};

use cli_support::ScratchDir;
use serde_json::Value as Json;

fn vector(name: &str) -> String {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/vectors/plan_bind")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .args(args)
        .output()
        .unwrap()
}

fn bind(target: &str, extra: &[&str]) -> Output {
    let (plan, source, target) = (
        vector("plan.json"),
        vector("source-binding.json"),
        vector(target),
    );
    let mut args = vec!["plan-bind", &plan, &source, &target];
    args.extend_from_slice(extra);
    run(&args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_plan_vector_is_the_planners_output() {
    let out = run(&[
        "plan",
        &vector("source-placement.json"),
        &vector("target-placement.json"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        std::fs::read_to_string(vector("plan.json")).unwrap()
    );
}

#[test]
fn binds_the_vectors_byte_for_byte() {
    let expected = std::fs::read_to_string(vector("bound-plan.json")).unwrap();
    let out = bind(
        "target-binding.json",
        &["--source-generation", "3", "--target-generation", "12"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), expected);
    // Written atomically to a file, and as JSON with its id.
    let dir = ScratchDir::new("plan-bind-cli-bound");
    let path = dir.join("bound.json");
    let out = bind(
        "target-binding.json",
        &["-o", path.to_str().unwrap(), "--format", "json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    let answer: Json = serde_json::from_slice(&out.stdout).unwrap();
    let document: Json = serde_json::from_str(&expected).unwrap();
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["bound_plan_id"], document["bound_plan_id"]);
    let pairs: Vec<(&str, &str, u64)> = document["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = p["source_worker_id"].as_str().unwrap();
            (
                s,
                p["target_worker_id"].as_str().unwrap(),
                p["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("trainer-0", "server-0", 16),
            ("trainer-0", "server-1", 8),
            ("trainer-1", "server-0", 16),
            ("trainer-1", "server-1", 8),
        ]
    );
}

#[test]
fn reads_binding_inventories() {
    let dir = ScratchDir::new("plan-bind-cli-inventories");
    let inventory = |name: &str| {
        let mut doc: Json =
            serde_json::from_str(&std::fs::read_to_string(vector(name)).unwrap()).unwrap();
        let generation = doc["generation"].clone();
        for f in doc["fragments"].as_array_mut().unwrap() {
            f["is_contiguous"] = Json::Bool(true);
            f["lease_generation"] = generation.clone();
        }
        let path = dir.join(format!("inventory-{name}"));
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (source, target) = (
        inventory("source-binding.json"),
        inventory("target-binding.json"),
    );
    let out = run(&[
        "plan-bind",
        &vector("plan.json"),
        &source,
        &target,
        "--inventory",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        std::fs::read_to_string(vector("bound-plan.json")).unwrap()
    );
    // A manifest is not an inventory.
    let out = bind("target-binding.json", &["--inventory"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn stale_bindings_are_rejected_with_their_code() {
    let out = bind("target-binding-stale.json", &["--target-generation", "12"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr)
            .starts_with("error[plan_binding_generation_mismatch]: the target binding is stale"),
        "{}",
        text(&out.stderr)
    );
    // Without an expected generation, the generation is not a fence.
    assert!(bind("target-binding-stale.json", &[]).status.success());
    let out = bind(
        "target-binding.json",
        &["--source-generation", "4", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let answer: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["error"]["code"], "plan_binding_generation_mismatch");

    let out = bind("target-binding-other-digest.json", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error[plan_binding_digest_mismatch]:"));
    // The source binding given for the target: another placement.
    let out = bind("source-binding.json", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error[plan_binding_placement_id_mismatch]:"));
}

#[test]
fn a_tampered_plan_and_missing_files_are_told_apart() {
    let plan = std::fs::read_to_string(vector("plan.json")).unwrap();
    let dir = ScratchDir::new("plan-bind-cli-tampered");
    let path = dir.join("tampered.json");
    std::fs::write(&path, plan.replacen("\"nbytes\":8", "\"nbytes\":9", 1)).unwrap();
    let (source, target) = (vector("source-binding.json"), vector("target-binding.json"));
    let out = run(&["plan-bind", path.to_str().unwrap(), &source, &target]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("error[plan_id_mismatch]:"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["plan-bind", "/nonexistent/plan.json", &source, &target]);
    assert_eq!(out.status.code(), Some(2));
}
