//! The `fence` command on the vectors of `tests/vectors/plan_bind/`: the bound plan's
//! target fence against the vector bindings (the current one holds; the stale one fails
//! at its lease, the other-digest one at its digest) and against held fence documents of
//! one worker, with the exact code, pointer and values of the rejection.

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

fn fence(side: &str, held: &str, extra: &[&str]) -> Output {
    let bound = vector("bound-plan.json");
    let mut args = vec!["fence", &bound, "--side", side, held, "--format", "json"];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
        .args(args)
        .output()
        .unwrap()
}

fn reply(out: &Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_current_bindings_hold_and_changed_ones_fail_at_the_changed_member() {
    let out = fence("target", &vector("target-binding.json"), &["--binding"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        reply(&out),
        serde_json::json!({"ok": true, "side": "target"})
    );
    let out = fence("source", &vector("source-binding.json"), &["--binding"]);
    assert!(out.status.success());

    let out = fence(
        "target",
        &vector("target-binding-stale.json"),
        &["--binding"],
    );
    assert_eq!(out.status.code(), Some(1));
    let error = &reply(&out)["error"];
    assert_eq!(error["code"], "transfer_fence_mismatch");
    assert_eq!(error["path"], "/target/lease_id");
    assert_eq!(
        error["detail"],
        serde_json::json!({"expected": "lease-server-12", "got": "lease-server-11", "other": null})
    );
    let out = fence(
        "target",
        &vector("target-binding-other-digest.json"),
        &["--binding"],
    );
    assert_eq!(reply(&out)["error"]["path"], "/target/placement_digest");
    // A binding of the other side is not this side's.
    let out = fence("source", &vector("target-binding.json"), &["--binding"]);
    assert_eq!(reply(&out)["error"]["path"], "/source/placement_id");
}

#[test]
fn a_workers_held_fence_names_the_worker() {
    let dir = ScratchDir::new("fence-cli");
    let worker = |generation: u64| {
        format!(
            r#"{{"generation":{generation},"instance_id":"server","lease_id":"lease-server-12","placement_digest":null,"placement_id":null,"worker_id":"server-0"}}"#
        )
    };
    let out = fence("target", &dir.write("current.json", worker(12)), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = fence("target", &dir.write("next.json", worker(13)), &[]);
    assert_eq!(out.status.code(), Some(1));
    let error = &reply(&out)["error"];
    assert_eq!(error["code"], "transfer_fence_mismatch");
    assert_eq!(error["path"], "/target/generation");
    assert_eq!(
        error["message"],
        "the target worker server-0 holds generation 13, the bound plan was bound at 12: bind again"
    );
    let out = fence(
        "target",
        &dir.write("bad.json", r#"{"generation":12}"#),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(reply(&out)["error"]["code"], "fence_document_invalid");
}
