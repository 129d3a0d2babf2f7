//! Whether a set of distinct boxes tiles a tensor: every element covered exactly once.
//!
//! Three outcomes, decided in this order:
//!
//! 1. **ambiguous**: two distinct boxes intersect (found by the shared §8.3 sweep, so the
//!    pair named is the one that procedure names for the boxes in the order given);
//! 2. **complete**: the boxes are pairwise disjoint and in bounds, so they tile the tensor
//!    exactly when their volumes sum to the tensor's volume;
//! 3. **gaps**: otherwise; the uncovered volume is the difference, and the
//!    lexicographically first uncovered coordinate is found by a slab sweep per axis.
//!
//! The slab sweep: along axis 0 the cross-section of disjoint boxes changes only at box
//! starts and ends; the first position whose cross-section volume is below the tensor's
//! cross-section holds the first uncovered point (every point before it is covered), and
//! the boxes active there are disjoint in the remaining axes, so the search recurses into
//! them. Each axis costs one sort: O(ndim · n log n) in all. Up to 16 boxes are first
//! compared pairwise; the sweep runs only when that finds an intersection (to name the
//! canonical pair) or when there are more boxes.
//!
//! More than 16 boxes are first tested for an exact tiling by their signed corners
//! ([`super::corners`]): linear in the boxes whatever the number of split axes (up to 12),
//! so a complete tensor never waits on the pairwise sweep. The sweep itself runs on the
//! shared k-d index (O(n log n) on tilings and slab-like layouts, sub-quadratic in any
//! dimension) under the caller's [`Work`] budget. A tiling is exactly "pairwise disjoint
//! and volumes sum to the whole", so the answer is the one the other steps would give.

use super::boxref::BoxRef;
use super::corners::tiles_exactly;
use super::sweep::first_intersection;
use super::volume::{product_u128, Natural};
use super::work::{Exhausted, Work};

/// Up to this many boxes are compared pairwise.
const PAIRWISE: usize = 16;

/// How a set of distinct boxes covers a tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tiling {
    /// The boxes tile the tensor.
    Complete,
    /// The boxes are disjoint but leave `uncovered` elements; `first` is the
    /// lexicographically first uncovered coordinate.
    Gaps { uncovered: Natural, first: Vec<u64> },
    /// Boxes `first` and `second` (indices into the input) intersect.
    Ambiguous { first: usize, second: usize },
}

/// Analyses `boxes` against a tensor of `shape`. The boxes must be distinct, have
/// `shape.len()` axes, lie in bounds, and each hold at most 2^64−1 elements (true for
/// every fragment of a valid manifest, §8.2 F4, F5, F8). `Err` when the sweep runs out
/// of `work`.
pub(crate) fn analyse(
    shape: &[u64],
    boxes: &[BoxRef<'_>],
    work: &mut Work,
) -> Result<Tiling, Exhausted> {
    if boxes.len() > PAIRWISE && tiles_exactly(shape, boxes) == Some(true) {
        return Ok(Tiling::Complete);
    }
    if any_intersection(boxes) {
        if let Some((first, second)) = first_intersection(boxes, work)? {
            return Ok(Tiling::Ambiguous { first, second });
        }
    }
    let covered = boxes.iter().fold(0u128, |sum, b| {
        sum.saturating_add(product_u128(b.extent).unwrap_or(u128::MAX))
    });
    // Disjoint boxes in bounds never cover more than the tensor.
    let uncovered = match product_u128(shape) {
        Some(total) if covered >= total => return Ok(Tiling::Complete),
        Some(total) => Natural::from_u128(total - covered),
        None => match Natural::product(shape).checked_sub_u128(covered) {
            Some(n) => n,
            None => return Ok(Tiling::Complete),
        },
    };
    Ok(Tiling::Gaps {
        uncovered,
        first: first_uncovered(shape, boxes),
    })
}

/// Whether any two boxes intersect: all pairs for a few boxes (the common case: a TP
/// group), the sweep otherwise. Only a hit needs the sweep's canonical pair.
fn any_intersection(boxes: &[BoxRef<'_>]) -> bool {
    if boxes.len() > PAIRWISE {
        return true;
    }
    boxes
        .iter()
        .enumerate()
        .any(|(i, a)| boxes[i + 1..].iter().any(|b| a.intersects(b)))
}

/// The lexicographically first coordinate that no box covers; the boxes must be pairwise
/// disjoint and leave some element uncovered.
fn first_uncovered(shape: &[u64], boxes: &[BoxRef<'_>]) -> Vec<u64> {
    let ndim = shape.len();
    let mut point = vec![0u64; ndim];
    let mut active: Vec<usize> = (0..boxes.len()).collect();
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * boxes.len());
    for axis in 0..ndim {
        if active.is_empty() {
            break; // nothing covers this slab: the rest of the point stays 0
        }
        let tensor_cross = product_u128(&shape[axis + 1..]);
        let cross = |i: usize| product_u128(&boxes[i].extent[axis + 1..]).unwrap_or(u128::MAX);
        events.clear();
        for &i in &active {
            events.push((boxes[i].offset[axis], true, i));
            events.push((boxes[i].end(axis), false, i));
        }
        events.sort_unstable();
        let mut sum = 0u128;
        let mut next = 0usize;
        let mut position = 0u64;
        let found = loop {
            while let Some(&(at, start, i)) = events.get(next) {
                if at > position {
                    break;
                }
                sum = if start {
                    sum.saturating_add(cross(i))
                } else {
                    sum.saturating_sub(cross(i))
                };
                next += 1;
            }
            if position >= shape[axis] {
                break None;
            }
            if tensor_cross.is_none_or(|c| sum < c) {
                break Some(position);
            }
            match events.get(next) {
                Some(&(at, _, _)) => position = at,
                None => break None,
            }
        };
        // Without a deficient slab the boxes cover the tensor (not a documented input);
        // the point stays at 0 on this axis.
        let p = found.unwrap_or(0);
        point[axis] = p;
        active.retain(|&i| boxes[i].offset[axis] <= p && p < boxes[i].end(axis));
    }
    point
}

#[cfg(test)]
mod tests {
    use super::{Tiling, Work};
    use crate::geometry::BoxRef;
    use crate::test_support::{box_refs, coverage_counts, Rng};

    /// Brute force over every point of a small tensor: the uncovered count, the first
    /// uncovered point, and whether any point is covered twice.
    fn oracle(shape: &[u64], raw: &[(Vec<u64>, Vec<u64>)]) -> (u64, Option<Vec<u64>>, bool) {
        let counts = coverage_counts(shape, raw);
        let uncovered = counts.iter().filter(|(_, hits)| *hits == 0).count();
        let first = counts
            .iter()
            .find(|(_, hits)| *hits == 0)
            .map(|(p, _)| p.clone());
        let overlap = counts.iter().any(|(_, hits)| *hits > 1);
        (u64::try_from(uncovered).unwrap(), first, overlap)
    }

    fn analyse(shape: &[u64], boxes: &[BoxRef<'_>]) -> Tiling {
        super::analyse(shape, boxes, &mut Work::unlimited()).unwrap()
    }

    #[test]
    fn agrees_with_brute_force() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15_u64);
        for _ in 0..4000 {
            let ndim = rng.ndim(4);
            let mut next = |bound: u64| rng.below(bound);
            let shape: Vec<u64> = (0..ndim).map(|_| 1 + next(5)).collect();
            let count = next(6);
            let mut raw: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
            for _ in 0..count {
                let offset: Vec<u64> = shape.iter().map(|&s| next(s)).collect();
                let extent: Vec<u64> = shape
                    .iter()
                    .zip(&offset)
                    .map(|(&s, &o)| 1 + next(s - o))
                    .collect();
                if !raw.contains(&(offset.clone(), extent.clone())) {
                    raw.push((offset, extent));
                }
            }
            let boxes: Vec<BoxRef<'_>> = box_refs(&raw);
            let (uncovered, first, overlap) = oracle(&shape, &raw);
            match analyse(&shape, &boxes) {
                Tiling::Ambiguous {
                    first: a,
                    second: b,
                } => {
                    assert!(overlap, "{shape:?} {raw:?}");
                    assert!(boxes[a].intersects(&boxes[b]));
                }
                Tiling::Complete => assert!(!overlap && uncovered == 0, "{shape:?} {raw:?}"),
                Tiling::Gaps {
                    uncovered: u,
                    first: f,
                } => {
                    assert!(!overlap, "{shape:?} {raw:?}");
                    assert_eq!(u.to_u128(), Some(u128::from(uncovered)));
                    assert_eq!(Some(f), first, "{shape:?} {raw:?}");
                }
            }
        }
    }

    #[test]
    fn many_boxes_over_three_split_axes() {
        // A 3 x 3 x 3 grid of a 6 x 6 x 6 tensor: 27 boxes, more than are compared pairwise.
        let shape = [6u64, 6, 6];
        let mut raw: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
        for i in 0..27u64 {
            let offset = vec![2 * (i / 9), 2 * (i / 3 % 3), 2 * (i % 3)];
            raw.push((offset, vec![2, 2, 2]));
        }
        let view = |raw: &[(Vec<u64>, Vec<u64>)]| analyse_raw(&shape, raw);
        assert_eq!(view(&raw), Tiling::Complete);
        // Without the box at [2, 2, 2]: a gap of 8 elements starting there.
        let mut gap = raw.clone();
        gap.remove(13);
        assert_eq!(oracle(&shape, &gap).1, Some(vec![2, 2, 2]));
        match view(&gap) {
            Tiling::Gaps { uncovered, first } => {
                assert_eq!(uncovered.to_u128(), Some(8));
                assert_eq!(first, vec![2, 2, 2]);
            }
            other => panic!("{other:?}"),
        }
        // That box grown by one along axis 2 into its neighbour: an overlap.
        let mut overlap = raw.clone();
        overlap[13].1 = vec![2, 2, 3];
        assert!(matches!(view(&overlap), Tiling::Ambiguous { .. }));
    }

    fn analyse_raw(shape: &[u64], raw: &[(Vec<u64>, Vec<u64>)]) -> Tiling {
        analyse(shape, &box_refs(raw))
    }

    #[test]
    fn huge_tensors_report_exact_gaps() {
        let shape = [u64::MAX, u64::MAX, 4];
        let (o, e) = ([0, 0, 0], [1, 1, 4]);
        let boxes = [BoxRef {
            offset: &o,
            extent: &e,
        }];
        match analyse(&shape, &boxes) {
            Tiling::Gaps { uncovered, first } => {
                assert_eq!(first, vec![0, 1, 0]);
                assert_eq!(
                    uncovered.to_decimal(),
                    "1361129467683753853705924477137396432896"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            analyse(&[3], &[]),
            Tiling::Gaps { ref first, .. } if first == &[0]
        ));
    }
}
