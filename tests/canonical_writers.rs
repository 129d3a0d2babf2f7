//! The generated canonical writers (`wire::writers`, keys from the schemas) against the
//! serde encoder, an independent path (serde's derived field order, the encoder's own
//! key sort check): every expected document of the conformance corpus is parsed into its
//! wire type and written both ways.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use weight_manifest::canonical::{self, Canonical};
use weight_manifest::wire::{
    BoundPlan, CoverageReport, PlacementManifest, ReshardPlan, RuntimeBindingManifest,
    RuntimeManifest,
};

fn both_ways<T: DeserializeOwned + Serialize + Canonical>(text: &str) {
    let value: T = serde_json::from_str(text).unwrap();
    let mut direct = Vec::new();
    value.write_canonical(&mut direct);
    let serde = canonical::to_vec(&value).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&direct),
        String::from_utf8_lossy(&serde)
    );
    // The expectations are canonical texts themselves.
    assert_eq!(String::from_utf8_lossy(&direct), text);
}

fn fixtures(dir: &Path, out: &mut Vec<serde_json::Value>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fixtures(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
                out.push(value);
            }
        }
    }
}

#[test]
fn generated_writers_agree_with_the_serde_encoder_on_the_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut all = Vec::new();
    fixtures(&root, &mut all);
    let mut counts = [0usize; 6];
    for fixture in &all {
        let Some(expect) = fixture.get("expect") else {
            continue;
        };
        // A Mooncake placement's `canonical` is upstream's document, not this contract's
        // (its writer is held to upstream's bytes by crates/mooncake/tests/mooncake_oracle.rs).
        let op = fixture.get("op").and_then(serde_json::Value::as_str);
        if op.is_some_and(|op| op.starts_with("mooncake.")) {
            continue;
        }
        let text = |key: &str| expect.get(key).and_then(serde_json::Value::as_str);
        if let Some(t) = text("canonical") {
            both_ways::<PlacementManifest>(t);
            counts[0] += 1;
        }
        if let Some(t) = text("runtime") {
            both_ways::<RuntimeManifest>(t);
            counts[1] += 1;
        }
        if let Some(t) = text("binding") {
            both_ways::<RuntimeBindingManifest>(t);
            counts[2] += 1;
        }
        if let Some(t) = text("plan") {
            both_ways::<ReshardPlan>(t);
            counts[3] += 1;
        }
        if let Some(t) = text("report") {
            both_ways::<CoverageReport>(t);
            counts[4] += 1;
        }
        if let Some(t) = text("bound_plan") {
            both_ways::<BoundPlan>(t);
            counts[5] += 1;
        }
    }
    // Each kind is exercised, so an empty corpus cannot pass this test.
    assert!(
        counts.iter().all(|&n| n >= 5),
        "documents per kind: {counts:?}"
    );
}
