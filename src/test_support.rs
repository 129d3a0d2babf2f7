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

    /// A number of dimensions from 1 to `max`.
    pub(crate) fn ndim(&mut self, max: u64) -> usize {
        1 + usize::try_from(self.below(max)).unwrap_or(0)
    }

    /// `count` boxes of `ndim` axes: each offset below `offset_below`, each extent
    /// `extent.0` plus a number below `extent.1`.
    pub(crate) fn boxes(
        &mut self,
        count: u64,
        ndim: usize,
        offset_below: u64,
        extent: (u64, u64),
    ) -> Vec<(Vec<u64>, Vec<u64>)> {
        (0..count)
            .map(|_| {
                let offset = (0..ndim).map(|_| self.below(offset_below)).collect();
                let shape = (0..ndim).map(|_| extent.0 + self.below(extent.1)).collect();
                (offset, shape)
            })
            .collect()
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

/// Owned `(offset, extent)` pairs.
pub(crate) type RawBoxes = Vec<(Vec<u64>, Vec<u64>)>;

/// The hostile slab family of SECURITY.md ("Superlinear paths and their bounds") in
/// `ndim` ≥ 2 dimensions: the tensor's shape and `ndim × m` pairwise disjoint boxes.
/// Kind j (one per axis) holds boxes that are one element thick on axis j (at k, for k
/// in 0..m) and overlap on every other axis, so every pair of axes sees m² overlapping
/// pairs. Kinds are side by side along axis 0, N = 4 apart.
pub(crate) fn slab_family(ndim: usize, m: u64) -> (Vec<u64>, RawBoxes) {
    const N: u64 = 4;
    let d = ndim as u64;
    let wide = N.max(m);
    let mut shape = vec![wide; ndim];
    shape[0] = (d - 1) * N + m;
    let mut boxes = Vec::new();
    for k in 0..m {
        for j in 0..ndim {
            let (mut offset, mut extent) = (vec![0u64; ndim], vec![0u64; ndim]);
            let mut bit = 0;
            for axis in 0..ndim {
                if axis == j {
                    offset[axis] = if j == 0 { (d - 1) * N + k } else { k };
                    extent[axis] = 1;
                    continue;
                }
                let b = (k >> bit) & 1;
                bit += 1;
                let block = if axis == 0 { (d - 1 - j as u64) * N } else { 0 };
                offset[axis] = block + b;
                extent[axis] = N - b;
            }
            boxes.push((offset, extent));
        }
    }
    (shape, boxes)
}

/// The fast paths as the agreement tests call them: on bytes (`None` unless UTF-8), and
/// an accepted document as `Some(Ok(_))`, so that it compares with the general path's
/// result (a fast path never rejects).
pub(crate) fn fast_placement(
    text: &[u8],
    limits: &crate::limits::Limits,
) -> Option<crate::error::Result<crate::model::Placement>> {
    crate::parse::fast_placement(std::str::from_utf8(text).ok()?, limits).map(Ok)
}

/// [`fast_placement`] for the runtime inventory's fast path.
pub(crate) fn fast_runtime_inventory(
    text: &[u8],
    options: &crate::options::Options<'_>,
) -> Option<crate::error::Result<crate::model::Runtime>> {
    crate::inventory::fast_runtime_inventory(std::str::from_utf8(text).ok()?, options).map(Ok)
}

/// The compact validation of a runtime inventory, on bytes.
pub(crate) fn fast_runtime_inventory_summary(
    text: &[u8],
    options: &crate::options::Options<'_>,
) -> Option<crate::inventory::RuntimeSummary> {
    crate::inventory::fast_runtime_inventory_summary(std::str::from_utf8(text).ok()?, options)
}

/// The DeepSeek-V3-like model cut to 4 layers on a small grid (4 experts, TP2, PP2, its
/// DP2): the generated documents of the fast-path tests.
pub(crate) fn small_model() -> weight_manifest_bench_data::Model {
    weight_manifest_bench_data::Model {
        experts: 4,
        tp: 2,
        pp: 2,
        ..weight_manifest_bench_data::Model::deepseek_v3().truncated(4)
    }
}

/// The generated placement of `model`.
pub(crate) fn placement_text(model: &weight_manifest_bench_data::Model) -> Vec<u8> {
    let mut text = Vec::new();
    weight_manifest_bench_data::write_placement(model, &mut text).unwrap();
    text
}

/// The generated runtime inventory of `model`.
pub(crate) fn inventory_text(model: &weight_manifest_bench_data::Model) -> Vec<u8> {
    let mut text = Vec::new();
    weight_manifest_bench_data::write_runtime_inventory(model, &mut text).unwrap();
    text
}

/// A proptest configuration of `cases` cases from the fixed `seed`, without a failure
/// file: the same cases on every run.
pub(crate) fn fixed_seed(cases: u32, seed: u64) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
