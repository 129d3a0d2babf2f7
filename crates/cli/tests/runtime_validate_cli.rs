//! `weight-manifest runtime validate --inventory` on every runtime inventory fixture: the
//! text report (which validates without building the manifest) and the JSON report (which
//! builds it) accept and reject alike, with the fixture's code, the same message, and the
//! same counts.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value as Json;

fn validate(document: &str, semantics: Option<&str>, json: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weight-manifest"));
    command.args(["runtime", "validate", "--inventory", "-"]);
    if let Some(value) = semantics {
        command.args(["--address-semantics", value]);
    }
    if json {
        command.args(["--format", "json"]);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(document.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn text_and_json_reports_agree_on_every_runtime_inventory_fixture() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/conformance/runtime_inventory");
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let (mut accepted, mut rejected) = (0, 0);
    for path in entries {
        let fixture: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let input = &fixture["input"];
        let (Some(document), semantics) = (input["document"].as_str(), &input["address_semantics"])
        else {
            continue;
        };
        // A non-string option cannot be given on the command line.
        if !(semantics.is_null() || semantics.is_string()) {
            continue;
        }
        let semantics = semantics.as_str();
        let name = path.display();
        let (plain, json) = (
            validate(document, semantics, false),
            validate(document, semantics, true),
        );
        let ok = fixture["expect"]["ok"].as_bool().unwrap();
        assert_eq!(
            plain.status.success(),
            ok,
            "{name}: {}",
            text(&plain.stderr)
        );
        assert_eq!(json.status.success(), ok, "{name}");
        let report: Json = serde_json::from_slice(&json.stdout).unwrap();
        if ok {
            let runtime: Json = serde_json::from_str(report["runtime"].as_str().unwrap()).unwrap();
            let generation = report["generation"]
                .as_u64()
                .map_or("none".to_owned(), |g| g.to_string());
            let expected = format!(
                "ok: {} tensors, {} fragments, generation {generation}\n",
                runtime["tensors"].as_array().unwrap().len(),
                runtime["fragments"].as_array().unwrap().len()
            );
            assert_eq!(text(&plain.stdout), expected, "{name}");
            accepted += 1;
        } else {
            let code = fixture["expect"]["code"].as_str().unwrap();
            let error = &report["error"];
            assert_eq!(error["code"], code, "{name}");
            let line = text(&plain.stderr);
            let prefix = format!("error[{code}]: {}", error["message"].as_str().unwrap());
            assert!(line.starts_with(&prefix), "{name}: {line}");
            rejected += 1;
        }
    }
    assert!(
        accepted >= 20 && rejected >= 140,
        "{accepted} accepted, {rejected} rejected"
    );
}
