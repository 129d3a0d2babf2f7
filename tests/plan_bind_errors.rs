//! Rejections of `bind_plan` and `read_plan`: bindings of another placement (id or
//! digest, on each side), stale bindings (generation), missing fragments, regions that
//! leave their fragment or overflow, and plan documents that are not plans or whose
//! plan_id does not match. Each with its code, in the documented order.

#[allow(dead_code)]
mod plan_bind_support;
#[allow(dead_code)]
mod plan_support;

use plan_bind_support::bindings::{manifest, site, validated};
use plan_support::build::{tensor, tp_split};

use weight_manifest::wire::{ReshardPlan, RuntimeBindingManifest};
use weight_manifest::{bind_plan, plan, Code, Fences, Placement, PlanLimits};
use weight_manifest::{Options, Plan};

struct Case {
    plan: ReshardPlan,
    source: RuntimeBindingManifest,
    target: RuntimeBindingManifest,
    other: RuntimeBindingManifest,
}

/// The plan of a (possibly edited) wire value, its plan_id derived here from the schema's
/// definition (canonical JSON of the members but plan_id, with `"schema":"weight-plan"`)
/// rather than by the library's plan_id function.
fn planned(wire: &ReshardPlan) -> Plan {
    let mut payload = serde_json::to_value(wire).unwrap();
    let members = payload.as_object_mut().unwrap();
    members.remove("plan_id");
    members.insert("schema".into(), "weight-plan".into());
    let digest = weight_manifest::canonical::hash(&payload).unwrap();
    let mut wire = wire.clone();
    wire.plan_id = format!("sha256:{}", weight_manifest::canonical::hex(&digest));
    Plan::from_wire(&wire).unwrap()
}

fn placements() -> (Placement, Placement) {
    let w = tensor("w", &[4, 6], 2);
    (tp_split("s", &w, 0, 2), tp_split("t", &w, 1, 3))
}

fn case() -> Case {
    let (source, target) = placements();
    let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
    let on = |p: &Placement, instance: &str| {
        manifest(p, instance, 6, &mut |i, _| site(&format!("w{i}"), "cuda:0"))
    };
    Case {
        plan: plan.as_wire().clone(),
        source: on(&source, "train"),
        target: on(&target, "serve"),
        other: on(&placements().0, "x"),
    }
}

fn code(
    plan: &ReshardPlan,
    source: &RuntimeBindingManifest,
    target: &RuntimeBindingManifest,
    fences: Fences,
) -> Code {
    bind_plan(
        &planned(plan),
        &validated(source),
        &validated(target),
        &fences,
    )
    .map(|_| ())
    .unwrap_err()
    .code()
}

#[test]
fn the_case_binds() {
    let c = case();
    let fences = Fences {
        source_generation: Some(6),
        target_generation: Some(6),
    };
    let bound = bind_plan(
        &planned(&c.plan),
        &validated(&c.source),
        &validated(&c.target),
        &fences,
    );
    assert_eq!(bound.unwrap().as_wire().source.lease_id, "lease-train-6");
}

#[test]
fn bindings_of_another_placement_are_rejected_on_each_side() {
    let c = case();
    let none = Fences::default();
    // The target's binding given as the source, and the reverse.
    let swapped = code(&c.plan, &c.target, &c.target, none);
    assert_eq!(swapped, Code::PlanBindingPlacementIdMismatch);
    let swapped = code(&c.plan, &c.source, &c.source, none);
    assert_eq!(swapped, Code::PlanBindingPlacementIdMismatch);
    // The same placement_id, another digest.
    let mut digest = c.source.clone();
    digest.placement_digest = "0".repeat(64);
    assert_eq!(
        code(&c.plan, &digest, &c.target, none),
        Code::PlanBindingDigestMismatch
    );
    let mut digest = c.target.clone();
    digest.placement_digest = "f".repeat(64);
    assert_eq!(
        code(&c.plan, &c.source, &digest, none),
        Code::PlanBindingDigestMismatch
    );
    // The source side is checked first.
    let mut stale_target = c.target.clone();
    stale_target.placement_digest = "0".repeat(64);
    assert_eq!(
        code(&c.plan, &c.target, &stale_target, none),
        Code::PlanBindingPlacementIdMismatch
    );
    // A binding of the source's placement under another instance still binds.
    assert!(bind_plan(
        &planned(&c.plan),
        &validated(&c.other),
        &validated(&c.target),
        &none
    )
    .is_ok());
}

#[test]
fn stale_generations_are_rejected_on_each_side() {
    let c = case();
    let stale = |source_generation, target_generation| {
        code(
            &c.plan,
            &c.source,
            &c.target,
            Fences {
                source_generation,
                target_generation,
            },
        )
    };
    assert_eq!(stale(Some(7), None), Code::PlanBindingGenerationMismatch);
    assert_eq!(stale(None, Some(5)), Code::PlanBindingGenerationMismatch);
    let error = bind_plan(
        &planned(&c.plan),
        &validated(&c.source),
        &validated(&c.target),
        &Fences {
            source_generation: Some(6),
            target_generation: Some(7),
        },
    )
    .unwrap_err();
    assert!(error
        .message()
        .contains("target binding is stale: generation 6, expected 7"));
}

#[test]
fn missing_fragments_are_named() {
    let c = case();
    let mut source = c.source.clone();
    let gone = source.fragments.remove(1).placement_fragment_id;
    let error = bind_plan(
        &planned(&c.plan),
        &validated(&source),
        &validated(&c.target),
        &Fences::default(),
    )
    .unwrap_err();
    assert_eq!(error.code(), Code::PlanBindingFragmentMissing);
    assert!(error.message().contains(&gone), "{}", error.message());
    let mut target = c.target.clone();
    target.fragments.pop();
    assert_eq!(
        code(&c.plan, &c.source, &target, Fences::default()),
        Code::PlanBindingFragmentMissing
    );
}

#[test]
fn regions_outside_their_fragment_are_rejected() {
    let c = case();
    // A bound fragment one byte short (the binding is not checked against the placement).
    for side in [0, 1] {
        let (mut source, mut target) = (c.source.clone(), c.target.clone());
        let shrunk = if side == 0 { &mut source } else { &mut target };
        shrunk.fragments[0].nbytes -= 1;
        let id = shrunk.fragments[0].placement_fragment_id.clone();
        let error = bind_plan(
            &planned(&c.plan),
            &validated(&source),
            &validated(&target),
            &Fences::default(),
        )
        .unwrap_err();
        assert_eq!(error.code(), Code::PlanBindingRangeInvalid);
        assert!(error.message().contains(&id), "{}", error.message());
    }
    // Exactly fitting fragments bind; strides that overflow do not.
    let mut plan = c.plan.clone();
    let region = plan
        .regions
        .iter_mut()
        .find(|r| !r.loops.is_empty())
        .unwrap();
    region.loops[0].source_stride = u64::MAX;
    assert_eq!(
        code(&plan, &c.source, &c.target, Fences::default()),
        Code::PlanBindingRangeInvalid
    );
    let mut plan = c.plan.clone();
    plan.regions[0].target_offset = u64::MAX;
    assert_eq!(
        code(&plan, &c.source, &c.target, Fences::default()),
        Code::PlanBindingRangeInvalid
    );
    // A region whose nbytes is not its runs.
    let mut plan = c.plan.clone();
    plan.regions[0].nbytes += 1;
    assert_eq!(
        code(&plan, &c.source, &c.target, Fences::default()),
        Code::PlanDocumentInvalid
    );
}

#[test]
fn plan_documents_are_read_strictly() {
    let (source, target) = placements();
    let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
    let text = plan.to_json();
    assert_eq!(
        Plan::from_json(text.as_bytes(), &Options::default()).unwrap(),
        plan
    );
    let read = |t: &str| {
        Plan::from_json(t.as_bytes(), &Options::default())
            .unwrap_err()
            .code()
    };
    // One offset changed: the plan_id no longer matches.
    let tampered = text.replacen("\"target_offset\":0", "\"target_offset\":2", 1);
    assert_ne!(tampered, text);
    assert_eq!(read(&tampered), Code::PlanIdMismatch);
    assert_eq!(
        read(&text.replacen("\"model_id\"", "\"model\"", 1)),
        Code::PlanDocumentInvalid
    );
    assert_eq!(
        read(&text.replacen('{', "{\"extra\":1,", 1)),
        Code::PlanDocumentInvalid
    );
    assert_eq!(read("[]"), Code::PlanDocumentInvalid);
    assert_eq!(
        read(&text.replacen('{', "{\"revision\":\"r\",", 1)),
        Code::DuplicateKey
    );
    assert_eq!(read(&text[..text.len() - 1]), Code::InvalidJson);
}

#[test]
fn a_transformed_region_reads_its_sources_quantized_form() {
    // §17.4 step 3.3 for a region carrying a transform (§17.8): its source span is checked
    // against the quantized form of a bfloat16 fragment of nbytes (24 here: 2 x 6
    // elements): FP8 values nbytes / 2 = 12 bytes, scales 2 x nbytes = 48 bytes; the
    // copy keeps the transform and its source address is the offset itself.
    use weight_manifest::wire::{PlanLoop, PlanTransform};
    let c = case();
    let source_nbytes = c.source.fragments[0].nbytes;
    assert_eq!(source_nbytes, 24);
    let first = c.plan.regions[0].source_fragment_id.clone();
    assert_eq!(c.source.fragments[0].placement_fragment_id, first);
    // Two runs of 2 bytes, 4 apart: a span of 6 bytes from the offset.
    let with = |transform: PlanTransform, offset: u64| {
        let mut plan = c.plan.clone();
        let region = &mut plan.regions[0];
        region.transform = Some(transform);
        region.run_bytes = 2;
        region.nbytes = 4;
        region.loops = vec![PlanLoop {
            count: 2,
            source_stride: 4,
            target_stride: 4,
        }];
        region.source_offset = offset;
        plan
    };
    let bind = |plan: &ReshardPlan| {
        bind_plan(
            &planned(plan),
            &validated(&c.source),
            &validated(&c.target),
            &Fences::default(),
        )
    };
    for (transform, limit) in [
        (PlanTransform::Fp8E4m3BlockValues, source_nbytes / 2),
        (PlanTransform::Fp8E4m3BlockScales, 2 * source_nbytes),
    ] {
        let bound = bind(&with(transform, limit - 6)).unwrap();
        let copy = bound
            .pairs()
            .iter()
            .flat_map(|p| &p.copies)
            .find(|copy| copy.transform.is_some())
            .unwrap();
        assert_eq!(copy.transform, Some(transform));
        assert_eq!(copy.source.address, limit - 6);
        assert_eq!(copy.source_fragment_id, first);
        let error = bind(&with(transform, limit - 5)).unwrap_err();
        assert_eq!(error.code(), Code::PlanBindingRangeInvalid);
        assert!(error.message().contains(&first), "{}", error.message());
    }
}
