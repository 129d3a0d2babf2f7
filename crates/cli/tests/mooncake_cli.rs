//! `weight-manifest mooncake export|import|validate`: exit codes, error rendering and the
//! values upstream recorded in the Mooncake oracle corpus (tests/mooncake/corpus/).

mod cli_support;

use cli_support::{run, stderr, stdout, ScratchDir};
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn corpus(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{ROOT}/tests/mooncake/corpus/{name}")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn case(cases: &[Value], id: &str) -> Value {
    cases
        .iter()
        .find(|c| c["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no case {id}"))
}

fn json_out(args: &[&str]) -> (Option<i32>, Value) {
    let out = run(args);
    (
        out.status.code(),
        serde_json::from_str(&stdout(&out)).unwrap(),
    )
}

#[test]
fn validate_reports_upstreams_ids_and_codes() {
    let dir = ScratchDir::new("mooncake-validate");
    let cases = corpus("placement.json");
    let ok = case(&cases, "ok/dp2-pp2-ep2-tp2");
    let file = dir.write("ok.json", ok["input"].as_str().unwrap());
    let out = run(&["mooncake", "validate", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "placement_id: {}",
            ok["expect"]["placement_id"].as_str().unwrap()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "digest: {}",
            ok["expect"]["digest"].as_str().unwrap()
        )),
        "{text}"
    );
    let (code, json) = json_out(&["mooncake", "validate", "--format", "json", &file]);
    assert_eq!(code, Some(0));
    assert_eq!(json["topology_id"], ok["expect"]["topology_id"]);
    // Built by upstream's constructors: every id is the one generated from the contents.
    assert_eq!(json["generated_fragment_ids"], json["fragments"]);
    assert!(json["fragments"].as_u64().unwrap() > 0);

    for id in [
        "reject/tp2/topology-rank-range-tp",
        "reject/tp2/fragment-nbytes-wrong",
        "rules/split-partial-range",
    ] {
        let bad = case(&cases, id);
        let file = dir.write("bad.json", bad["input"].as_str().unwrap());
        let out = run(&["mooncake", "validate", &file]);
        assert_eq!(out.status.code(), Some(1), "{id}");
        let expect = &bad["expect"];
        let line = stderr(&out);
        let code = expect["code"].as_str().unwrap();
        let pointer = expect["pointer"].as_str().unwrap();
        assert!(
            line.starts_with(&format!("error[{code}]: ")),
            "{id}: {line}"
        );
        assert!(
            line.trim_end().ends_with(&format!(" at {pointer}")),
            "{id}: {line}"
        );
        let (exit, json) = json_out(&["mooncake", "validate", "--format", "json", &file]);
        assert_eq!(exit, Some(1));
        assert_eq!(json["ok"], false);
        assert_eq!(json["error"]["code"], code);
        assert_eq!(json["error"]["path"], pointer);
    }
    let out = run(&["mooncake", "validate", "/nonexistent/file.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn validate_reads_store_manifests() {
    let dir = ScratchDir::new("mooncake-storage");
    let cases = corpus("storage.json");
    let ok = case(&cases, "ok/unicode");
    let file = dir.write("ok.json", ok["input"].as_str().unwrap());
    let (code, json) = json_out(&["mooncake", "validate", "--format", "json", &file]);
    assert_eq!(code, Some(0));
    assert_eq!(json["document"], "storage manifest");
    assert_eq!(json["manifest_digest"], ok["expect"]["digest"]);
    let bad = case(&cases, "reject/small/object-overlap-same");
    let file = dir.write("bad.json", bad["input"].as_str().unwrap());
    let (code, json) = json_out(&["mooncake", "validate", "--format", "json", &file]);
    assert_eq!(code, Some(1));
    assert_eq!(json["error"]["code"], "mooncake_storage_object_overlap");
    assert_eq!(json["error"]["path"], bad["expect"]["pointer"]);
}

#[test]
fn export_then_import_gives_back_the_placement() {
    let dir = ScratchDir::new("mooncake-export");
    let placement = format!("{ROOT}/examples/moe-ep-pp/placement.json");
    let exported = dir.write("mooncake.json", "");
    let out = run(&[
        "mooncake",
        "export",
        &placement,
        "--weight-generation",
        "9",
        "-o",
        &exported,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let wire: Value = serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(wire["weight_generation"], 9);
    assert_eq!(wire["resource_kind"], "model_weight");
    assert_eq!(
        run(&["mooncake", "validate", &exported]).status.code(),
        Some(0)
    );

    let back = dir.write("back.json", "");
    let out = run(&["mooncake", "import", &exported, "-o", &back]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("dropped: weight_generation: 9"),
        "{}",
        stderr(&out)
    );
    let canonical = stdout(&run(&["placement", "canonicalize", &placement]));
    assert_eq!(std::fs::read_to_string(&back).unwrap(), canonical);
    let (code, json) = json_out(&["mooncake", "import", "--format", "json", &exported]);
    assert_eq!(code, Some(0));
    assert_eq!(json["canonical"].as_str(), Some(canonical.as_str()));
    assert!(json["dropped"].as_array().unwrap().len() >= 4);
}

#[test]
fn export_rejections_have_codes_and_usage_errors_exit_2() {
    let dir = ScratchDir::new("mooncake-export");
    let placement = format!("{ROOT}/examples/moe-ep-pp/placement.json");
    // A tp size below the placement's coordinates: Mooncake's topology rule.
    let (code, json) = json_out(&[
        "mooncake", "export", &placement, "--size", "tp=1", "--format", "json",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(json["error"]["code"], "mooncake_export_unsupported");
    let overrides = dir.write("overrides.json", r#"{"world_size": 4}"#);
    let (code, json) = json_out(&[
        "mooncake",
        "export",
        &placement,
        "--overrides",
        &overrides,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(json["error"]["code"], "mooncake_export_override_invalid");
    assert_eq!(json["error"]["path"], "/world_size");
    let out = run(&["mooncake", "export", &placement, "--size", "cp=2"]);
    assert_eq!(out.status.code(), Some(2));
    // Our placement given to import: Mooncake's reader rejects it.
    let out = run(&["mooncake", "import", &placement]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with(
            "error[fields_mismatch]: placement manifest schema fields do not match contract at /"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn plan_reads_mooncake_documents_and_reproduces_upstreams_choice() {
    let dir = ScratchDir::new("mooncake-plan");
    let text = std::fs::read_to_string(format!("{ROOT}/tests/mooncake/corpus/plans.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    for id in [
        "tp2-pp1-ep1-dp2->tp4-pp1-ep1-dp2",
        "stored->tp2-pp2-ep2-dp2",
    ] {
        let case = cases
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}"));
        let layout = |name: &Value| {
            doc["layouts"][name.as_str().unwrap()]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let source = dir.write("source.json", layout(&case["source"]));
        let target = dir.write("target.json", layout(&case["target"]));
        let (code, json) = json_out(&[
            "plan",
            &source,
            &target,
            "--replica-choice",
            "mooncake",
            "--format",
            "json",
        ]);
        assert_eq!(code, Some(0), "{id}: {json}");
        let plan: Value = serde_json::from_str(json["plan"].as_str().unwrap()).unwrap();
        let pairs = |regions: &Value, target: &str, source: &str| {
            let mut v: Vec<(String, String)> = regions
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r[target].as_str().unwrap().to_owned(),
                        r[source].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            pairs(&plan["regions"], "target_fragment_id", "source_fragment_id"),
            pairs(&case["regions"], "target_fragment_id", "source_fragment_id"),
            "{id}"
        );
    }
    let out = run(&["plan", "a.json", "b.json", "--replica-choice", "nearest"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `plan` compares the weight generations of two Mooncake documents as upstream does
/// (tests/mooncake/corpus/plans.json `generations`, recorded from `plan_placement_transfer`
/// and `plan_stored_transfer_to_target_placement`): equal ones plan, different ones are
/// `mooncake_generation_mismatch` at the target's `/weight_generation`. A side in this
/// project's format has no generation: nothing to compare.
#[test]
fn plan_compares_weight_generations_as_upstream_does() {
    let dir = ScratchDir::new("mooncake-generation");
    let text = std::fs::read_to_string(format!("{ROOT}/tests/mooncake/corpus/plans.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["generations"].as_object().unwrap();
    assert!(cases.len() >= 6);
    let (mut accepted, mut rejected) = (0, 0);
    for (id, case) in cases {
        let layout = |side: &str| {
            let name = case[side].as_str().unwrap();
            dir.write(
                &format!("{side}.json"),
                doc["layouts"][name].as_str().unwrap(),
            )
        };
        let (source, target) = (layout("source"), layout("target"));
        for choice in ["mooncake", "balanced"] {
            let (code, json) = json_out(&[
                "plan",
                &source,
                &target,
                "--replica-choice",
                choice,
                "--format",
                "json",
            ]);
            let expect = &case["expect"];
            if expect["ok"] == true {
                assert_eq!(code, Some(0), "{id} {choice}: {json}");
                accepted += 1;
            } else {
                assert_eq!(code, Some(1), "{id} {choice}: {json}");
                assert_eq!(json["error"]["code"], expect["code"], "{id}");
                assert_eq!(json["error"]["path"], expect["pointer"], "{id}");
                rejected += 1;
            }
        }
    }
    assert!(accepted >= 6 && rejected >= 6, "{accepted} {rejected}");

    // Our format on one side: imported from generation 2, planned against generation 1.
    let name = "tp2-pp1-ep1-dp1@2";
    let theirs = dir.write("theirs.json", doc["layouts"][name].as_str().unwrap());
    let ours = format!("{theirs}.ours.json");
    let out = run(&["mooncake", "import", &theirs, "-o", &ours]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let other = dir.write(
        "other.json",
        doc["layouts"]["tp4-pp1-ep1-dp1"].as_str().unwrap(),
    );
    for (s, t) in [(&ours, &other), (&other, &ours)] {
        let (code, json) = json_out(&["plan", s, t, "--format", "json"]);
        assert_eq!(code, Some(0), "{json}");
    }
}

/// `mooncake import-binding` and `export-binding`: an accepted Mooncake binding set
/// (tests/mooncake/corpus/bindings.json) becomes our binding and back the same bytes; a
/// rejected one exits 1 with upstream's code.
#[test]
fn bindings_import_and_export_through_the_cli() {
    let dir = ScratchDir::new("mooncake-binding");
    let text =
        std::fs::read_to_string(format!("{ROOT}/tests/mooncake/corpus/bindings.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    let ok = case(cases, "tp2-pp1-ep1-dp2/ok");
    let placement = dir.write(
        "placement.json",
        doc["placements"]["tp2-pp1-ep1-dp2"].as_str().unwrap(),
    );
    let theirs = dir.write("theirs.json", ok["input"].as_str().unwrap());
    let ours = format!("{theirs}.ours.json");
    let out = run(&[
        "mooncake",
        "import-binding",
        &theirs,
        "--placement",
        &placement,
        "-o",
        &ours,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("dropped: participant_id"),
        "{}",
        stderr(&out)
    );
    let (code, json) = json_out(&[
        "mooncake",
        "export-binding",
        &ours,
        "--placement",
        &placement,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{json}");
    assert_eq!(
        json["document"].as_str().unwrap(),
        ok["input"].as_str().unwrap()
    );

    let bad = case(cases, "tp2-pp1-ep1-dp2/stride");
    let file = dir.write("bad.json", bad["input"].as_str().unwrap());
    let (code, json) = json_out(&[
        "mooncake",
        "import-binding",
        &file,
        "--placement",
        &placement,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(json["error"]["code"], bad["expect"]["code"]);
}
