//! The content-digest fixtures of `tests/content/` (written by `tests/content/generate.py`
//! from a plain-Python oracle over the C reference xxHash): every box's partial computed
//! here equals the oracle's, the partials combine to the oracle's digest, and each rejecting
//! fixture fails with its code.

use std::path::Path;

use serde_json::Value;
use weight_manifest::wire::ContentPartial;
use weight_manifest_content::manifest::{partial_from_wire, partial_to_wire};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{combine, partial, Fragment, Partial, Tensor};

fn u64s(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn every_fixture_agrees_with_the_oracle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/content");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "fixtures missing in {}", dir.display());
    let (mut accepted, mut rejected) = (0, 0);
    for path in paths {
        let case: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let name = case["name"].as_str().unwrap();
        let shape = u64s(&case["global_shape"]);
        let tensor = Tensor::new(
            case["tensor_id"].as_str().unwrap(),
            &shape,
            case["itemsize"].as_u64().unwrap(),
            case["block_elements"].as_u64().unwrap(),
        )
        .unwrap();
        let data = hex(case["data"].as_str().unwrap());
        let mut boxes: Vec<(Vec<u64>, Vec<u64>, Partial)> = Vec::new();
        for f in case["fragments"].as_array().unwrap() {
            let wire: ContentPartial = serde_json::from_value(f["partial"].clone()).unwrap();
            let (o, l) = (u64s(&f["global_offset"]), u64s(&f["local_shape"]));
            boxes.push((o, l, partial_from_wire(&wire, "").unwrap()));
        }
        let fragments: Vec<Fragment<'_>> = boxes
            .iter()
            .map(|(o, l, p)| Fragment {
                global_offset: o,
                local_shape: l,
                partial: p,
            })
            .collect();
        let result = combine(&tensor, &fragments);
        if let Some(digest) = case["expect"]["digest"].as_str() {
            assert_eq!(
                partial::digest(&tensor, &data).unwrap().to_string(),
                digest,
                "{name}"
            );
            assert_eq!(result.unwrap().to_string(), digest, "{name}");
            for (o, l, expected) in &boxes {
                let buffer = Buffer {
                    bytes: &data,
                    shape: &shape,
                    offset: o,
                };
                let ours = partial::partial_in(&tensor, o, l, buffer).unwrap();
                assert_eq!(
                    partial_to_wire(&ours),
                    partial_to_wire(expected),
                    "{name} {o:?}"
                );
            }
            accepted += 1;
        } else {
            let code = case["expect"]["error"].as_str().unwrap();
            assert_eq!(result.unwrap_err().code().as_str(), code, "{name}");
            rejected += 1;
        }
    }
    assert!(
        accepted >= 5 && rejected >= 4,
        "{accepted} accepting, {rejected} rejecting"
    );
}
