//! The same-group box sweep of contract §8.3.
//!
//! The contract fixes which intersecting pair is named: sweep along the axis with the most
//! distinct extents, and report the first active box (in insertion order) that intersects
//! the incoming one. Scanning the active list as written is quadratic; here the active
//! boxes live in an interval tree on a second axis, so only boxes that overlap the
//! incoming one on two axes are looked at. While no pair has intersected, the active boxes
//! are pairwise disjoint and all contain the sweep line, so for ndim ≤ 2 every candidate is
//! a hit and the sweep is O(n log n).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::interval_tree::IntervalTree;
use super::BoxRef;

/// The first intersecting pair in the contract's order, as indices into `boxes`
/// (which are in manifest order): `(first, second)`.
pub(crate) fn first_intersection(boxes: &[BoxRef<'_>]) -> Option<(usize, usize)> {
    if boxes.len() < 2 {
        return None;
    }
    let ndim = boxes[0].offset.len();
    if ndim == 0 {
        // Zero-dimensional boxes are points; all of them coincide.
        return Some((0, 1));
    }
    let by_selectivity = axes_by_distinct_extents(boxes, ndim);
    let sweep = by_selectivity[0];
    let index = by_selectivity.get(1).copied().unwrap_or(sweep);

    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| boxes[i].offset[sweep]); // stable: manifest order on ties

    let mut tree = IntervalTree::new(boxes.iter().map(|b| b.offset[index]).collect());
    // Active members expire when the sweep passes their end; (end, sequence).
    let mut expiry: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();

    for (sequence, &current) in order.iter().enumerate() {
        let c = boxes[current];
        while let Some(&Reverse((end, seq))) = expiry.peek() {
            if end > c.offset[sweep] {
                break;
            }
            expiry.pop();
            let p = boxes[order[seq]];
            tree.remove(p.offset[index], p.end(index), seq);
        }
        // Of all active boxes that intersect c, the earliest inserted is named.
        let mut first_hit: Option<usize> = None;
        tree.for_each_overlapping(c.offset[index], c.end(index), &mut |seq| {
            if boxes[order[seq]].intersects(&c) && first_hit.is_none_or(|h| seq < h) {
                first_hit = Some(seq);
            }
            true
        });
        if let Some(seq) = first_hit {
            return Some((order[seq], current));
        }
        tree.insert(c.offset[index], c.end(index), sequence);
        expiry.push(Reverse((c.end(sweep), sequence)));
    }
    None
}

/// Axes ordered by the number of distinct (offset, end) pairs, most first; ties keep the
/// lower axis first (the contract's sweep axis is element 0).
fn axes_by_distinct_extents(boxes: &[BoxRef<'_>], ndim: usize) -> Vec<usize> {
    let mut counts: Vec<(Reverse<usize>, usize)> = (0..ndim)
        .map(|axis| {
            let mut pairs: Vec<(u64, u64)> = boxes
                .iter()
                .map(|b| (b.offset[axis], b.end(axis)))
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            (Reverse(pairs.len()), axis)
        })
        .collect();
    counts.sort_unstable();
    counts.into_iter().map(|(_, axis)| axis).collect()
}

#[cfg(test)]
mod tests {
    use super::{first_intersection, BoxRef};
    use crate::test_support::{box_refs, Rng};

    /// The contract's procedure, as written (quadratic): the oracle.
    fn reference(boxes: &[BoxRef<'_>]) -> Option<(usize, usize)> {
        let ndim = boxes.first()?.offset.len();
        let mut best = (0usize, 0usize);
        for axis in 0..ndim {
            let mut pairs: Vec<(u64, u64)> = boxes
                .iter()
                .map(|b| (b.offset[axis], b.end(axis)))
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            if pairs.len() > best.0 {
                best = (pairs.len(), axis);
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
        assert_eq!(first_intersection(&boxes), reference(&boxes), "{raw:?}");
    }

    #[test]
    fn agrees_with_the_contract_procedure_on_a_dense_sample() {
        // Deterministic pseudo-random boxes in 1..=4 dimensions on a small grid, so
        // touching, nested, identical and disjoint cases all occur.
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d_u64);
        let mut next = |bound: u64| rng.below(bound);
        for _ in 0..3000 {
            let ndim = 1 + usize::try_from(next(4)).unwrap();
            let count = 2 + next(7);
            let raw: Vec<(Vec<u64>, Vec<u64>)> = (0..count)
                .map(|_| {
                    let offset: Vec<u64> = (0..ndim).map(|_| next(6)).collect();
                    let extent: Vec<u64> = (0..ndim).map(|_| 1 + next(3)).collect();
                    (offset, extent)
                })
                .collect();
            check(&raw);
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
        assert_eq!(first_intersection(&boxes), None);
    }
}
