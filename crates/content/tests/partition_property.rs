//! Property: a tensor's digest does not depend on how it is cut into fragments, and any
//! one-byte change changes it.
//!
//! Random tensors (1 to 3 dimensions, itemsize 1, 2 or 4, block size 1 to 7, so offsets are
//! mostly not multiples of B) are cut by random cut points on every axis; each box's partial
//! is computed from its own contiguous copy or from the whole buffer, some boxes get
//! replicas, the fragments are shuffled, and the combination must equal the digest of the
//! whole tensor.

#![allow(clippy::cast_possible_truncation)] // small test sizes

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{combine, partial, Fragment, Partial, Tensor};

/// A tensor and a layout: shape, itemsize, block size, bytes, and per axis the sorted cuts.
#[derive(Clone, Debug)]
struct Case {
    shape: Vec<u64>,
    itemsize: u64,
    block: u64,
    bytes: Vec<u8>,
    cuts: Vec<Vec<u64>>,
    replicate: Vec<bool>,
    order_seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1_u64..=9, 1..=3),
        prop::sample::select(vec![1_u64, 2, 4]),
        1_u64..=7,
    )
        .prop_flat_map(|(shape, itemsize, block)| {
            let len = (shape.iter().product::<u64>() * itemsize) as usize;
            let cuts: Vec<_> = shape
                .iter()
                .map(|&d| {
                    prop::collection::btree_set(1..d.max(2), 0..d as usize)
                        .prop_map(move |s| s.into_iter().filter(|&c| c < d).collect::<Vec<u64>>())
                })
                .collect();
            (
                Just(shape),
                Just(itemsize),
                Just(block),
                prop::collection::vec(any::<u8>(), len),
                cuts,
                prop::collection::vec(any::<bool>(), 64),
                any::<u64>(),
            )
        })
        .prop_map(
            |(shape, itemsize, block, bytes, cuts, replicate, order_seed)| Case {
                shape,
                itemsize,
                block,
                bytes,
                cuts,
                replicate,
                order_seed,
            },
        )
}

/// The boxes of the grid the cuts make, in row-major order of the grid.
fn boxes(case: &Case) -> Vec<(Vec<u64>, Vec<u64>)> {
    let axes: Vec<Vec<(u64, u64)>> = case
        .shape
        .iter()
        .zip(&case.cuts)
        .map(|(&d, cuts)| {
            let mut edges = vec![0];
            edges.extend(cuts);
            edges.push(d);
            edges.windows(2).map(|w| (w[0], w[1] - w[0])).collect()
        })
        .collect();
    let mut out = vec![(Vec::new(), Vec::new())];
    for axis in &axes {
        out = out
            .into_iter()
            .flat_map(|(o, l)| {
                axis.iter().map(move |&(a, n)| {
                    let (mut o, mut l) = (o.clone(), l.clone());
                    o.push(a);
                    l.push(n);
                    (o, l)
                })
            })
            .collect();
    }
    out
}

/// The contiguous bytes of a box of the row-major tensor.
fn copy_box(case: &Case, offset: &[u64], local: &[u64]) -> Vec<u8> {
    let s = case.itemsize as usize;
    let k = case.shape.len();
    let mut out = Vec::new();
    let rows: u64 = local[..k - 1].iter().product();
    for i in 0..rows {
        let mut rest = i;
        let mut flat = 0_u64;
        for axis in 0..k - 1 {
            let inner: u64 = local[axis + 1..k - 1].iter().product();
            let idx = rest / inner;
            rest %= inner;
            flat = flat * case.shape[axis] + offset[axis] + idx;
        }
        let start = ((flat * case.shape[k - 1] + offset[k - 1]) as usize) * s;
        out.extend_from_slice(&case.bytes[start..start + local[k - 1] as usize * s]);
    }
    out
}

fn digest_of(case: &Case, bytes: &[u8]) -> weight_manifest_content::Digest {
    let tensor = Tensor::new("model.layers.0.w", &case.shape, case.itemsize, case.block).unwrap();
    partial::digest(&tensor, bytes).unwrap()
}

proptest! {
    #![proptest_config(Config { cases: 400, rng_seed: RngSeed::Fixed(20), ..Config::default() })]

    #[test]
    fn any_layout_gives_the_whole_digest(case in case()) {
        let tensor = Tensor::new("model.layers.0.w", &case.shape, case.itemsize, case.block).unwrap();
        let whole = partial::digest(&tensor, &case.bytes).unwrap();
        let boxes = boxes(&case);
        let mut parts: Vec<(Vec<u64>, Vec<u64>, Partial)> = Vec::new();
        for (i, (o, l)) in boxes.iter().enumerate() {
            let p = if i % 2 == 0 {
                partial::partial(&tensor, o, l, &copy_box(&case, o, l)).unwrap()
            } else {
                let buffer = Buffer { bytes: &case.bytes, shape: &case.shape, offset: o };
                partial::partial_in(&tensor, o, l, buffer).unwrap()
            };
            if case.replicate[i % 64] {
                parts.push((o.clone(), l.clone(), p.clone()));
            }
            parts.push((o.clone(), l.clone(), p));
        }
        // A deterministic shuffle from the case's seed.
        let mut state = case.order_seed | 1;
        for i in (1..parts.len()).rev() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            parts.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let fragments: Vec<Fragment<'_>> = parts
            .iter()
            .map(|(o, l, p)| Fragment { global_offset: o, local_shape: l, partial: p })
            .collect();
        prop_assert_eq!(combine(&tensor, &fragments).unwrap(), whole);
    }

    #[test]
    fn any_one_byte_change_changes_the_digest(case in case(), at in any::<prop::sample::Index>(), flip in 1_u8..=255) {
        let before = digest_of(&case, &case.bytes);
        let mut bytes = case.bytes.clone();
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        prop_assert_ne!(digest_of(&case, &bytes), before);
    }
}

/// A u64 that is small, near a block or shape boundary, or huge.
fn wild() -> impl Strategy<Value = u64> {
    prop_oneof![
        0_u64..12,
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1_u64 << 63),
        any::<u64>()
    ]
}

proptest! {
    #![proptest_config(Config { cases: 2000, rng_seed: RngSeed::Fixed(21), ..Config::default() })]

    /// Arbitrary geometry, buffers and partials never panic: every call returns a value or
    /// an error with a content code.
    #[test]
    fn hostile_input_never_panics(
        shape in prop::collection::vec(wild(), 0..4),
        itemsize in wild(),
        block in wild(),
        offset in prop::collection::vec(wild(), 0..4),
        local in prop::collection::vec(wild(), 0..4),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
        edges in prop::collection::vec((wild(), wild(), wild(), prop::collection::vec(any::<u8>(), 0..5)), 0..6),
        sum in any::<u128>(),
    ) {
        let Ok(tensor) = Tensor::new("t", &shape, itemsize, block) else { return Ok(()) };
        let code = |e: weight_manifest::Error| e.code().as_str().starts_with("content_");
        if let Err(e) = partial::partial(&tensor, &offset, &local, &bytes) {
            prop_assert!(code(e));
        }
        let buffer = Buffer { bytes: &bytes, shape: &local, offset: &offset };
        if let Err(e) = partial::partial_in(&tensor, &offset, &local, buffer) {
            prop_assert!(code(e));
        }
        let p = Partial {
            sum: weight_manifest_content::Digest(sum),
            edges: edges
                .into_iter()
                .map(|(row, block, start, bytes)| weight_manifest_content::Edge { row, block, start, bytes })
                .collect(),
        };
        let f = Fragment { global_offset: &offset, local_shape: &local, partial: &p };
        let whole_offset = vec![0; tensor.shape().len()];
        let g = Fragment { global_offset: &whole_offset, local_shape: tensor.shape(), partial: &p };
        for list in [vec![f], vec![g], vec![f, g], vec![g, g]] {
            if let Err(e) = combine(&tensor, &list) {
                prop_assert!(code(e));
            }
        }
    }
}
