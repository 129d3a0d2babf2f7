//! `--format json -o FILE` writes FILE for every command that produces a document: the
//! file holds what the text form writes (the oracle), and the JSON report leaves the
//! document out. `project placement`, `project binding` and `bind` once printed the
//! document in the report and wrote no file.

mod cli_support;

use cli_support::{run, scratch, stderr, stdout};
use serde_json::Value as Json;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/moe-ep-pp/");

fn out(tag: &str, name: &str) -> String {
    let path = scratch(tag, name, "");
    std::fs::remove_file(&path).unwrap();
    path
}

/// Runs `args` twice, as text with `-o` and as JSON with `-o`, and returns both files and
/// the JSON report.
fn both(tag: &str, args: &[&str]) -> (String, String, Json) {
    let (text_file, json_file) = (out(tag, "text.json"), out(tag, "json.json"));
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
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let (text, json, report) = both("jo-binding", &["project", "binding", &inventory]);
    assert_eq!(json, text);
    assert!(report.get("binding").is_none(), "{report}");
    assert_eq!(report["ok"], true);
}

#[test]
fn project_placement_writes_the_file() {
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let (text, json, report) = both("jo-placement", &["project", "placement", &inventory]);
    assert_eq!(json, text);
    assert_eq!(report["canonical"], Json::String(text));
}

#[test]
fn bind_writes_the_file() {
    let inventory = format!("{EXAMPLE}runtime-inventory.json");
    let placement = out("jo-bind", "placement.json");
    let projected = run(&["project", "placement", &inventory, "-o", &placement]);
    assert!(projected.status.success(), "{}", stderr(&projected));
    let bindings = format!("{EXAMPLE}binding-inventory.json");
    let (text, json, report) = both("jo-bind", &["bind", &placement, &bindings]);
    assert_eq!(json, text);
    assert!(report.get("runtime").is_none(), "{report}");
    assert!(report["generation"].is_u64(), "{report}");
}
