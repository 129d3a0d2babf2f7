//! Mooncake's per-participant runtime bindings (tests/mooncake/corpus/bindings.json,
//! written by tests/mooncake/generate.py: upstream's `WeightRuntimeBindingManifest`s built
//! from this project's JSON form of them and checked by upstream's
//! `validate_runtime_bindings`): every case read and validated here gives upstream's
//! answer and code; an accepted binding set converts to this project's binding and back
//! to the same bindings (when each view is its whole storage), and our binding converts to
//! Mooncake's and back to itself.

use serde_json::Value;
use weight_manifest::Options;
use weight_manifest::{bind, Binding};
use weight_manifest_mooncake::{
    export_binding, import, import_binding, validate_bindings, MooncakeBinding, MooncakePlacement,
};

fn corpus() -> Value {
    let path = format!(
        "{}/tests/mooncake/corpus/bindings.json",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("corpus is JSON")
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("missing {key}"))
}

#[test]
fn every_binding_case_gives_upstreams_answer() {
    let doc = corpus();
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 25);
    let (mut accepted, mut rejected) = (0, 0);
    let mut failures = Vec::new();
    for case in cases {
        let id = str_of(case, "id");
        let placement = MooncakePlacement::from_json(
            str_of(&doc["placements"], str_of(case, "placement")).as_bytes(),
            &Options::default(),
        )
        .expect("placement");
        let got =
            MooncakeBinding::list_from_json(str_of(case, "input").as_bytes(), &Options::default())
                .and_then(|list| validate_bindings(&placement, &list));
        let expect = &case["expect"];
        match (expect["ok"].as_bool() == Some(true), got) {
            (true, Ok(())) => accepted += 1,
            (true, Err(e)) => failures.push(format!("{id}: upstream accepts, we reject: {e}")),
            (false, Ok(())) => failures.push(format!("{id}: upstream rejects, we accept")),
            (false, Err(e)) => {
                rejected += 1;
                if e.code().as_str() != str_of(expect, "code") {
                    failures.push(format!(
                        "{id}: {} != {}",
                        e.code().as_str(),
                        str_of(expect, "code")
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(accepted >= 6 && rejected >= 20, "{accepted} {rejected}");
}

#[test]
fn bindings_convert_both_ways_without_loss() {
    let doc = corpus();
    let mut round_trips = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let id = str_of(case, "id");
        if !id.ends_with("/ok") {
            continue;
        }
        let m = MooncakePlacement::from_json(
            str_of(&doc["placements"], str_of(case, "placement")).as_bytes(),
            &Options::default(),
        )
        .unwrap();
        let input = str_of(case, "input");
        let theirs =
            MooncakeBinding::list_from_json(input.as_bytes(), &Options::default()).unwrap();
        let imported = import_binding(&theirs, &m).unwrap();
        assert!(!imported.dropped.is_empty());
        // Ours binds our import of the placement.
        let ours = Binding::from_wire(&imported.binding).unwrap();
        let placement = import(&m).unwrap().placement;
        bind(&placement, &ours).unwrap();
        // Back to Mooncake's: upstream's own bindings, byte for byte.
        let again = export_binding(&ours, &m).unwrap();
        assert_eq!(MooncakeBinding::list_to_json(&again), input, "{id}");
        // And ours -> Mooncake's -> ours is our binding.
        let back = import_binding(&again, &m).unwrap();
        assert_eq!(back.binding, imported.binding, "{id}");
        round_trips += 1;
    }
    assert!(round_trips >= 3);
}

#[test]
fn differing_identities_cannot_be_one_binding_of_ours() {
    let doc = corpus();
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "tp2-pp1-ep1-dp2/ok-generation-differs")
        .expect("case");
    let m = MooncakePlacement::from_json(
        str_of(&doc["placements"], str_of(case, "placement")).as_bytes(),
        &Options::default(),
    )
    .unwrap();
    let list =
        MooncakeBinding::list_from_json(str_of(case, "input").as_bytes(), &Options::default())
            .unwrap();
    // Upstream accepts it (recorded above); ours has one generation.
    validate_bindings(&m, &list).unwrap();
    let e = import_binding(&list, &m).unwrap_err();
    assert_eq!(e.code().as_str(), "mooncake_binding_inexpressible");
    assert_eq!(e.path(), Some("/1/generation"));
}
