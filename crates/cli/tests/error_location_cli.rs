//! A rejection points at the value as the user wrote it, and says the numbers behind the
//! rule (issue 24): on the bundled example with its fragments in reverse order (so input
//! positions are not the sorted ones the rules run on), an `nbytes` off by one points at
//! that fragment's `nbytes` with expected and got, in text (a second line) and in
//! `--format json`. The expectations are computed from the document here.

mod cli_support;

use cli_support::{run, stderr, stdout, ScratchDir};
use serde_json::{json, Value};

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/moe-ep-pp/placement.json"
);

/// The example with its fragments reversed and fragment `index` one byte too large, and
/// the byte size that fragment should have.
fn off_by_one(index: usize) -> (String, u64) {
    let mut document: Value = serde_json::from_str(&std::fs::read_to_string(EXAMPLE).unwrap())
        .expect("the example is JSON");
    document["placement_id"] = Value::Null;
    let fragments = document["fragments"].as_array_mut().unwrap();
    fragments.reverse();
    let tensor_id = fragments[index]["tensor_id"].clone();
    let extent: u64 = fragments[index]["local_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_u64().unwrap())
        .product();
    let nbytes = fragments[index]["nbytes"].as_u64().unwrap();
    fragments[index]["nbytes"] = json!(nbytes + 1);
    let tensor = document["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tensor_id"] == tensor_id)
        .unwrap();
    let expected = extent * tensor["itemsize"].as_u64().unwrap();
    (document.to_string(), expected)
}

#[test]
fn an_nbytes_off_by_one_points_at_the_fragment_as_written() {
    let index = 5;
    let (text, expected) = off_by_one(index);
    let dir = ScratchDir::new("error-location");
    let path = dir.write("placement.json", &text);

    let output = run(&["placement", "validate", &path]);
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<String> = stderr(&output).lines().map(str::to_owned).collect();
    assert!(
        lines[0].starts_with("error[nbytes_mismatch]: ")
            && lines[0].ends_with(&format!(" at /fragments/{index}/nbytes")),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        format!("  expected {expected}, got {}", expected + 1)
    );

    let output = run(&["placement", "validate", &path, "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let error = &json["error"];
    assert_eq!(error["path"], format!("/fragments/{index}/nbytes"));
    assert_eq!(
        error["detail"],
        json!({ "expected": expected, "got": expected + 1, "other": null })
    );
}
