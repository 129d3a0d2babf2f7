//! The Mooncake oracle corpus (tests/mooncake/corpus/, written by tests/mooncake/generate.py
//! from upstream's own `mooncake.reshard`): every recorded case through this crate's
//! native Mooncake model. Accepted cases must give upstream's canonical bytes, placement_id,
//! digest and topology_id (and, for placements built by upstream's constructors, the
//! fragment ids upstream generated); rejected cases must give the code that upstream's
//! message maps to, and the pointer where the case records one.

use serde_json::Value;
use weight_manifest::Options;
use weight_manifest_mooncake::{generated_fragment_id, MooncakePlacement, MooncakeStorageManifest};

fn corpus(name: &str) -> Value {
    let path = format!(
        "{}/tests/mooncake/corpus/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
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
        let got = MooncakePlacement::from_json(input.as_bytes(), &Options::default());
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
        let got = MooncakeStorageManifest::from_json(
            str_of(case, "input").as_bytes(),
            &Options::default(),
        );
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

/// Both directions on every placement upstream accepted: importing keeps its fragments
/// (ids, tensors, boxes, ranks, aliases), unless our contract rejects the placement (a
/// replicated tensor or a non-shard dim cut into several boxes: rules of ours, never a
/// Mooncake code); exporting the import with upstream's topology, names, generation, set
/// id and axes given writes upstream's bytes again; exporting with the axes inferred does
/// too for every placement built by upstream's constructors, and for the accepted mutants
/// differs at most in the axes (upstream also accepts `ownership` where the tensor is on
/// every rank, which the export calls `replicated`). Staged placements are left out of the
/// export: ours drops pipeline_stage_id.
#[test]
fn conversion_both_ways_gives_upstream_bytes() {
    use weight_manifest_mooncake::{export, import, AxisKind, ExportOptions};
    let doc = corpus("placement.json");
    let (mut checked, mut inferred, mut not_ours, mut axes_differ) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in doc["cases"].as_array().expect("cases") {
        if case["expect"]["ok"].as_bool() != Some(true) {
            continue;
        }
        let id = str_of(case, "id");
        let expected = str_of(&case["expect"], "canonical");
        let m = MooncakePlacement::from_json(str_of(case, "input").as_bytes(), &Options::default())
            .expect("accepted");
        let staged = m.fragments().any(|f| f.pipeline_stage_id.is_some());
        let imported = match import(&m) {
            Ok(i) => i,
            Err(e) if !e.code().as_str().starts_with("mooncake_") => {
                not_ours += 1;
                continue;
            }
            Err(e) => {
                failures.push(format!("{id}: import: {e}"));
                continue;
            }
        };
        let ours: Vec<_> = imported
            .placement
            .fragments()
            .iter()
            .map(|f| {
                (
                    &f.placement_fragment_id,
                    &f.tensor_id,
                    &f.global_offset,
                    &f.local_shape,
                    f.nbytes,
                    &f.aliases,
                    (f.rank.dp, f.rank.tp, f.rank.pp, f.rank.ep),
                )
            })
            .collect();
        let mut theirs: Vec<_> = m
            .fragments()
            .map(|f| {
                (
                    &f.placement_fragment_id,
                    &f.tensor_id,
                    &f.global_offset,
                    &f.local_shape,
                    f.nbytes,
                    &f.aliases,
                    (f.rank.dp, f.rank.tp, f.rank.pp, f.rank.ep),
                )
            })
            .collect();
        theirs.sort_by(|a, b| a.0.cmp(b.0));
        if ours != theirs {
            failures.push(format!("{id}: imported fragments differ"));
        }
        let t = m.topology();
        let mut options = ExportOptions {
            weight_generation: Some(m.weight_generation()),
            placement_set_id: Some(m.placement_set_id().to_owned()),
            participants: Some(t.participants.clone()),
            ..ExportOptions::default()
        };
        for k in AxisKind::ALL {
            options.sizes.insert(k, t.size(k));
        }
        let inferred_options = options.clone();
        options.parallel_axes = m
            .tensors()
            .iter()
            .map(|t| (t.tensor_id.clone(), t.parallel_axes.clone()))
            .collect();
        if staged {
            continue;
        }
        checked += 1;
        match export(&imported.placement, &options) {
            Ok(e) if e.to_json() == expected => {}
            Ok(_) => failures.push(format!(
                "{id}: export with upstream's axes writes other bytes"
            )),
            Err(e) => failures.push(format!("{id}: export with upstream's axes: {e}")),
        }
        match export(&imported.placement, &inferred_options) {
            Ok(e) if e.to_json() == expected => inferred += 1,
            Ok(e) if id.starts_with("ok/mutant/") => {
                let without_axes = |text: &str| {
                    let mut v: Value = serde_json::from_str(text).expect("JSON");
                    for t in v["tensors"].as_array_mut().expect("tensors") {
                        t["parallel_axes"] = Value::Null;
                    }
                    v["placement_id"] = Value::Null;
                    v
                };
                if without_axes(&e.to_json()) == without_axes(expected) {
                    axes_differ += 1;
                } else {
                    failures.push(format!(
                        "{id}: export with inferred axes differs beyond the axes"
                    ));
                }
            }
            Ok(_) => failures.push(format!(
                "{id}: export with inferred axes writes other bytes"
            )),
            Err(e) => failures.push(format!("{id}: export with inferred axes: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 50 && inferred + axes_differ == checked && axes_differ <= 8 && not_ours <= 12,
        "{checked} {inferred} {axes_differ} {not_ours}"
    );
}

/// Plans between two layouts of one model (tests/mooncake/corpus/plans.json, recorded from
/// upstream's `plan_placement_transfer`, and from a Store manifest of the model by its
/// `plan_stored_transfer_to_target_placement`): both Mooncake documents imported, planned
/// by this project's planner with Mooncake's replica choice, give upstream's regions one to
/// one: tensor, source and target fragment, overlap offset and shape, base offsets, inner
/// bytes, outer loop counts and strides.
#[test]
fn plans_with_mooncakes_replica_choice_equal_upstreams_regions() {
    use weight_manifest::{plan_with_choice, PlanLimits, ReplicaChoice};
    use weight_manifest_mooncake::{import, MooncakeReplicas};
    type Row = (
        String,
        String,
        String,
        Vec<u64>,
        Vec<u64>,
        u64,
        u64,
        u64,
        Vec<u64>,
        Vec<u64>,
        Vec<u64>,
    );
    let doc = corpus("plans.json");
    let layouts = &doc["layouts"];
    let read = |name: &str| {
        MooncakePlacement::from_json(str_of(layouts, name).as_bytes(), &Options::default())
            .expect("layout")
    };
    let ints = |v: &Value| -> Vec<u64> {
        v.as_array()
            .expect("list")
            .iter()
            .map(|n| n.as_u64().expect("u64"))
            .collect()
    };
    let (mut plans, mut regions, mut choice_matters, mut stored) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in doc["cases"].as_array().expect("cases") {
        let id = str_of(case, "id");
        let target = read(str_of(case, "target"));
        let ours_t = import(&target).expect("import").placement;
        // A Store manifest as the source: one holder per tile, any choice reads it.
        let (ours_s, choice) = if str_of(case, "source") == "stored" {
            let stored = MooncakeStorageManifest::from_json(
                str_of(layouts, "stored").as_bytes(),
                &Options::default(),
            )
            .expect("stored");
            (
                weight_manifest_mooncake::import_storage(&stored)
                    .expect("import")
                    .placement,
                None,
            )
        } else {
            let source = read(str_of(case, "source"));
            (
                import(&source).expect("import").placement,
                Some(MooncakeReplicas::new(&source)),
            )
        };
        let limits = PlanLimits {
            max_regions: 1 << 24,
            max_segments: 1 << 30,
            ..PlanLimits::default()
        };
        let mode = choice
            .as_ref()
            .map_or(ReplicaChoice::Balanced, |c| ReplicaChoice::Policy(c));
        let plan = plan_with_choice(&ours_s, &ours_t, &limits, mode).expect("plan");
        let balanced =
            plan_with_choice(&ours_s, &ours_t, &limits, ReplicaChoice::Balanced).expect("plan");
        stored += usize::from(choice.is_none());
        let sources = |p: &weight_manifest::Plan| {
            let mut v: Vec<(String, String)> = p
                .regions()
                .iter()
                .map(|r| (r.target_fragment_id.clone(), r.source_fragment_id.clone()))
                .collect();
            v.sort();
            v
        };
        if sources(&balanced) != sources(&plan) {
            choice_matters += 1;
        }
        let mut ours: Vec<Row> = plan
            .regions()
            .iter()
            .map(|r| {
                (
                    r.tensor_id.clone(),
                    r.target_fragment_id.clone(),
                    r.source_fragment_id.clone(),
                    r.global_offset.clone(),
                    r.shape.clone(),
                    r.source_offset,
                    r.target_offset,
                    r.run_bytes,
                    r.loops.iter().map(|l| l.count).collect(),
                    r.loops.iter().map(|l| l.source_stride).collect(),
                    r.loops.iter().map(|l| l.target_stride).collect(),
                )
            })
            .collect();
        let mut theirs: Vec<Row> = case["regions"]
            .as_array()
            .expect("regions")
            .iter()
            .map(|r| {
                (
                    str_of(r, "tensor_id").to_owned(),
                    str_of(r, "target_fragment_id").to_owned(),
                    str_of(r, "source_fragment_id").to_owned(),
                    ints(&r["overlap_offset"]),
                    ints(&r["overlap_shape"]),
                    r["source_base_offset"].as_u64().expect("u64"),
                    r["target_base_offset"].as_u64().expect("u64"),
                    r["inner_bytes"].as_u64().expect("u64"),
                    ints(&r["outer_loop_counts"]),
                    ints(&r["source_strides"]),
                    ints(&r["target_strides"]),
                )
            })
            .collect();
        ours.sort();
        theirs.sort();
        plans += 1;
        regions += theirs.len();
        if ours != theirs {
            let first = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            failures.push(format!(
                "{id}: {} regions, upstream {}; first difference at {first:?}: ours {:?} upstream {:?}",
                ours.len(),
                theirs.len(),
                first.and_then(|i| ours.get(i)),
                first.and_then(|i| theirs.get(i))
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The default (load-balanced) choice reads other replicas in many of these plans: the
    // comparison above is not satisfied by any choice.
    assert!(
        plans >= 40 && regions >= 6000 && choice_matters >= 10 && stored >= 10,
        "{plans} {regions} {choice_matters} {stored}"
    );
}

/// Every placement upstream accepted validates against the published schema
/// `mooncake-placement.schema.json`, in the form upstream writes it.
#[test]
fn accepted_placements_validate_against_the_published_schema() {
    let schema: Value = serde_json::from_str(
        weight_manifest::schema::published("mooncake-placement.schema.json").expect("published"),
    )
    .expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema");
    let mut checked = 0;
    for case in corpus("placement.json")["cases"].as_array().expect("cases") {
        if case["expect"]["ok"].as_bool() == Some(true) {
            let doc: Value =
                serde_json::from_str(str_of(&case["expect"], "canonical")).expect("JSON");
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {errors:?}", str_of(case, "id"));
            checked += 1;
        }
    }
    assert!(checked >= 50, "{checked}");
}

/// The bytes a region moves: every (source offset, target offset, length) its loops visit,
/// merged where both sides continue contiguously, in source order. Two regions that move
/// the same bytes give the same list whatever the form of their loops.
fn moved_bytes(base: (u64, u64), run: u64, loops: &[(u64, u64, u64)]) -> Vec<(u64, u64, u64)> {
    let mut runs = vec![base];
    for &(count, source_stride, target_stride) in loops {
        runs = runs
            .iter()
            .flat_map(|&(s, t)| {
                (0..count).map(move |i| (s + i * source_stride, t + i * target_stride))
            })
            .collect();
    }
    runs.sort_unstable();
    let mut merged: Vec<(u64, u64, u64)> = Vec::new();
    for (s, t) in runs {
        match merged.last_mut() {
            Some(last) if last.0 + last.2 == s && last.1 + last.2 == t => last.2 += run,
            _ => merged.push((s, t, run)),
        }
    }
    merged
}

/// Plans of 3-D and 4-D tensors (plans.json `nd_cases`, recorded from upstream's
/// `plan_placement_transfer`): outer axes of extent 1 and whole outer axes beside a split
/// one, where this planner writes fewer loops than upstream (it drops extent-1 axes and
/// merges axes that step as one, §17.3). The regions are upstream's one to one (tensor,
/// fragments, overlap) and each moves exactly upstream's bytes (§20.9); the forms differ in
/// many of them, so the comparison is not one of equal loops.
#[test]
fn nd_plans_move_upstreams_bytes_in_fewer_loops() {
    use std::collections::BTreeMap;
    use weight_manifest::{plan_with_choice, PlanLimits, ReplicaChoice};
    use weight_manifest_mooncake::{import, MooncakeReplicas};
    type Key = (String, String, String, Vec<u64>, Vec<u64>);
    /// A region's moved bytes and how many loops it has.
    type Moved = (Vec<(u64, u64, u64)>, usize);
    let doc = corpus("plans.json");
    let layouts = &doc["layouts"];
    let read = |name: &str| {
        MooncakePlacement::from_json(str_of(layouts, name).as_bytes(), &Options::default())
            .expect("layout")
    };
    let ints = |v: &Value| -> Vec<u64> {
        v.as_array()
            .expect("list")
            .iter()
            .map(|n| n.as_u64().expect("u64"))
            .collect()
    };
    let (mut plans, mut regions, mut other_form) = (0, 0, 0);
    for case in doc["nd_cases"].as_array().expect("nd_cases") {
        let id = str_of(case, "id");
        let source = read(str_of(case, "source"));
        let target = import(&read(str_of(case, "target")))
            .expect("import")
            .placement;
        let replicas = MooncakeReplicas::new(&source);
        let ours_s = import(&source).expect("import").placement;
        let plan = plan_with_choice(
            &ours_s,
            &target,
            &PlanLimits::default(),
            ReplicaChoice::Policy(&replicas),
        )
        .expect("plan");
        let mut ours: BTreeMap<Key, Moved> = BTreeMap::new();
        for r in plan.regions() {
            let loops: Vec<(u64, u64, u64)> = r
                .loops
                .iter()
                .map(|l| (l.count, l.source_stride, l.target_stride))
                .collect();
            let key = (
                r.tensor_id.clone(),
                r.target_fragment_id.clone(),
                r.source_fragment_id.clone(),
                r.global_offset.clone(),
                r.shape.clone(),
            );
            let bytes = moved_bytes((r.source_offset, r.target_offset), r.run_bytes, &loops);
            ours.insert(key, (bytes, loops.len()));
        }
        let mut theirs: BTreeMap<Key, Moved> = BTreeMap::new();
        for r in case["regions"].as_array().expect("regions") {
            let counts = ints(&r["outer_loop_counts"]);
            let (s, t) = (ints(&r["source_strides"]), ints(&r["target_strides"]));
            let loops: Vec<(u64, u64, u64)> =
                (0..counts.len()).map(|k| (counts[k], s[k], t[k])).collect();
            let key = (
                str_of(r, "tensor_id").to_owned(),
                str_of(r, "target_fragment_id").to_owned(),
                str_of(r, "source_fragment_id").to_owned(),
                ints(&r["overlap_offset"]),
                ints(&r["overlap_shape"]),
            );
            let base = (
                r["source_base_offset"].as_u64().expect("u64"),
                r["target_base_offset"].as_u64().expect("u64"),
            );
            let run = r["inner_bytes"].as_u64().expect("u64");
            theirs.insert(key, (moved_bytes(base, run, &loops), loops.len()));
        }
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{id}: the regions are not upstream's one to one"
        );
        for (key, (bytes, loops)) in &ours {
            let (upstream_bytes, upstream_loops) = &theirs[key];
            assert_eq!(bytes, upstream_bytes, "{id}: {key:?} moves other bytes");
            other_form += usize::from(loops != upstream_loops);
        }
        plans += 1;
        regions += ours.len();
    }
    assert!(
        plans == 20 && regions >= 500 && other_form >= 100,
        "{plans} plans, {regions} regions, {other_form} in another form"
    );
}
