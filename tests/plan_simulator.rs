//! The planner, proven byte by byte: the simulator fills every source fragment from a
//! function of global coordinates, executes the plan and checks every target byte.
//! Properties over random tensors (1–4 axes), random source and target tilings, random
//! replica sets and random ranks; then the named reshards (TP split and merge on one
//! axis, cross-axis, EP regrouping, PP re-staging).

#[allow(dead_code)]
mod plan_support;

use std::collections::HashSet;

use plan_support::build::{
    even_split, fragment, placement, placement_json, tensor, tp_split, TensorSpec,
};
use plan_support::scenario::scenario;
use plan_support::sim::execute;
use proptest::prelude::*;
use weight_manifest::{plan, Placement, PlanLimits};

fn total_bytes(p: &Placement) -> u64 {
    p.fragments().iter().map(|f| f.nbytes).sum()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every target byte holds its own coordinate's value and is written exactly once.
    #[test]
    fn plans_move_every_byte(seed in any::<u64>()) {
        let s = scenario(seed);
        let source = placement(&s.tensors, &s.source);
        let target = placement(&s.tensors, &s.target);
        let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
        let copied = execute(plan.as_wire(), &source, &target).map_err(TestCaseError::fail)?;
        prop_assert_eq!(copied, total_bytes(&target));
        prop_assert_eq!(u128::from(copied), plan.stats().bytes);
        let per_rank: u128 = plan.stats().sources.iter().map(|s| s.bytes).sum();
        prop_assert_eq!(per_rank, plan.stats().bytes);
        prop_assert_eq!(plan.stats().regions, plan.regions().len() as u64);
        prop_assert_eq!(
            weight_manifest::canonical::to_string(plan.as_wire()).unwrap(),
            plan.to_json()
        );
    }

    /// The same inputs, given in another order, give the same plan byte for byte.
    #[test]
    fn plans_are_deterministic(seed in any::<u64>()) {
        let s = scenario(seed);
        let source = placement(&s.tensors, &s.source);
        let target = placement(&s.tensors, &s.target);
        let first = plan(&source, &target, &PlanLimits::default()).unwrap();
        let mut reversed = s.source.clone();
        reversed.reverse();
        let mut tensors = s.tensors.clone();
        tensors.reverse();
        let again = plan(&placement(&tensors, &reversed), &target, &PlanLimits::default()).unwrap();
        prop_assert_eq!(first.to_json(), again.to_json());
        prop_assert_eq!(first.plan_id(), again.plan_id());
    }

    /// When the source replicas share one tiling: a region reads from the target's own DP
    /// rank whenever some replica of its tile is there, and each (target fragment,
    /// source tile) overlap is exactly one region.
    #[test]
    fn regions_prefer_the_same_dp_and_are_one_per_overlap(seed in any::<u64>()) {
        let s = scenario(seed);
        prop_assume!(s.shared_source);
        let source = placement(&s.tensors, &s.source);
        let target = placement(&s.tensors, &s.target);
        let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
        let by_id = |p: &Placement, id: &str| {
            p.fragments().iter().find(|f| f.placement_fragment_id == id).cloned().unwrap()
        };
        let mut seen = HashSet::new();
        for region in plan.regions() {
            let chosen = by_id(&source, &region.source_fragment_id);
            let written = by_id(&target, &region.target_fragment_id);
            let same_dp_exists = source.fragments().iter().any(|f| {
                f.tensor_id == chosen.tensor_id
                    && f.global_offset == chosen.global_offset
                    && f.local_shape == chosen.local_shape
                    && f.rank.dp == written.rank.dp
            });
            prop_assert_eq!(same_dp_exists, chosen.rank.dp == written.rank.dp);
            let key = (
                region.target_fragment_id.clone(),
                chosen.global_offset.clone(),
                chosen.local_shape.clone(),
            );
            prop_assert!(seen.insert(key), "two regions for one overlap");
            prop_assert!(region.loops.iter().all(|l| l.count >= 2));
        }
    }
}

fn run(tensors: &[TensorSpec], source: &Placement, target: &Placement) -> weight_manifest::Plan {
    let plan = plan(source, target, &PlanLimits::default()).unwrap();
    let copied = execute(plan.as_wire(), source, target).unwrap();
    assert_eq!(copied, total_bytes(target), "{tensors:?}");
    plan
}

#[test]
fn tp_split_and_merge_on_one_axis() {
    let w = tensor("w", &[8, 6], 2);
    let tp4 = tp_split("a", &w, 0, 4);
    let tp2 = tp_split("b", &w, 0, 2);
    // Merge: each TP2 fragment reads two TP4 rows blocks, each one contiguous run.
    let merge = run(std::slice::from_ref(&w), &tp4, &tp2);
    assert_eq!(merge.regions().len(), 4);
    assert!(merge
        .regions()
        .iter()
        .all(|r| r.loops.is_empty() && r.run_bytes == 24));
    // Split: each TP4 fragment reads half of one TP2 fragment.
    let split = run(&[w], &tp2, &tp4);
    assert_eq!(split.regions().len(), 4);
    assert_eq!(
        split
            .regions()
            .iter()
            .map(|r| r.source_offset)
            .collect::<Vec<_>>(),
        vec![0, 24, 0, 24]
    );
}

#[test]
fn cross_axis_reshard_is_strided_not_per_row() {
    let w = tensor("w", &[6, 12], 4);
    let rows = tp_split("r", &w, 0, 2);
    let cols = tp_split("c", &w, 1, 3);
    let plan = run(&[w], &rows, &cols);
    // 2 x 3 overlaps of [3, 4]: one region each, 3 runs of 16 bytes.
    assert_eq!(plan.regions().len(), 6);
    for r in plan.regions() {
        assert_eq!(r.shape, vec![3, 4]);
        assert_eq!(r.run_bytes, 16);
        assert_eq!(r.loops.len(), 1);
        assert_eq!(
            (
                r.loops[0].count,
                r.loops[0].source_stride,
                r.loops[0].target_stride
            ),
            (3, 48, 16)
        );
    }
    assert_eq!(plan.stats().segments, 18);
}

#[test]
fn ep_regrouping_moves_whole_experts() {
    let experts: Vec<TensorSpec> = (0..8)
        .map(|e| TensorSpec {
            expert: Some(e),
            layer: Some(3),
            ..tensor(&format!("experts.{e}.w"), &[4, 4], 2)
        })
        .collect();
    let on = |ep_size: u64, prefix: &str| {
        let frags: Vec<_> = experts
            .iter()
            .enumerate()
            .map(|(e, t)| {
                fragment(
                    &format!("{prefix}{e}"),
                    &t.id,
                    &[0, 0],
                    &[4, 4],
                    (0, 0, 0, e as u64 / (8 / ep_size)),
                )
            })
            .collect();
        placement(&experts, &frags)
    };
    let (ep4, ep8) = (on(4, "a"), on(8, "b"));
    let plan = run(&experts, &ep4, &ep8);
    assert_eq!(plan.regions().len(), 8);
    assert!(plan
        .regions()
        .iter()
        .all(|r| r.loops.is_empty() && r.nbytes == 32));
    let sources = &plan.stats().sources;
    assert_eq!(sources.len(), 4);
    assert!(sources.iter().all(|s| s.regions == 2 && s.bytes == 64));
}

#[test]
fn pp_restaging_moves_layers_between_stages() {
    let layers: Vec<TensorSpec> = (0..8)
        .map(|l| TensorSpec {
            layer: Some(l),
            ..tensor(&format!("layers.{l}.w"), &[4, 8], 2)
        })
        .collect();
    let staged = |pp: u64, prefix: &str| {
        let mut frags = Vec::new();
        for (l, t) in layers.iter().enumerate() {
            let stage = l as u64 * pp / 8;
            frags.extend(even_split(prefix, t, 1, 2, |i| (0, i, stage, 0)));
        }
        placement(&layers, &frags)
    };
    let plan = run(&layers, &staged(2, "a"), &staged(4, "b"));
    assert_eq!(plan.regions().len(), 16);
    assert_eq!(plan.stats().sources.len(), 4);
}

#[test]
fn replicas_are_balanced_least_loaded_first_in_rank_order() {
    // One tile held by four ranks of dp 1; eight dp-0 targets each read all of it.
    let w = tensor("w", &[4], 1);
    let source: Vec<_> = (0..4)
        .map(|tp| fragment(&format!("s{tp}"), "w", &[0], &[4], (1, 3 - tp, 0, 0)))
        .collect();
    let target: Vec<_> = (0..8)
        .map(|pp| fragment(&format!("t{pp}"), "w", &[0], &[4], (0, 0, pp, 0)))
        .collect();
    let plan = run(
        std::slice::from_ref(&w),
        &placement(std::slice::from_ref(&w), &source),
        &placement(std::slice::from_ref(&w), &target),
    );
    let order: Vec<&str> = plan
        .regions()
        .iter()
        .map(|r| r.source_fragment_id.as_str())
        .collect();
    // Rank order is tp ascending: s3 (tp 0), s2, s1, s0, then round again.
    assert_eq!(order, ["s3", "s2", "s1", "s0", "s3", "s2", "s1", "s0"]);
}

#[test]
fn dp_replicas_with_different_layouts_are_separate_covers() {
    // dp 0 splits rows in 2, dp 1 splits columns in 2: the distinct boxes overlap, but
    // each replica tiles the tensor on its own.
    let w = tensor("w", &[4, 4], 1);
    let mut source = even_split("r", &w, 0, 2, |i| (0, i, 0, 0));
    source.extend(even_split("c", &w, 1, 2, |i| (1, i, 0, 0)));
    let source = placement(std::slice::from_ref(&w), &source);
    let mut target = even_split("t", &w, 1, 2, |i| (1, i, 0, 0));
    target.extend(even_split("u", &w, 1, 2, |i| (0, i, 0, 0)));
    target.extend(even_split("v", &w, 1, 2, |i| (2, i, 0, 0)));
    let target = placement(std::slice::from_ref(&w), &target);
    let plan = run(&[w], &source, &target);
    let reads: Vec<(&str, &str)> = plan
        .regions()
        .iter()
        .map(|r| (r.target_fragment_id.as_str(), r.source_fragment_id.as_str()))
        .collect();
    assert_eq!(
        reads,
        [
            ("tw/0", "cw/0"),
            ("tw/1", "cw/1"),
            ("uw/0", "rw/0"),
            ("uw/0", "rw/1"),
            ("uw/1", "rw/0"),
            ("uw/1", "rw/1"),
            // dp 2 has no replica: the tiling replicas in turn (dp 0, then dp 1).
            ("vw/0", "rw/0"),
            ("vw/0", "rw/1"),
            ("vw/1", "cw/1"),
        ]
    );
}

#[test]
fn the_plan_names_both_placements_and_changes_with_them() {
    let w = tensor("w", &[4, 4], 1);
    let a = tp_split("a", &w, 0, 2);
    let b = tp_split("b", &w, 1, 2);
    let ab = plan(&a, &b, &PlanLimits::default()).unwrap();
    let wire = ab.as_wire();
    assert_eq!(wire.source.placement_id, a.placement_id());
    assert_eq!(wire.source.digest, a.digest());
    assert_eq!(wire.target.placement_id, b.placement_id());
    let ba = plan(&b, &a, &PlanLimits::default()).unwrap();
    assert_ne!(ab.plan_id(), ba.plan_id());
    let text = ab.to_json();
    assert!(text.is_ascii() && !text.contains(' '));
    // The text is canonical: parsing and re-encoding gives the same bytes.
    let parsed: weight_manifest::wire::ReshardPlan = serde_json::from_str(&text).unwrap();
    assert_eq!(&parsed, wire);
    assert_eq!(
        weight_manifest::canonical::to_string(&parsed).unwrap(),
        text
    );
    // The placement JSON helper is what the placements were built from.
    assert!(placement_json(&[], &[]).contains("test-model"));
}
