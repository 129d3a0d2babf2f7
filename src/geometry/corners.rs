//! Whether distinct boxes tile a tensor exactly, decided from their corners alone: linear in
//! the number of boxes in any dimension (the pairwise sweep is O(n log n) only while at most
//! two axes are split).
//!
//! Why it is exact: on the integer grid, the mixed difference Δ = Δ_1 ⋯ Δ_d (Δ_k f(x) =
//! f(x) − f(x − e_k)) maps the indicator of a half-open box [o, e) to its 2^d corners, +1
//! where an even number of coordinates are ends and −1 where an odd number are, and Δ is
//! injective on finitely supported functions (prefix sums invert it). So the boxes cover
//! every element of the tensor exactly once — Σ 1_B = 1_T — if and only if their signed
//! corners sum to the tensor's signed corners, point by point. Axes that every box spans
//! whole factor out of every indicator, so only the axes some box splits are looked at.
//!
//! Boxes whose volumes do not sum to the tensor's cannot tile it; that is checked first
//! (O(ndim · n)), so the corner map is only built for plausible tilings.

use super::boxref::BoxRef;
use super::volume::{product_u128, Natural};
use crate::util::fxhash::map_with_capacity;

/// At most this many split axes (2^12 corners per box) are handled here.
const MAX_SPLIT_AXES: usize = 12;
/// At most this many corners in all (about 1 GiB of map at worst is never reached: the
/// map holds at most this many entries of a few words each).
const MAX_CORNERS: usize = 1 << 24;

/// `Some(true)` when `boxes` (distinct, in bounds of `shape`) cover every element of the
/// tensor exactly once, `Some(false)` when they do not, `None` when the boxes split too many
/// axes for the corner count to stay small (the caller decides another way).
pub(crate) fn tiles_exactly(shape: &[u64], boxes: &[BoxRef<'_>]) -> Option<bool> {
    let split: Vec<usize> = (0..shape.len())
        .filter(|&k| {
            boxes
                .iter()
                .any(|b| b.offset[k] != 0 || b.extent[k] != shape[k])
        })
        .collect();
    if split.len() > MAX_SPLIT_AXES {
        return None;
    }
    let per_box = 1usize << split.len();
    let total = boxes.len().checked_add(1)?.checked_mul(per_box)?;
    if total > MAX_CORNERS {
        return None;
    }
    if !volumes_match(shape, boxes) {
        return Some(false);
    }
    let mut signed = map_with_capacity::<Vec<u64>, i64>(total);
    let mut add_corners = |low: &dyn Fn(usize) -> u64, high: &dyn Fn(usize) -> u64, sign: i64| {
        for mask in 0..per_box {
            let corner: Vec<u64> = split
                .iter()
                .enumerate()
                .map(|(j, &k)| if mask >> j & 1 == 1 { high(k) } else { low(k) })
                .collect();
            let odd = mask.count_ones() % 2 == 1;
            *signed.entry(corner).or_insert(0) += if odd { -sign } else { sign };
        }
    };
    for b in boxes {
        add_corners(&|k| b.offset[k], &|k| b.end(k), 1);
    }
    // The tensor's corners with the opposite sign: a tiling leaves nothing.
    add_corners(&|_| 0, &|k| shape[k], -1);
    Some(signed.values().all(|&count| count == 0))
}

/// Whether the boxes' volumes sum to the tensor's volume (each box's volume fits a u64,
/// so the sum fits a u128 for up to 2^64 boxes; saturation only ever says "no").
fn volumes_match(shape: &[u64], boxes: &[BoxRef<'_>]) -> bool {
    let Some(sum) = boxes.iter().try_fold(0u128, |sum, b| {
        product_u128(b.extent).and_then(|v| sum.checked_add(v))
    }) else {
        return false;
    };
    match product_u128(shape) {
        Some(total) => total == sum,
        None => Natural::product(shape).cmp_u128(sum).is_eq(),
    }
}

#[cfg(test)]
mod tests {
    use super::tiles_exactly;
    use crate::geometry::BoxRef;
    use crate::test_support::{box_refs, coverage_counts, Rng};

    /// Whether every element is covered exactly once, by brute force.
    fn exact_cover(shape: &[u64], boxes: &[(Vec<u64>, Vec<u64>)]) -> bool {
        coverage_counts(shape, boxes)
            .iter()
            .all(|(_, hits)| *hits == 1)
    }

    /// Splits the box (offset, extent) recursively at random into a tiling.
    fn split(
        next: &mut impl FnMut(u64) -> u64,
        offset: Vec<u64>,
        extent: Vec<u64>,
        depth: u32,
        out: &mut Vec<(Vec<u64>, Vec<u64>)>,
    ) {
        let axis = usize::try_from(next(extent.len() as u64)).unwrap();
        if depth == 0 || extent[axis] < 2 || next(4) == 0 {
            out.push((offset, extent));
            return;
        }
        let cut = 1 + next(extent[axis] - 1);
        let (mut low_extent, mut high_offset, mut high_extent) =
            (extent.clone(), offset.clone(), extent.clone());
        low_extent[axis] = cut;
        high_offset[axis] += cut;
        high_extent[axis] -= cut;
        split(next, offset, low_extent, depth - 1, out);
        split(next, high_offset, high_extent, depth - 1, out);
    }

    #[test]
    fn agrees_with_brute_force_on_tilings_and_near_misses() {
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d_u64);
        let mut next = |bound: u64| rng.below(bound);
        let (mut tilings, mut misses) = (0, 0);
        for case in 0..3000 {
            let ndim = 1 + usize::try_from(next(5)).unwrap();
            let shape: Vec<u64> = (0..ndim).map(|_| 1 + next(5)).collect();
            let mut boxes = Vec::new();
            split(&mut next, vec![0; ndim], shape.clone(), 6, &mut boxes);
            // Perturb two cases in three: drop a box, shift one, or grow one (kept in
            // bounds and distinct, as the caller guarantees).
            match case % 3 {
                0 => {}
                1 if boxes.len() > 1 => {
                    let i = usize::try_from(next(boxes.len() as u64)).unwrap();
                    boxes.remove(i);
                }
                _ => {
                    let i = usize::try_from(next(boxes.len() as u64)).unwrap();
                    let k = usize::try_from(next(ndim as u64)).unwrap();
                    let (o, e) = &mut boxes[i];
                    if o[k] > 0 {
                        o[k] -= 1;
                    } else if o[k] + e[k] < shape[k] {
                        e[k] += 1;
                    }
                }
            }
            boxes.sort();
            boxes.dedup();
            let refs: Vec<BoxRef<'_>> = box_refs(&boxes);
            let expected = exact_cover(&shape, &boxes);
            assert_eq!(
                tiles_exactly(&shape, &refs),
                Some(expected),
                "{shape:?} {boxes:?}"
            );
            if expected {
                tilings += 1;
            } else {
                misses += 1;
            }
        }
        // Both outcomes are exercised in earnest.
        assert!(
            tilings > 900 && misses > 900,
            "{tilings} tilings, {misses} misses"
        );
    }

    #[test]
    fn many_split_axes_are_left_to_the_caller() {
        let shape = vec![2u64; 13];
        let (o, e) = (vec![0u64; 13], vec![1u64; 13]);
        let boxes = [BoxRef {
            offset: &o,
            extent: &e,
        }];
        assert_eq!(tiles_exactly(&shape, &boxes), None);
        assert_eq!(
            tiles_exactly(
                &shape[..12],
                &[BoxRef {
                    offset: &o[..12],
                    extent: &e[..12]
                }]
            ),
            Some(false)
        );
    }
}
