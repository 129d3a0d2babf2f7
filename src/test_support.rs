//! Helpers shared by the unit tests: a seeded pseudo-random source, and boxes borrowed
//! from owned coordinates.

use crate::geometry::BoxRef;

/// A xorshift generator: seeded, so each test sees the same cases on every run.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator starting from `seed` (not 0).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next number below `bound` (0 when `bound` is 0).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// The boxes of `(offset, extent)` pairs.
pub(crate) fn box_refs(raw: &[(Vec<u64>, Vec<u64>)]) -> Vec<BoxRef<'_>> {
    raw.iter()
        .map(|(o, e)| BoxRef {
            offset: o,
            extent: e,
        })
        .collect()
}

/// Every point of a tensor of `shape` in row-major order, with the number of `(offset,
/// extent)` boxes covering it: the brute-force answer for small tensors.
pub(crate) fn coverage_counts(
    shape: &[u64],
    raw: &[(Vec<u64>, Vec<u64>)],
) -> Vec<(Vec<u64>, usize)> {
    let total: u64 = shape.iter().product();
    (0..total)
        .map(|flat| {
            let mut point = vec![0u64; shape.len()];
            let mut rest = flat;
            for k in (0..shape.len()).rev() {
                point[k] = rest % shape[k];
                rest /= shape[k];
            }
            let hits = raw
                .iter()
                .filter(|(o, e)| {
                    (0..shape.len()).all(|k| o[k] <= point[k] && point[k] < o[k] + e[k])
                })
                .count();
            (point, hits)
        })
        .collect()
}
