//! The Mooncake oracle corpus (tests/mooncake/corpus/, written by tests/mooncake/generate.py
//! from upstream's own `mooncake.reshard`): every recorded case through this crate's
//! native Mooncake model. Accepted cases must give upstream's canonical bytes, placement_id,
//! digest and topology_id (and, for placements built by upstream's constructors, the
//! fragment ids upstream generated); rejected cases must give the code that upstream's
//! message maps to, and the pointer where the case records one.

use serde_json::Value;
use weight_manifest::mooncake::{
    generated_fragment_id, MooncakePlacement, MooncakeStorageManifest,
};

fn corpus(name: &str) -> Value {
    let path = format!(
        "{}/tests/mooncake/corpus/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("corpus is JSON")
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("missing {key}"))
}

#[test]
fn placement_cases_match_upstream() {
    let doc = corpus("placement.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let (mut accepted, mut rejected, mut pointers, mut ids) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in cases {
        let id = str_of(case, "id");
        let input = str_of(case, "input");
        let expect = &case["expect"];
        let got = MooncakePlacement::from_json(input.as_bytes());
        if expect["ok"].as_bool() == Some(true) {
            accepted += 1;
            let p = match got {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{id}: upstream accepts, we reject: {e}"));
                    continue;
                }
            };
            if p.to_json() != str_of(expect, "canonical") {
                failures.push(format!("{id}: canonical text differs"));
            }
            for key in ["placement_id", "digest", "topology_id"] {
                let ours = match key {
                    "placement_id" => p.placement_id().to_owned(),
                    "digest" => p.digest(),
                    _ => p.topology_id().to_owned(),
                };
                if ours != str_of(expect, key) {
                    failures.push(format!("{id}: {key} {ours} != {}", str_of(expect, key)));
                }
            }
            if expect["generated_ids"].as_bool() == Some(true) {
                for f in p.fragments() {
                    ids += 1;
                    if generated_fragment_id(f) != f.placement_fragment_id {
                        failures.push(format!(
                            "{id}: generated id of {} differs",
                            f.placement_fragment_id
                        ));
                    }
                }
            }
        } else {
            rejected += 1;
            let code = str_of(expect, "code");
            match got {
                Ok(_) => failures.push(format!("{id}: upstream rejects ({code}), we accept")),
                Err(e) => {
                    if e.code().as_str() != code {
                        failures.push(format!(
                            "{id}: code {} != {code} (upstream: {}; ours: {e})",
                            e.code(),
                            str_of(expect, "upstream_message")
                        ));
                    }
                    if let Some(pointer) = expect.get("pointer").and_then(Value::as_str) {
                        pointers += 1;
                        if e.path() != Some(pointer) {
                            failures.push(format!("{id}: pointer {:?} != {pointer:?}", e.path()));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        accepted >= 50 && rejected >= 150 && pointers >= 100 && ids >= 500,
        "{accepted} {rejected} {pointers} {ids}"
    );
}

#[test]
fn storage_cases_match_upstream() {
    let doc = corpus("storage.json");
    let cases = doc["cases"].as_array().expect("cases");
    let (mut accepted, mut rejected, mut pointers) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in cases {
        let id = str_of(case, "id");
        let expect = &case["expect"];
        let got = MooncakeStorageManifest::from_json(str_of(case, "input").as_bytes());
        match (expect["ok"].as_bool() == Some(true), got) {
            (true, Ok(m)) => {
                accepted += 1;
                if m.to_json() != str_of(expect, "text") {
                    failures.push(format!(
                        "{id}: text differs:\n{}\n{}",
                        m.to_json(),
                        str_of(expect, "text")
                    ));
                }
                if m.digest() != str_of(expect, "digest") {
                    failures.push(format!("{id}: digest differs"));
                }
            }
            (true, Err(e)) => failures.push(format!("{id}: upstream accepts, we reject: {e}")),
            (false, Ok(_)) => failures.push(format!(
                "{id}: upstream rejects ({}), we accept",
                str_of(expect, "code")
            )),
            (false, Err(e)) => {
                rejected += 1;
                if e.code().as_str() != str_of(expect, "code") {
                    failures.push(format!(
                        "{id}: code {} != {} (upstream: {}; ours: {e})",
                        e.code(),
                        str_of(expect, "code"),
                        str_of(expect, "upstream_message")
                    ));
                }
                if let Some(pointer) = expect.get("pointer").and_then(Value::as_str) {
                    pointers += 1;
                    if e.path() != Some(pointer) {
                        failures.push(format!("{id}: pointer {:?} != {pointer:?}", e.path()));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        accepted >= 15 && rejected >= 100 && pointers >= 80,
        "{accepted} {rejected} {pointers}"
    );
}
