//! Coverage reports against a brute-force oracle that visits every element: status,
//! exact uncovered volume, the first uncovered coordinate, replica counts and per-DP
//! status; plus `require_complete` and huge tensors.

#[allow(dead_code)]
mod oracle;
#[allow(dead_code)]
mod plan_support;

use std::collections::BTreeSet;

use plan_support::build::{fragment, placement, tensor, FragmentSpec, TensorSpec};
use plan_support::scenario::{scenario, tiling, Rng};
use proptest::prelude::*;
use weight_manifest::wire::{CoverageStatus, CoverageTensor};
use weight_manifest::{coverage, Code};

type Boxed = (Vec<u64>, Vec<u64>);

/// (status, uncovered count, first uncovered point) of distinct `boxes`, by visiting
/// every element in row-major (= lexicographic) order.
fn oracle(shape: &[u64], boxes: &[Boxed]) -> (CoverageStatus, u64, Option<Vec<u64>>) {
    let (mut uncovered, mut first, mut overlap) = (0, None, false);
    for (point, hits) in plan_support::brute::cover_counts(shape, boxes) {
        overlap |= hits > 1;
        if hits == 0 {
            uncovered += 1;
            first.get_or_insert(point);
        }
    }
    let status = if overlap {
        CoverageStatus::Ambiguous
    } else if uncovered > 0 {
        CoverageStatus::Gaps
    } else {
        CoverageStatus::Complete
    };
    (status, uncovered, first)
}

fn distinct(fragments: &[&FragmentSpec]) -> Vec<Boxed> {
    let set: BTreeSet<Boxed> = fragments
        .iter()
        .map(|f| (f.offset.clone(), f.extent.clone()))
        .collect();
    set.into_iter().collect()
}

fn check_tensor(t: &TensorSpec, fragments: &[FragmentSpec], report: &CoverageTensor) {
    let mine: Vec<&FragmentSpec> = fragments.iter().filter(|f| f.tensor == t.id).collect();
    let dps: Vec<u64> = mine
        .iter()
        .map(|f| f.rank.0)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let boxes = distinct(&mine);
    let listed: Vec<Boxed> = report
        .boxes
        .iter()
        .map(|b| (b.global_offset.clone(), b.local_shape.clone()))
        .collect();
    assert_eq!(listed, boxes, "boxes sorted and distinct");
    for b in &report.boxes {
        let replicas = mine
            .iter()
            .filter(|f| f.offset == b.global_offset && f.extent == b.local_shape)
            .count();
        assert_eq!(b.replicas, replicas as u64);
    }
    let (status, uncovered, first) = oracle(&t.shape, &boxes);
    assert_eq!(report.status, status, "{t:?} {boxes:?}");
    match status {
        CoverageStatus::Gaps => {
            assert_eq!(report.uncovered_elements, Some(uncovered.to_string()));
            assert_eq!(report.uncovered_coordinate, first);
            assert_eq!(report.overlap, None);
        }
        CoverageStatus::Ambiguous => {
            let [a, b] = report.overlap.unwrap();
            let at = |i: u64| &boxes[usize::try_from(i).unwrap()];
            let (a, b) = (at(a), at(b));
            assert!(a != b);
            assert!(
                (0..t.shape.len()).all(|k| a.0[k] < b.0[k] + b.1[k] && b.0[k] < a.0[k] + a.1[k])
            );
            assert_eq!(report.uncovered_coordinate, None);
        }
        CoverageStatus::Complete => {
            assert_eq!((report.overlap, &report.uncovered_elements), (None, &None));
        }
    }
    let listed_dps: Vec<u64> = report.dp.iter().map(|d| d.dp).collect();
    assert_eq!(listed_dps, dps);
    for entry in &report.dp {
        let own: Vec<&FragmentSpec> = mine
            .iter()
            .copied()
            .filter(|f| f.rank.0 == entry.dp)
            .collect();
        assert_eq!(
            entry.status,
            oracle(&t.shape, &distinct(&own)).0,
            "dp {}",
            entry.dp
        );
    }
}

fn check(tensors: &[TensorSpec], fragments: &[FragmentSpec]) {
    let p = placement(tensors, fragments);
    let report = coverage(&p, &weight_manifest::Limits::default()).unwrap();
    let mut sorted = tensors.to_vec();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(report.report().tensors.len(), sorted.len());
    for (t, r) in sorted.iter().zip(&report.report().tensors) {
        assert_eq!(t.id, r.tensor_id);
        check_tensor(t, fragments, r);
    }
    let complete = report
        .report()
        .tensors
        .iter()
        .filter(|t| t.status == CoverageStatus::Complete)
        .count();
    assert_eq!(report.report().tensors_complete, complete as u64);
    assert_eq!(report.is_complete(), complete == sorted.len());
    assert_eq!(report.require_complete().is_ok(), report.is_complete());
    if let Err(e) = report.require_complete() {
        assert_eq!(e.code(), Code::CoverageIncomplete);
    }
}

/// Random boxes (often partially overlapping), each on its own rank.
fn random_boxes(seed: u64) -> (Vec<TensorSpec>, Vec<FragmentSpec>) {
    let mut rng = Rng::new(seed);
    let ndim = 1 + rng.below(4);
    let t = tensor(
        "w",
        &(0..ndim).map(|_| 1 + rng.below(5)).collect::<Vec<_>>(),
        2,
    );
    let mut fragments = Vec::new();
    // Sometimes a real tiling with a tile dropped or duplicated on another dp.
    if rng.chance(50) {
        for (i, (o, e)) in tiling(&mut rng, &t.shape).into_iter().enumerate() {
            if rng.chance(85) {
                fragments.push(fragment(
                    &format!("a{i}"),
                    "w",
                    &o,
                    &e,
                    (rng.below(2), i as u64, 0, 0),
                ));
            }
        }
    }
    for i in 0..rng.below(4) {
        let offset: Vec<u64> = t.shape.iter().map(|&s| rng.below(s)).collect();
        let extent: Vec<u64> = t
            .shape
            .iter()
            .zip(&offset)
            .map(|(&s, &o)| 1 + rng.below(s - o))
            .collect();
        fragments.push(fragment(
            &format!("b{i}"),
            "w",
            &offset,
            &extent,
            (rng.below(3), 100 + i, 0, 0),
        ));
    }
    (vec![t, tensor("empty", &[3], 1)], fragments)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn reports_match_brute_force_on_random_boxes(seed in any::<u64>()) {
        let (tensors, fragments) = random_boxes(seed);
        check(&tensors, &fragments);
    }

    #[test]
    fn reports_match_brute_force_on_planner_scenarios(seed in any::<u64>()) {
        let s = scenario(seed);
        check(&s.tensors, &s.source);
        check(&s.tensors, &s.target);
    }
}

#[test]
fn require_complete_names_the_first_incomplete_tensor() {
    let a = tensor("a", &[4], 1);
    let b = tensor("b", &[4], 1);
    let p = placement(
        &[a, b],
        &[
            fragment("a0", "a", &[0], &[4], (0, 0, 0, 0)),
            fragment("b0", "b", &[0], &[2], (0, 0, 0, 0)),
            fragment("b1", "b", &[1], &[2], (0, 1, 0, 0)),
        ],
    );
    let report = coverage(&p, &weight_manifest::Limits::default()).unwrap();
    let error = report.require_complete().unwrap_err();
    assert_eq!(error.code(), Code::CoverageIncomplete);
    assert_eq!(error.code().as_str(), "coverage_incomplete");
    assert!(
        error.message().contains("1 of 2 tensors"),
        "{}",
        error.message()
    );
    assert!(
        error.message().contains("tensor b is ambiguous"),
        "{}",
        error.message()
    );
    // The report is canonical JSON (by an oracle that shares no code with the crate's
    // encoder) that round-trips through the wire type.
    let text = report.to_json();
    let parsed: weight_manifest::wire::CoverageReport = serde_json::from_str(&text).unwrap();
    assert_eq!(&parsed, report.report());
    assert_eq!(oracle::canonical(&text), text);
}

#[test]
fn huge_tensors_have_exact_uncovered_volumes() {
    let w = tensor("w", &[u64::MAX, u64::MAX], 1);
    let p = placement(
        &[w],
        &[fragment("f", "w", &[0, 0], &[1, 1 << 40], (0, 0, 0, 0))],
    );
    let report = coverage(&p, &weight_manifest::Limits::default()).unwrap();
    let t = &report.report().tensors[0];
    assert_eq!(t.status, CoverageStatus::Gaps);
    assert_eq!(t.uncovered_coordinate, Some(vec![0, 1 << 40]));
    // (2^64 - 1)^2 - 2^40, computed with Python.
    assert_eq!(
        t.uncovered_elements.as_deref(),
        Some("340282366920938463426481118184837480449")
    );
}
