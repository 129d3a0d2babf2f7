//! Random planner scenarios from a seed: tensors of 1–4 axes, source and target tilings
//! (grids and guillotine cuts on random axes), random replica sets and random ranks.

use super::build::{FragmentSpec, TensorSpec};

/// A xorshift generator: deterministic per seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in 0..n (n ≥ 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability percent/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A u64 as an index.
pub fn index(n: u64) -> usize {
    usize::try_from(n).unwrap()
}

/// A box: (offset, extent).
pub type Boxed = (Vec<u64>, Vec<u64>);

/// A grid tiling: each axis in `axes` cut at random points.
pub fn grid(rng: &mut Rng, shape: &[u64], axes: &[usize]) -> Vec<Boxed> {
    let mut tiles = vec![(vec![0; shape.len()], shape.to_vec())];
    for &axis in axes {
        let mut cuts: Vec<u64> = (1..shape[axis]).filter(|_| rng.chance(40)).collect();
        cuts.insert(0, 0);
        cuts.push(shape[axis]);
        let mut next = Vec::new();
        for (offset, extent) in &tiles {
            for w in cuts.windows(2) {
                let (mut o, mut e) = (offset.clone(), extent.clone());
                o[axis] = w[0];
                e[axis] = w[1] - w[0];
                next.push((o, e));
            }
        }
        tiles = next;
    }
    tiles
}

/// A guillotine tiling: `cuts` times, a random tile is cut on a random axis of `axes`.
pub fn guillotine(rng: &mut Rng, shape: &[u64], axes: &[usize], cuts: u64) -> Vec<Boxed> {
    let mut tiles = vec![(vec![0; shape.len()], shape.to_vec())];
    if axes.is_empty() {
        return tiles;
    }
    for _ in 0..cuts {
        let i = index(rng.below(tiles.len() as u64));
        let axis = axes[index(rng.below(axes.len() as u64))];
        let (offset, extent) = tiles[i].clone();
        if extent[axis] < 2 {
            continue;
        }
        let at = 1 + rng.below(extent[axis] - 1);
        let (mut lo_e, mut hi_o, mut hi_e) = (extent.clone(), offset.clone(), extent.clone());
        lo_e[axis] = at;
        hi_o[axis] = offset[axis] + at;
        hi_e[axis] = extent[axis] - at;
        tiles[i] = (offset, lo_e);
        tiles.push((hi_o, hi_e));
    }
    tiles
}

/// A random tiling of `shape`: a random subset of axes, then a grid or guillotine cuts.
pub fn tiling(rng: &mut Rng, shape: &[u64]) -> Vec<Boxed> {
    let axes: Vec<usize> = (0..shape.len()).filter(|_| rng.chance(50)).collect();
    if rng.chance(50) {
        grid(rng, shape, &axes)
    } else {
        let cuts = rng.below(6);
        guillotine(rng, shape, &axes, cuts)
    }
}

/// A random test case for the planner.
pub struct Scenario {
    pub tensors: Vec<TensorSpec>,
    pub source: Vec<FragmentSpec>,
    pub target: Vec<FragmentSpec>,
    /// Whether the source DP replicas share one tiling (else each has its own).
    pub shared_source: bool,
}

/// Fragments of one side. With `shared`, one tiling whose tiles are held by random
/// nonempty DP subsets (1 or 2 copies per DP); otherwise each DP has its own tiling and
/// all but `complete` may miss tiles. Ranks: dp as chosen, tp a counter per (tensor,
/// dp) so no rank holds two boxes of a tensor, pp and ep random.
fn side(
    rng: &mut Rng,
    prefix: &str,
    tensor: &TensorSpec,
    dps: u64,
    shared: bool,
    out: &mut Vec<FragmentSpec>,
) {
    let mut tp = vec![0u64; index(dps)];
    let mut push = |rng: &mut Rng, d: u64, (offset, extent): &Boxed| {
        let n = out.len();
        let t = &mut tp[index(d)];
        out.push(FragmentSpec {
            id: format!("{prefix}{}-{n}", rng.below(100)),
            tensor: tensor.id.clone(),
            offset: offset.clone(),
            extent: extent.clone(),
            rank: (d, *t, rng.below(3), rng.below(3)),
        });
        *t += 1;
    };
    if shared {
        let tiles = tiling(rng, &tensor.shape);
        for tile in &tiles {
            let first = rng.below(dps);
            for d in 0..dps {
                if d == first || rng.chance(50) {
                    for _ in 0..=u64::from(rng.chance(25)) {
                        push(rng, d, tile);
                    }
                }
            }
        }
    } else {
        let complete = rng.below(dps);
        for d in 0..dps {
            let tiles = tiling(rng, &tensor.shape);
            for tile in &tiles {
                if d == complete || tiles.len() == 1 || rng.chance(80) {
                    push(rng, d, tile);
                }
            }
        }
    }
}

/// The scenario of `seed`.
pub fn scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let shared_source = rng.chance(60);
    let source_dps = 1 + rng.below(3);
    let target_dps = 1 + rng.below(3);
    let count = 1 + rng.below(3);
    let mut tensors = Vec::new();
    let (mut source, mut target) = (Vec::new(), Vec::new());
    for i in 0..count {
        let ndim = 1 + rng.below(4);
        let tensor = TensorSpec {
            id: format!("t{i}.w"),
            shape: (0..ndim).map(|_| 1 + rng.below(6)).collect(),
            itemsize: [1, 2, 4][index(rng.below(3))],
            layer: rng.chance(50).then(|| rng.below(4)),
            expert: rng.chance(30).then(|| rng.below(4)),
        };
        side(
            &mut rng,
            "s",
            &tensor,
            source_dps,
            shared_source,
            &mut source,
        );
        let shared_target = rng.chance(50);
        side(
            &mut rng,
            "t",
            &tensor,
            target_dps,
            shared_target,
            &mut target,
        );
        tensors.push(tensor);
    }
    Scenario {
        tensors,
        source,
        target,
        shared_source,
    }
}
