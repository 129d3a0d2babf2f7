//! The box-intersection index behind §8.3, coverage and the planner, against brute-force
//! oracles (issue 23): random box sets in 1–6 dimensions, large enough (up to ~90 boxes)
//! that the index has inner nodes, made of tilings that are then left alone (disjoint,
//! touching), cut (gaps) or grown by one element (overlapping by one element). Public API
//! only; every answer is recomputed here the slow way, point by point and pair by pair.

#[allow(dead_code)]
mod plan_support;

use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use weight_manifest::wire::CoverageStatus;
use weight_manifest::{coverage, plan, Code, Options, Placement, PlanLimits};

type Boxes = Vec<(Vec<u64>, Vec<u64>)>;

/// A seeded xorshift source, so one proptest seed is one case.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// Splits [offset, offset + extent) at random into a tiling.
fn split(rng: &mut Rng, offset: Vec<u64>, extent: Vec<u64>, depth: u32, out: &mut Boxes) {
    let axis = usize::try_from(rng.below(extent.len() as u64)).unwrap();
    if depth == 0 || extent[axis] < 2 || rng.below(16) == 0 {
        out.push((offset, extent));
        return;
    }
    let cut = 1 + rng.below(extent[axis] - 1);
    let (mut low, mut high_offset, mut high) = (extent.clone(), offset.clone(), extent.clone());
    low[axis] = cut;
    high_offset[axis] += cut;
    high[axis] -= cut;
    split(rng, offset, low, depth - 1, out);
    split(rng, high_offset, high, depth - 1, out);
}

/// A tensor shape and distinct in-bounds boxes: a tiling, then per `mode` left alone,
/// with boxes dropped, or with boxes grown by one element (kept in bounds).
fn case(seed: u64, ndim: usize, mode: u64) -> (Vec<u64>, Boxes) {
    let mut rng = Rng(seed | 1);
    let side = [60, 16, 8, 5, 3, 2][ndim - 1];
    let shape: Vec<u64> = (0..ndim).map(|_| 2 + rng.below(side)).collect();
    let mut boxes = Vec::new();
    split(&mut rng, vec![0; ndim], shape.clone(), 9, &mut boxes);
    match mode {
        0 => {}
        1 => {
            for _ in 0..=rng.below(3) {
                if boxes.len() > 1 {
                    let i = usize::try_from(rng.below(boxes.len() as u64)).unwrap();
                    boxes.remove(i);
                }
            }
        }
        _ => {
            for _ in 0..=rng.below(2) {
                let i = usize::try_from(rng.below(boxes.len() as u64)).unwrap();
                let k = usize::try_from(rng.below(ndim as u64)).unwrap();
                let (o, e) = &mut boxes[i];
                if o[k] + e[k] < shape[k] {
                    e[k] += 1;
                } else if o[k] > 0 {
                    o[k] -= 1;
                    e[k] += 1;
                }
            }
        }
    }
    boxes.sort();
    boxes.dedup();
    (shape, boxes)
}

fn end(b: &(Vec<u64>, Vec<u64>), k: usize) -> u64 {
    b.0[k] + b.1[k]
}

fn intersects(a: &(Vec<u64>, Vec<u64>), b: &(Vec<u64>, Vec<u64>)) -> bool {
    (0..a.0.len()).all(|k| a.0[k] < end(b, k) && b.0[k] < end(a, k))
}

/// §8.3's pair as the contract writes it: sweep axis with the most distinct (offset, end)
/// pairs (lowest on ties), stable sort by offset, first active box that intersects.
fn contract_pair(boxes: &Boxes) -> Option<(usize, usize)> {
    let ndim = boxes.first()?.0.len();
    let distinct = |axis: usize| {
        let mut pairs: Vec<(u64, u64)> = boxes.iter().map(|b| (b.0[axis], end(b, axis))).collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs.len()
    };
    let sweep = (0..ndim).fold(0, |best, a| {
        if distinct(a) > distinct(best) {
            a
        } else {
            best
        }
    });
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| boxes[i].0[sweep]);
    let mut active: Vec<usize> = Vec::new();
    for &c in &order {
        active.retain(|&p| end(&boxes[p], sweep) > boxes[c].0[sweep]);
        if let Some(&p) = active.iter().find(|&&p| intersects(&boxes[p], &boxes[c])) {
            return Some((p, c));
        }
        active.push(c);
    }
    None
}

/// Every point of the tensor in row-major (lexicographic) order with its cover count.
fn counts(shape: &[u64], boxes: &Boxes) -> Vec<(Vec<u64>, usize)> {
    plan_support::brute::cover_counts(shape, boxes)
}

/// The placement of `boxes` as fragments `f000`, `f001`, ... (so manifest order is box
/// order), all on one rank or each on its own tp rank.
fn placement(shape: &[u64], boxes: &Boxes, one_rank: bool) -> String {
    let mut fragments = String::new();
    for (i, (o, e)) in boxes.iter().enumerate() {
        let nbytes: u64 = e.iter().product();
        let tp = if one_rank { 0 } else { i };
        let comma = if i == 0 { "" } else { "," };
        write!(
            fragments,
            r#"{comma}{{"aliases":[],"global_offset":{o:?},"local_shape":{e:?},"nbytes":{nbytes},"placement_fragment_id":"f{i:03}","rank":{{"dp":0,"ep":0,"pp":0,"tp":{tp}}},"tensor_id":"w"}}"#
        )
        .unwrap();
    }
    let dims: Vec<usize> = (0..shape.len()).collect();
    format!(
        r#"{{"fragments":[{fragments}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{{"dtype":"int8","expert_id":null,"global_shape":{shape:?},"itemsize":1,"layer_id":null,"layout_fingerprint":"fp","partition_dim":null,"shard_dims":{dims:?},"tensor_id":"w"}}]}}"#
    )
}

fn check(seed: u64, ndim: usize, mode: u64) -> Result<(), TestCaseError> {
    let (shape, boxes) = case(seed, ndim, mode);
    let pair = contract_pair(&boxes);

    // §8.3: all boxes on one rank.
    let result = Placement::from_json(placement(&shape, &boxes, true), &Options::default());
    match (pair, result) {
        (None, Ok(_)) => {}
        (Some((a, b)), Err(e)) => {
            prop_assert_eq!(e.code(), Code::FragmentOverlap);
            let named = format!("f{a:03} and f{b:03}");
            prop_assert!(
                e.message().ends_with(&named),
                "{} vs {}",
                e.message(),
                named
            );
        }
        (pair, result) => prop_assert!(false, "pair {:?}, result {:?}", pair, result.err()),
    }

    // Coverage: each box on its own rank (replicas may overlap), boxes already in the
    // report's order (by offset, then shape).
    let source = Placement::from_json(placement(&shape, &boxes, false), &Options::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let report = coverage(&source, &weight_manifest::Limits::default()).unwrap();
    let tensor = &report.report().tensors[0];
    let points = counts(&shape, &boxes);
    let uncovered = points.iter().filter(|(_, n)| *n == 0).count();
    match pair {
        Some((a, b)) => {
            prop_assert_eq!(tensor.status, CoverageStatus::Ambiguous);
            prop_assert_eq!(tensor.overlap, Some([a as u64, b as u64]));
        }
        None if uncovered == 0 => prop_assert_eq!(tensor.status, CoverageStatus::Complete),
        None => {
            prop_assert_eq!(tensor.status, CoverageStatus::Gaps);
            prop_assert_eq!(
                tensor.uncovered_elements.clone(),
                Some(uncovered.to_string())
            );
            let first = points.iter().find(|(_, n)| *n == 0).map(|(p, _)| p.clone());
            prop_assert_eq!(tensor.uncovered_coordinate.clone(), first);
        }
    }

    // The planner, onto itself: a tiling gives one region per intersecting (target,
    // source) pair, every element copied once; anything else has no source cover.
    let result = plan(&source, &source, &PlanLimits::default());
    if pair.is_some() || uncovered > 0 {
        let code = result.err().map(|e| e.code());
        prop_assert_eq!(code, Some(Code::PlanUncoveredTensor));
        return Ok(());
    }
    let plan = result.map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut expected: Vec<(String, String)> = Vec::new();
    for (t, target) in boxes.iter().enumerate() {
        for (s, source) in boxes.iter().enumerate() {
            if intersects(target, source) {
                expected.push((format!("f{t:03}"), format!("f{s:03}")));
            }
        }
    }
    let found: Vec<(String, String)> = plan
        .regions()
        .iter()
        .map(|r| (r.target_fragment_id.clone(), r.source_fragment_id.clone()))
        .collect();
    prop_assert_eq!(found, expected);
    let volume: u64 = shape.iter().product();
    prop_assert_eq!(plan.stats().bytes, u128::from(volume));
    Ok(())
}

#[test]
fn box_searches_agree_with_brute_force() {
    let mut runner = TestRunner::new(Config {
        cases: 600,
        ..Config::default()
    });
    runner
        .run(
            &(any::<u64>(), 1usize..=6, 0u64..3),
            |(seed, ndim, mode)| check(seed, ndim, mode),
        )
        .unwrap();
}

#[test]
fn every_mode_and_outcome_occurs() {
    // The generator is not vacuous: each outcome appears in earnest in every dimension.
    for ndim in 1..=6 {
        let (mut tiled, mut large, mut overlapping, mut gaps) = (0, 0, 0, 0);
        for seed in 1..200u64 {
            let (shape, boxes) = case(seed * 7919, ndim, seed % 3);
            let pair = contract_pair(&boxes);
            let uncovered = counts(&shape, &boxes).iter().any(|(_, n)| *n == 0);
            large += usize::from(boxes.len() > 16);
            match (pair, uncovered) {
                (Some(_), _) => overlapping += 1,
                (None, true) => gaps += 1,
                (None, false) => tiled += 1,
            }
        }
        assert!(tiled > 20 && overlapping > 20 && gaps > 20, "{ndim}-D");
        assert!(
            ndim == 1 || large > 20,
            "{ndim}-D: {large} sets above 16 boxes"
        );
    }
}
