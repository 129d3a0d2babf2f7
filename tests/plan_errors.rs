//! The planner's rejections, each with its code: model and tensor mismatches, tensors
//! without a source cover, limits; and exact arithmetic on huge tensors.

#[allow(dead_code)]
mod plan_support;

use plan_support::build::{
    even_split, fragment, placement, placement_json, tensor, tp_split, TensorSpec,
};
use weight_manifest::Options;
use weight_manifest::{plan, Code, Placement, PlanLimits};

fn code(source: &Placement, target: &Placement, limits: &PlanLimits) -> Code {
    plan(source, target, limits).unwrap_err().code()
}

fn defaults() -> PlanLimits {
    PlanLimits::default()
}

#[test]
fn model_and_revision_must_match() {
    let w = tensor("w", &[4], 1);
    let a = tp_split("a", &w, 0, 2);
    let text = placement_json(
        std::slice::from_ref(&w),
        &even_split("b", &w, 0, 2, |i| (0, i, 0, 0)),
    );
    let other_model =
        Placement::from_json(text.replace("test-model", "other"), &Options::default()).unwrap();
    let other_revision =
        Placement::from_json(text.replace("\"r1\"", "\"r2\""), &Options::default()).unwrap();
    assert_eq!(code(&a, &other_model, &defaults()), Code::PlanModelMismatch);
    assert_eq!(
        code(&other_revision, &a, &defaults()),
        Code::PlanModelMismatch
    );
    assert_eq!(Code::PlanModelMismatch.as_str(), "plan_model_mismatch");
}

#[test]
fn tensor_sets_and_descriptors_must_match() {
    let w = tensor("w", &[4, 4], 2);
    let base = tp_split("a", &w, 0, 2);
    let variants: Vec<(&str, TensorSpec)> = vec![
        ("global_shape", tensor("w", &[4, 8], 2)),
        (
            "layer_id",
            TensorSpec {
                layer: Some(1),
                ..w.clone()
            },
        ),
        (
            "expert_id",
            TensorSpec {
                expert: Some(0),
                ..w.clone()
            },
        ),
    ];
    for (field, other) in variants {
        let target = tp_split("b", &other, 0, 2);
        let error = plan(&base, &target, &defaults()).unwrap_err();
        assert_eq!(error.code(), Code::PlanTensorMismatch, "{field}");
        assert!(error.message().contains(field), "{}", error.message());
    }
    // The builder names the dtype after the itemsize; give the wider one the same name.
    let wide = tensor("w", &[4, 4], 4);
    let text = placement_json(
        std::slice::from_ref(&wide),
        &even_split("b", &wide, 0, 2, |i| (0, i, 0, 0)),
    );
    let target = Placement::from_json(text.replace("u32", "u16"), &Options::default()).unwrap();
    let error = plan(&base, &target, &defaults()).unwrap_err();
    assert!(error.message().contains("itemsize"), "{}", error.message());
    let text = placement_json(
        std::slice::from_ref(&w),
        &even_split("b", &w, 0, 2, |i| (0, i, 0, 0)),
    );
    for (from, to, field) in [
        ("u16", "bf16", "dtype"),
        ("test:v1", "test:v2", "layout_fingerprint"),
    ] {
        let target = Placement::from_json(text.replace(from, to), &Options::default()).unwrap();
        let error = plan(&base, &target, &defaults()).unwrap_err();
        assert_eq!(error.code(), Code::PlanTensorMismatch);
        assert!(error.message().contains(field), "{}", error.message());
    }
    // A tensor on one side only, either way.
    let v = tensor("v", &[2], 1);
    let both = placement(
        &[w.clone(), v.clone()],
        &even_split("a", &w, 0, 2, |i| (0, i, 0, 0)),
    );
    let error = plan(&both, &base, &defaults()).unwrap_err();
    assert_eq!(error.code(), Code::PlanTensorMismatch);
    assert!(error.message().contains("tensor v is only in the source"));
    let error = plan(&base, &both, &defaults()).unwrap_err();
    assert!(error.message().contains("tensor v is only in the target"));
    // Shard dims may differ: that is the point.
    assert!(plan(&base, &tp_split("c", &w, 1, 4), &defaults()).is_ok());
}

#[test]
fn a_tensor_without_a_source_cover_is_named_with_a_coordinate() {
    let w = tensor("w", &[8, 2], 1);
    let gap = placement(
        std::slice::from_ref(&w),
        &[fragment("s0", "w", &[0, 0], &[4, 2], (0, 0, 0, 0))],
    );
    let target = tp_split("t", &w, 0, 2);
    let error = plan(&gap, &target, &defaults()).unwrap_err();
    assert_eq!(error.code(), Code::PlanUncoveredTensor);
    assert!(
        error.message().contains("tensor w") && error.message().contains("[4, 0]"),
        "{}",
        error.message()
    );

    // Overlapping boxes on two DP replicas, neither tiling alone.
    let overlap = placement(
        std::slice::from_ref(&w),
        &[
            fragment("s0", "w", &[0, 0], &[5, 2], (0, 0, 0, 0)),
            fragment("s1", "w", &[3, 0], &[5, 2], (1, 0, 0, 0)),
        ],
    );
    let error = plan(&overlap, &target, &defaults()).unwrap_err();
    assert_eq!(error.code(), Code::PlanUncoveredTensor);
    assert!(
        error.message().contains("dp 0") && error.message().contains("[5, 0]"),
        "{}",
        error.message()
    );

    // No source fragment at all.
    let none = placement(std::slice::from_ref(&w), &[]);
    assert_eq!(code(&none, &target, &defaults()), Code::PlanUncoveredTensor);
    // ... which is fine when the target holds none either.
    let empty = plan(&none, &placement(&[w], &[]), &defaults()).unwrap();
    assert!(empty.regions().is_empty());
}

#[test]
fn limits_fail_closed_at_the_first_excess() {
    let w = tensor("w", &[6, 12], 4);
    let rows = tp_split("r", &w, 0, 2);
    let cols = tp_split("c", &w, 1, 3);
    let full = plan(&rows, &cols, &defaults()).unwrap();
    let (regions, segments) = (full.stats().regions, full.stats().segments);
    assert_eq!((regions, segments), (6, 18));
    let exact = PlanLimits {
        max_regions: regions,
        max_segments: segments,
        ..PlanLimits::default()
    };
    assert_eq!(plan(&rows, &cols, &exact).unwrap(), full);
    for limits in [
        PlanLimits {
            max_regions: regions - 1,
            ..exact
        },
        PlanLimits {
            max_segments: segments - 1,
            ..exact
        },
        PlanLimits {
            max_regions: 0,
            max_segments: 0,
            ..PlanLimits::default()
        },
    ] {
        let error = plan(&rows, &cols, &limits).unwrap_err();
        assert_eq!(error.code(), Code::PlanLimitExceeded);
        assert!(error.message().contains("max_"), "{}", error.message());
    }
}

#[test]
fn huge_tensors_get_exact_offsets_and_hit_the_segment_limit() {
    // 2^32 x 2^31 one-byte elements: one 2^63-byte fragment, then two column halves.
    let w = tensor("w", &[1 << 32, 1 << 31], 1);
    let whole = placement(
        std::slice::from_ref(&w),
        &[fragment(
            "s",
            "w",
            &[0, 0],
            &[1 << 32, 1 << 31],
            (0, 0, 0, 0),
        )],
    );
    let halves = tp_split("t", &w, 1, 2);
    assert_eq!(code(&whole, &halves, &defaults()), Code::PlanLimitExceeded);
    let unlimited = PlanLimits {
        max_regions: u64::MAX,
        max_segments: u64::MAX,
        ..PlanLimits::default()
    };
    let plan = plan(&whole, &halves, &unlimited).unwrap();
    let second = &plan.regions()[1];
    assert_eq!(second.source_offset, 1 << 30);
    assert_eq!(second.run_bytes, 1 << 30);
    assert_eq!(
        (
            second.loops[0].count,
            second.loops[0].source_stride,
            second.loops[0].target_stride
        ),
        (1 << 32, 1 << 31, 1 << 30)
    );
    assert_eq!(second.nbytes, 1 << 62);
    assert_eq!(plan.stats().segments, 1 << 33);
    assert_eq!(plan.stats().bytes, 1 << 63);
}
