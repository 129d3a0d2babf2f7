//! The `plan` and `coverage` commands: outputs, `--stats`, `--require-complete`, limits
//! and exit codes (0 accepted, 1 rejected, 2 usage or I/O).

#[allow(dead_code)]
mod cli_support;
#[allow(dead_code)]
#[path = "../../../tests/plan_support/mod.rs"]
mod plan_support;

use std::process::{Command, Output};

use cli_support::ScratchDir;
use plan_support::build::{even_split, fragment, placement_json, tensor};
use serde_json::Value as Json;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weight-manifest"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Three placements of one tensor written to `dir`: by rows, by columns, and its top half.
fn inputs(dir: &ScratchDir) -> (String, String, String) {
    let w = tensor("w", &[6, 12], 4);
    let rows = dir.write(
        "rows.json",
        placement_json(
            std::slice::from_ref(&w),
            &even_split("r", &w, 0, 2, |i| (0, i, 0, 0)),
        ),
    );
    let cols = dir.write(
        "cols.json",
        placement_json(
            std::slice::from_ref(&w),
            &even_split("c", &w, 1, 3, |i| (1, i, 0, 0)),
        ),
    );
    let half = dir.write(
        "half.json",
        placement_json(&[w], &[fragment("h", "w", &[0, 0], &[3, 12], (0, 0, 0, 0))]),
    );
    (rows, cols, half)
}

#[test]
fn plan_writes_the_plan_and_prints_stats() {
    let dir = ScratchDir::new("plan-cli-stats");
    let (rows, cols, _) = inputs(&dir);
    let out = dir.join("plan.json");
    let result = run(&["plan", &rows, &cols, "-o", out.to_str().unwrap(), "--stats"]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let plan: Json = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(plan["regions"].as_array().unwrap().len(), 6);
    let stats = text(&result.stderr);
    assert!(
        stats.contains("regions: 6, segments: 18, bytes: 288"),
        "{stats}"
    );
    assert!(
        stats.contains("dp 0 tp 0 pp 0 ep 0: 3 regions, 144 bytes"),
        "{stats}"
    );
    assert!(stats.contains(plan["plan_id"].as_str().unwrap()));

    // Standard output without -o: the same bytes.
    let again = run(&["plan", &rows, &cols]);
    assert_eq!(again.stdout, std::fs::read(&out).unwrap());

    let json = run(&["plan", &rows, &cols, "--stats", "--format", "json"]);
    let body: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["plan_id"], plan["plan_id"]);
    assert_eq!(body["stats"]["regions"], 6);
    assert_eq!(body["stats"]["sources"][1]["rank"]["tp"], 1);
    assert_eq!(
        body["plan"].as_str().unwrap().as_bytes(),
        std::fs::read(&out).unwrap()
    );
}

#[test]
fn plan_rejections_exit_1_with_their_code() {
    let dir = ScratchDir::new("plan-cli-rejections");
    let (rows, cols, half) = inputs(&dir);
    let limited = run(&["plan", &rows, &cols, "--max-regions", "5"]);
    assert_eq!(limited.status.code(), Some(1));
    assert!(text(&limited.stderr).starts_with("error[plan_limit_exceeded]"));
    let segments = run(&[
        "plan",
        &rows,
        &cols,
        "--max-segments",
        "17",
        "--format",
        "json",
    ]);
    let body: Json = serde_json::from_slice(&segments.stdout).unwrap();
    assert_eq!(body["error"]["code"], "plan_limit_exceeded");
    let uncovered = run(&["plan", &half, &cols]);
    assert_eq!(uncovered.status.code(), Some(1));
    assert!(text(&uncovered.stderr).contains("error[plan_uncovered_tensor]: tensor w"));
    let missing = run(&["plan", &rows, "/nonexistent/placement.json"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn coverage_summarises_and_requires_completeness_on_request() {
    let dir = ScratchDir::new("plan-cli-coverage");
    let (rows, _, half) = inputs(&dir);
    let complete = run(&["coverage", &rows, "--require-complete"]);
    assert!(complete.status.success());
    assert!(text(&complete.stdout).contains("tensors: 1, complete: 1, with gaps: 0, ambiguous: 0"));

    let report = dir.join("report.json");
    let partial = run(&["coverage", &half, "-o", report.to_str().unwrap()]);
    assert!(partial.status.success(), "an incomplete placement is valid");
    let out = text(&partial.stdout);
    assert!(
        out.contains("tensor w has gaps: 36 elements uncovered, the first at [3, 0]"),
        "{out}"
    );
    assert!(
        out.contains("dp 0: alone complete for 0 of 1 tensors"),
        "{out}"
    );
    let saved: Json = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(saved["tensors"][0]["status"], "gaps");

    let required = run(&["coverage", &half, "--require-complete"]);
    assert_eq!(required.status.code(), Some(1));
    assert!(text(&required.stderr).starts_with("error[coverage_incomplete]"));
    let json = run(&["coverage", &half, "--require-complete", "--format", "json"]);
    let body: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(body["error"]["code"], "coverage_incomplete");
    let ok = run(&["coverage", &half, "--format", "json"]);
    let body: Json = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(body["tensors_with_gaps"], 1);
    let inner: Json = serde_json::from_str(body["report"].as_str().unwrap()).unwrap();
    assert_eq!(inner["tensors"][0]["uncovered_elements"], "36");
}

#[test]
fn replica_choice_spread_reads_every_source_replica_evenly() {
    let dir = ScratchDir::new("plan-cli-spread");
    // Four whole copies of `w` (DP 0..4, rows cut in 8) into two (DP 0..2): balanced reads
    // each target from its own dp (two sources send a copy each), spread reads a quarter
    // of the total from each of the four.
    let w = tensor("w", &[8, 4], 2);
    let source: Vec<_> = (0..4u64)
        .flat_map(|dp| even_split(&format!("s{dp}/"), &w, 0, 8, move |_| (dp, 0, 0, 0)))
        .collect();
    let target: Vec<_> = (0..2u64)
        .map(|dp| fragment(&format!("t{dp}"), "w", &[0, 0], &[8, 4], (dp, 0, 0, 0)))
        .collect();
    let source = dir.write(
        "spread-source.json",
        placement_json(std::slice::from_ref(&w), &source),
    );
    let target = dir.write(
        "spread-target.json",
        placement_json(std::slice::from_ref(&w), &target),
    );
    let sent = |choice: &str| -> Vec<u64> {
        let out = run(&[
            "plan",
            &source,
            &target,
            "--stats",
            "--format",
            "json",
            "--replica-choice",
            choice,
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let json: Json = serde_json::from_slice(&out.stdout).unwrap();
        json["stats"]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["bytes"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(sent("balanced"), vec![64, 64]);
    assert_eq!(sent("spread"), vec![32, 32, 32, 32]);
}

/// The inputs and expectation of a conformance fixture (the oracle's answer).
fn fixture(id: &str) -> Json {
    let path = format!(
        "{}/../../tests/conformance/{id}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn plan_quantization_flag_gives_the_oracles_plan_and_rejections() {
    let dir = ScratchDir::new("plan-cli-quantization");
    let ok = fixture("quantize/tp-rows-2-to-4");
    let input =
        |f: &Json, key: &str, name: &str| dir.write(name, f["input"][key].as_str().unwrap());
    let (source, target, spec) = (
        input(&ok, "source", "q-source.json"),
        input(&ok, "target", "q-target.json"),
        input(&ok, "quantization", "q-spec.json"),
    );
    let out = run(&["plan", &source, &target, "--quantization", &spec]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim_end(),
        ok["expect"]["plan"].as_str().unwrap()
    );

    let bad = fixture("quantize/target-cuts-rows");
    let target = input(&bad, "target", "q-cut.json");
    let spec = input(&bad, "quantization", "q-spec-cut.json");
    let json = run(&[
        "plan",
        &source,
        &target,
        "--quantization",
        &spec,
        "--format",
        "json",
    ]);
    assert_eq!(json.status.code(), Some(1));
    let body: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(body["error"]["code"], "quantization_block_cut", "{body}");
    assert_eq!(body["error"]["path"], "/tensors/0/tensor_id", "{body}");

    let spread = run(&[
        "plan",
        &source,
        &target,
        "--quantization",
        &spec,
        "--replica-choice",
        "spread",
    ]);
    assert_eq!(spread.status.code(), Some(2));
}
