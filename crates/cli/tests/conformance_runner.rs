//! The runner catches broken testees: a flipped code, a crash, a skip, a stale
//! known-failures entry. Uses a tiny corpus written to a temporary folder.

#[allow(dead_code)]
mod cli_support;

use std::fs;
use std::time::Duration;

use cli_support::ScratchDir;
use weight_manifest_conformance::{run, RunOptions, Summary};

const EXE: &str = env!("CARGO_BIN_EXE_weight-manifest");

fn corpus(name: &str) -> ScratchDir {
    let root = ScratchDir::new(&format!("runner-{name}"));
    fs::create_dir_all(root.join("placement")).unwrap();
    let empty =
        r#"{"fragments":[],"model_id":"m","placement_id":null,"revision":"r","tensors":[]}"#;
    let cases = [
        (
            "empty",
            serde_json::json!({
                "description": "empty placement",
                "op": "placement.parse",
                "input": { "document": empty },
                "expect": { "ok": true, "digest": "2a889d6332b8b3ef102d1a0a3a49d34c83b56ff0e903df59a6d218d573e74960" }
            }),
        ),
        (
            "empty-model-id",
            serde_json::json!({
                "description": "model_id must be non-empty",
                "op": "placement.parse",
                "input": { "document": empty.replace("\"m\"", "\"\"") },
                "expect": { "ok": false, "code": "empty_string", "path": "/model_id" }
            }),
        ),
        (
            "not-json",
            serde_json::json!({
                "description": "garbage",
                "op": "placement.parse",
                "input": { "document": "{" },
                "expect": { "ok": false, "code": "invalid_json" }
            }),
        ),
    ];
    for (name, case) in cases {
        fs::write(
            root.join(format!("placement/{name}.json")),
            case.to_string(),
        )
        .unwrap();
    }
    root
}

fn run_with(name: &str, testee: &str, known: Option<&str>) -> (Summary, String) {
    let dir = corpus(name);
    let known_failures = known.map(|text| {
        let path = dir.join("known-failures.txt");
        fs::write(&path, text).unwrap();
        path
    });
    let options = RunOptions {
        dir: dir.to_path_buf(),
        testee: Some(testee.to_owned()),
        filter: None,
        known_failures,
        timeout: Duration::from_secs(30),
    };
    let mut out = Vec::new();
    let summary = run(&options, &mut out).unwrap();
    (summary, String::from_utf8(out).unwrap())
}

#[test]
fn the_rust_testee_passes() {
    let (summary, out) = run_with("pass", &format!("{EXE} conformance testee"), None);
    assert_eq!((summary.passed, summary.failed), (3, 0), "{out}");
    assert!(out.ends_with("3 passed, 0 failed\n"), "{out}");
}

#[test]
fn a_testee_that_flips_one_code_is_caught() {
    let testee =
        format!("{EXE} conformance testee | sed -u 's/\"empty_string\"/\"not_an_integer\"/'");
    let (summary, out) = run_with("flip", &testee, None);
    assert_eq!((summary.passed, summary.failed), (2, 1), "{out}");
    assert!(
        out.contains("FAIL placement/empty-model-id: expected code \"empty_string\""),
        "{out}"
    );
}

#[test]
fn a_crashing_testee_fails_every_case() {
    let (summary, out) = run_with("crash", "exit 3", None);
    assert_eq!((summary.passed, summary.failed), (0, 3), "{out}");
}

#[test]
fn skips_are_counted_and_printed() {
    let testee = r#"python3 -c "
import sys, json
for line in sys.stdin:
    print(json.dumps({'id': json.loads(line)['id'], 'skipped': True}), flush=True)
""#;
    let (summary, out) = run_with("skip", testee, None);
    assert_eq!(
        (summary.passed, summary.failed, summary.skipped),
        (0, 0, 3),
        "{out}"
    );
    assert!(out.ends_with("0 passed, 0 failed, 3 skipped\n"), "{out}");
}

#[test]
fn known_failures_are_reported_and_stale_entries_fail() {
    let testee =
        format!("{EXE} conformance testee | sed -u 's/\"empty_string\"/\"not_an_integer\"/'");
    let known = "placement/empty-model-id: flipped on purpose\n";
    let (summary, out) = run_with("known", &testee, Some(known));
    assert_eq!(
        (summary.passed, summary.failed, summary.known),
        (2, 0, 1),
        "{out}"
    );
    assert!(
        out.contains("known failure placement/empty-model-id: flipped on purpose"),
        "{out}"
    );

    let stale = "placement/empty: never failed\n";
    let (summary, out) = run_with("stale", &format!("{EXE} conformance testee"), Some(stale));
    assert_eq!(summary.failed, 1, "{out}");
    assert!(out.contains("but passes"), "{out}");
}

/// A skipped case fails the run (exit 1) unless `WEIGHT_MANIFEST_ALLOW_SKIP` is set.
#[test]
fn skips_fail_the_run_unless_allowed() {
    let dir = corpus("skip-exit");
    let testee = r#"python3 -c "
import sys, json
for line in sys.stdin:
    print(json.dumps({'id': json.loads(line)['id'], 'skipped': True}), flush=True)
""#;
    let run = |allow: bool| {
        let mut command = std::process::Command::new(EXE);
        command
            .args(["conformance", "run", "--dir"])
            .arg(&*dir)
            .args(["--testee", testee]);
        command.env_remove("WEIGHT_MANIFEST_ALLOW_SKIP");
        if allow {
            command.env("WEIGHT_MANIFEST_ALLOW_SKIP", "1");
        }
        command.output().unwrap()
    };
    let refused = run(false);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("WEIGHT_MANIFEST_ALLOW_SKIP"));
    assert_eq!(run(true).status.code(), Some(0));
}
