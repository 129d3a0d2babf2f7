//! `invalid_json` rejections name where the text breaks: `... at line L column C (byte O)`
//! in text output, a `location` member of the error object in `--format json` output.

#[allow(dead_code)]
mod cli_support;

use cli_support::{run, stderr, stdout, ScratchDir};

/// A placement whose third line breaks at its 17th character (byte 52): a missing comma
/// after a string holding a two-byte character, so column and offset differ.
const BROKEN: &str =
    "{\n  \"model_id\": \"mixtral-8x7b-v0\",\n  \"revision\":\"é\"\"tensors\": []\n}\n";

#[test]
fn the_location_is_where_the_text_breaks() {
    // Independently: line 3 starts after the second LF; the offending `"` follows
    // `  "revision":"é"` (16 characters, 17 bytes).
    let line_start = BROKEN.match_indices('\n').nth(1).unwrap().0 + 1;
    let before = "  \"revision\":\"é\"";
    assert!(BROKEN[line_start..].starts_with(before));
    assert_eq!(line_start + before.len(), 52);
    assert_eq!(before.chars().count() + 1, 17);
}

#[test]
fn text_output_ends_with_line_and_column() {
    let dir = ScratchDir::new("json-location-cli");
    let file = dir.write("broken.json", BROKEN.as_bytes());
    let output = run(&["placement", "validate", &file]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stderr(&output).trim_end(),
        "error[invalid_json]: placement manifest is not valid JSON at line 3 column 17 (byte 52)"
    );
}

#[test]
fn json_output_has_a_location_member() {
    let dir = ScratchDir::new("json-location-cli");
    let file = dir.write("broken-json.json", BROKEN.as_bytes());
    let output = run(&["placement", "validate", &file, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "ok": false,
            "error": {
                "code": "invalid_json",
                "message": "placement manifest is not valid JSON",
                "location": { "line": 3, "column": 17, "offset": 52 },
            },
        })
    );
}

#[test]
fn invalid_utf8_and_truncation_are_located() {
    let dir = ScratchDir::new("json-location-cli");
    let file = dir.write("latin1.json", b"{\"model_id\": \"caf\xe9\"}");
    let output = run(&["placement", "validate", &file, "--format", "json"]);
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        body["error"]["location"],
        serde_json::json!({ "line": 1, "column": 18, "offset": 17 })
    );

    let file = dir.write("truncated.json", b"{\n  \"fragments\": [");
    let output = run(&["placement", "validate", &file]);
    assert_eq!(
        stderr(&output).trim_end(),
        "error[invalid_json]: placement manifest is not valid JSON at line 2 column 17 (byte 18)"
    );
}

#[test]
fn other_rejections_have_no_location() {
    let dir = ScratchDir::new("json-location-cli");
    let file = dir.write("array.json", b"[]");
    let output = run(&["placement", "validate", &file, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(body["error"]["code"], "not_an_object");
    assert_eq!(body["error"].get("location"), None);
    let text = run(&["placement", "validate", &file]);
    assert!(!stderr(&text).contains(" line "), "{}", stderr(&text));
}
