//! The published schemas: the embedded list is exactly `schema/dist/`, and plans and
//! coverage reports validate against their published schemas.

#[allow(dead_code)]
mod plan_support;

use std::collections::BTreeSet;
use std::path::Path;

use plan_support::build::{fragment, placement, tensor, tp_split};
use serde_json::Value as Json;
use weight_manifest::schema::{published, PUBLISHED};
use weight_manifest::{coverage, plan, PlanLimits};

#[test]
fn the_published_list_is_exactly_the_dist_folder() {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/dist");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".schema.json"))
        .collect();
    let listed: BTreeSet<String> = PUBLISHED
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    assert_eq!(listed, on_disk);
    assert_eq!(listed.len(), PUBLISHED.len(), "no file is listed twice");
    for (name, text) in PUBLISHED {
        assert_eq!(
            std::fs::read_to_string(dist.join(name)).unwrap(),
            *text,
            "{name}"
        );
    }
}

fn validate(schema: &str, document: &str) {
    let schema: Json = serde_json::from_str(published(schema).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let value: Json = serde_json::from_str(document).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn plans_and_reports_match_their_published_schemas() {
    let w = tensor("w", &[6, 12], 4);
    let rows = tp_split("r", &w, 0, 2);
    let cols = tp_split("c", &w, 1, 3);
    let plan = plan(&rows, &cols, &PlanLimits::default()).unwrap();
    validate("plan.schema.json", &plan.to_json());
    validate(
        "coverage.schema.json",
        &coverage(&rows, &weight_manifest::Limits::default())
            .unwrap()
            .to_json(),
    );
    let holes = placement(
        &[w.clone(), tensor("v", &[3], 1)],
        &[
            fragment("a", "w", &[0, 0], &[4, 12], (0, 0, 0, 0)),
            fragment("b", "w", &[3, 0], &[3, 12], (1, 0, 0, 0)),
        ],
    );
    validate(
        "coverage.schema.json",
        &coverage(&holes, &weight_manifest::Limits::default())
            .unwrap()
            .to_json(),
    );
}
