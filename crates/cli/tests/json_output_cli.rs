//! `--format json -o FILE` writes FILE for every command that produces a document: the
//! file holds what the text form writes (the oracle), and the JSON report leaves the
//! document out. `project placement`, `project binding` and `bind` once printed the
//! document in the report and wrote no file.

#[allow(dead_code)]
mod cli_support;

use cli_support::{run, stderr, stdout, ScratchDir};
use serde_json::Value as Json;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/moe-ep-pp/");

/// The path of `name` in `dir`, with no file there yet.
fn out(dir: &ScratchDir, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

/// Runs `args` twice, as text with `-o` and as JSON with `-o`, and returns both files and
/// the JSON report.
fn both(dir: &ScratchDir, args: &[&str]) -> (String, String, Json) {
    let (text_file, json_file) = (out(dir, "text.json"), out(dir, "json.json"));
    let text = run(&[args, &["-o", &text_file]].concat());
    assert!(text.status.success(), "{}", stderr(&text));
    let json = run(&[args, &["--format", "json", "-o", &json_file]].concat());
    assert!(json.status.success(), "{}", stderr(&json));
    let report: Json = serde_json::from_str(&stdout(&json)).unwrap();
    let read = |p: &str| std::fs::read_to_string(p).unwrap();
    (read(&text_file), read(&json_file), report)
}

#[test]
fn project_binding_writes_the_file() {
    let dir = ScratchDir::new("jo-binding");
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let (text, json, report) = both(&dir, &["project", "binding", &inventory]);
    assert_eq!(json, text);
    assert!(report.get("binding").is_none(), "{report}");
    assert_eq!(report["ok"], true);
}

#[test]
fn project_placement_writes_the_file() {
    let dir = ScratchDir::new("jo-placement");
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let (text, json, report) = both(&dir, &["project", "placement", &inventory]);
    assert_eq!(json, text);
    assert_eq!(report["canonical"], Json::String(text));
}

#[test]
fn bind_writes_the_file() {
    let dir = ScratchDir::new("jo-bind");
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let placement = out(&dir, "placement.json");
    let projected = run(&["project", "placement", &inventory, "-o", &placement]);
    assert!(projected.status.success(), "{}", stderr(&projected));
    let bindings = format!("{EXAMPLE}binding-inventory.json");
    let (text, json, report) = both(&dir, &["bind", &placement, &bindings]);
    assert_eq!(json, text);
    assert!(report.get("runtime").is_none(), "{report}");
    assert!(report["generation"].is_u64(), "{report}");
}
