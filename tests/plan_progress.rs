//! `plan_with_progress`: it reports each tensor the target holds once, in order, with
//! their number, never for a pair rejected before the search, and plans what `plan` plans.

#[allow(dead_code)]
mod plan_support;

use plan_support::build::{even_split, placement, tensor, FragmentSpec, TensorSpec};
use weight_manifest::plan::plan_with_progress;
use weight_manifest::{plan, Code, Placement, Plan, PlanLimits};

fn tensors() -> Vec<TensorSpec> {
    vec![
        tensor("a", &[4, 4], 2),
        tensor("b", &[8], 1),
        tensor("c", &[6, 2], 4),
    ]
}

/// Every tensor split into `parts` rows over TP ranks, except those `skip` names.
fn split(prefix: &str, parts: u64, skip: &[&str]) -> Placement {
    let tensors = tensors();
    let fragments: Vec<FragmentSpec> = tensors
        .iter()
        .filter(|t| !skip.contains(&t.id.as_str()))
        .flat_map(|t| even_split(prefix, t, 0, parts, |i| (0, i, 0, 0)))
        .collect();
    placement(&tensors, &fragments)
}

/// The plan (or its error code) and every `(done, total)` reported.
fn observed(source: &Placement, target: &Placement) -> (Result<String, Code>, Vec<(usize, usize)>) {
    let mut calls = Vec::new();
    let result = plan_with_progress(source, target, &PlanLimits::default(), |done, total| {
        calls.push((done, total));
    });
    (result.map(Plan::into_json).map_err(|e| e.code()), calls)
}

#[test]
fn each_tensor_is_reported_once_and_the_plan_is_the_same() {
    let (source, target) = (split("s", 2, &[]), split("t", 1, &[]));
    let (planned, calls) = observed(&source, &target);
    assert_eq!(calls, [(1, 3), (2, 3), (3, 3)]);
    let expected = plan(&source, &target, &PlanLimits::default()).unwrap();
    assert_eq!(planned.unwrap(), expected.into_json());
}

#[test]
fn a_tensor_the_target_does_not_hold_is_not_counted() {
    let (source, target) = (split("s", 2, &[]), split("t", 1, &["b"]));
    let (planned, calls) = observed(&source, &target);
    assert!(planned.is_ok());
    assert_eq!(calls, [(1, 2), (2, 2)]);
}

#[test]
fn a_pair_rejected_before_the_search_reports_nothing() {
    let (source, target) = (split("s", 2, &["c"]), split("t", 1, &[]));
    let (planned, calls) = observed(&source, &target);
    assert_eq!(planned.unwrap_err(), Code::PlanUncoveredTensor);
    assert_eq!(calls, []);
}
