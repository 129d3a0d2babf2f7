//! The same-group box sweep of contract §8.3.
//!
//! The contract fixes which intersecting pair is named: sweep along the axis with the most
//! distinct extents, and report the first active box (in insertion order) that intersects
//! the incoming one. Scanning the active list as written is quadratic; here every box is
//! indexed up front on the other axes ([`BoxIndex`], a k-d tree) and switched on while
//! the sweep line is inside it, so an incoming box looks only at index nodes that can
//! reach it: O(n log n) to build, and per box O(n^(1−1/D) + k) node visits with
//! D = 2 × (ndim − 1), O(log n) on tilings and slab-like layouts. While no pair has
//! intersected the active boxes are pairwise disjoint, so the k hits of the one box that
//! ends the sweep are at most the active boxes. The queries are charged to a [`Work`]
//! budget.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::box_index::BoxIndex;
use super::boxref::BoxRef;
use super::work::{Exhausted, Work};

/// The first intersecting pair in the contract's order, as indices into `boxes`
/// (which are in manifest order): `(first, second)`; `Err` when `work` runs out first.
pub(crate) fn first_intersection(
    boxes: &[BoxRef<'_>],
    work: &mut Work,
) -> Result<Option<(usize, usize)>, Exhausted> {
    if boxes.len() < 2 {
        return Ok(None);
    }
    let ndim = boxes[0].offset.len();
    if ndim == 0 {
        // Zero-dimensional boxes are points; all of them coincide.
        return Ok(Some((0, 1)));
    }
    let sweep = axes_by_distinct_extents(boxes, ndim)[0];

    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| boxes[i].offset[sweep]); // stable: manifest order on ties
    let mut sequence_of = vec![0usize; boxes.len()];
    for (sequence, &i) in order.iter().enumerate() {
        sequence_of[i] = sequence;
    }

    let mut index = BoxIndex::on_axes(boxes, (0..ndim).filter(|&k| k != sweep).collect());
    // Active members expire when the sweep passes their end; (end, box).
    let mut expiry: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut end: Vec<u64> = Vec::with_capacity(ndim);

    for &current in &order {
        let c = boxes[current];
        while let Some(&Reverse((at, p))) = expiry.peek() {
            if at > c.offset[sweep] {
                break;
            }
            expiry.pop();
            index.switch(p, false);
        }
        // Of all active boxes that intersect c, the earliest inserted is named.
        end.clear();
        end.extend((0..ndim).map(|k| c.end(k)));
        let mut first_hit: Option<usize> = None;
        index.for_each_intersecting(c.offset, &end, work, &mut |p| {
            let seq = sequence_of[p];
            if boxes[p].intersects(&c) && first_hit.is_none_or(|h| seq < sequence_of[h]) {
                first_hit = Some(p);
            }
        })?;
        if let Some(p) = first_hit {
            return Ok(Some((p, current)));
        }
        index.switch(current, true);
        expiry.push(Reverse((c.end(sweep), current)));
    }
    Ok(None)
}

/// Axes ordered by the number of distinct (offset, end) pairs, most first; ties keep the
/// lower axis first (the contract's sweep axis is element 0).
fn axes_by_distinct_extents(boxes: &[BoxRef<'_>], ndim: usize) -> Vec<usize> {
    let mut counts: Vec<(Reverse<usize>, usize)> = (0..ndim)
        .map(|axis| (Reverse(distinct_extents(boxes, axis)), axis))
        .collect();
    counts.sort_unstable();
    counts.into_iter().map(|(_, axis)| axis).collect()
}

/// The number of distinct (offset, end) pairs of `boxes` on `axis`.
fn distinct_extents(boxes: &[BoxRef<'_>], axis: usize) -> usize {
    let mut pairs: Vec<(u64, u64)> = boxes
        .iter()
        .map(|b| (b.offset[axis], b.end(axis)))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.len()
}

#[cfg(test)]
mod tests {
    use super::{distinct_extents, first_intersection, BoxRef};
    use crate::geometry::work::Work;
    use crate::test_support::{box_refs, slab_family, Rng};

    /// The contract's procedure, as written (quadratic): the oracle.
    fn reference(boxes: &[BoxRef<'_>]) -> Option<(usize, usize)> {
        let ndim = boxes.first()?.offset.len();
        let mut best = (0usize, 0usize);
        for axis in 0..ndim {
            let distinct = distinct_extents(boxes, axis);
            if distinct > best.0 {
                best = (distinct, axis);
            }
        }
        let s = best.1;
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        order.sort_by_key(|&i| boxes[i].offset[s]);
        let mut active: Vec<usize> = Vec::new();
        for &c in &order {
            active.retain(|&p| boxes[p].end(s) > boxes[c].offset[s]);
            if let Some(&p) = active.iter().find(|&&p| boxes[p].intersects(&boxes[c])) {
                return Some((p, c));
            }
            active.push(c);
        }
        None
    }

    fn check(raw: &[(Vec<u64>, Vec<u64>)]) {
        let boxes: Vec<BoxRef<'_>> = box_refs(raw);
        let found = first_intersection(&boxes, &mut Work::unlimited()).unwrap();
        assert_eq!(found, reference(&boxes), "{raw:?}");
    }

    #[test]
    fn agrees_with_the_contract_procedure_on_a_dense_sample() {
        // Deterministic pseudo-random boxes in 1..=4 dimensions on a small grid, so
        // touching, nested, identical and disjoint cases all occur.
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d_u64);
        for _ in 0..3000 {
            let ndim = rng.ndim(4);
            let count = 2 + rng.below(7);
            check(&rng.boxes(count, ndim, 6, (1, 3)));
        }
    }

    #[test]
    fn grid_tiles_do_not_intersect() {
        let mut raw = Vec::new();
        for i in 0..20u64 {
            for j in 0..20u64 {
                raw.push((vec![i * 2, j * 3], vec![2, 3]));
            }
        }
        check(&raw);
        let boxes: Vec<BoxRef<'_>> = box_refs(&raw);
        assert_eq!(first_intersection(&boxes, &mut Work::unlimited()), Ok(None));
    }

    #[test]
    fn agrees_with_the_contract_procedure_on_larger_sets() {
        // Enough boxes for the index to have inner nodes, in up to 6 dimensions: sparse
        // grids (mostly disjoint, often touching) with a few boxes grown by one element.
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15_u64);
        let mut next = |bound: u64| rng.below(bound);
        for _ in 0..400 {
            let ndim = 1 + usize::try_from(next(6)).unwrap_or(0);
            let count = 10 + next(70);
            let cell = 1 + next(3);
            let mut raw: Vec<(Vec<u64>, Vec<u64>)> = (0..count)
                .map(|_| {
                    let offset: Vec<u64> = (0..ndim).map(|_| cell * next(5)).collect();
                    (offset, vec![cell; ndim])
                })
                .collect();
            raw.sort();
            raw.dedup();
            for _ in 0..next(3) {
                let i = usize::try_from(next(raw.len() as u64)).unwrap();
                let k = usize::try_from(next(ndim as u64)).unwrap();
                raw[i].1[k] += 1;
            }
            check(&raw);
        }
    }

    /// A tool, not a check: it prints figures (BENCHMARKS.md; `--cfg wm_tools`).
    #[cfg(wm_tools)]
    #[test]
    fn hostile_slab_work_figures() {
        for ndim in [3usize, 4, 5] {
            for m in [500u64, 2000, 8000, 32000] {
                let (_, raw) = slab_family(ndim, m);
                let boxes = box_refs(&raw);
                let mut work = Work::unlimited();
                assert_eq!(first_intersection(&boxes, &mut work), Ok(None));
                println!(
                    "{ndim}-D n={} per box {}",
                    boxes.len(),
                    work.spent() / boxes.len() as u64
                );
            }
        }
    }

    #[test]
    fn hostile_slabs_cost_logarithmic_work() {
        // Every pair of axes sees m^2 overlapping pairs; the index still spends O(log n)
        // units a box (measured at these sizes: about 30 in 3-D, 70 in 4-D, 150 in 5-D).
        for ndim in [3usize, 4, 5] {
            let (_, raw) = slab_family(ndim, 3000);
            let boxes = box_refs(&raw);
            let mut work = Work::new(250, boxes.len());
            assert_eq!(first_intersection(&boxes, &mut work), Ok(None), "{ndim}-D");
            // One element more on one box: the canonical pair is the brute-force one.
            let mut grown = raw.clone();
            grown[7].1[0] += 1;
            if ndim <= 3 {
                check(&grown[..600]);
            }
            let boxes = box_refs(&grown);
            let mut work = Work::new(250, boxes.len());
            assert!(matches!(first_intersection(&boxes, &mut work), Ok(Some(_))));
        }
    }
}
