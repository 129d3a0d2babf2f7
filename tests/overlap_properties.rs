//! The overlap rules against brute-force oracles (issue: reliability): random boxes in
//! 1–6 dimensions on a few ranks (adjacent, nested, identical and disjoint boxes all
//! occur on a small grid), and random address ranges with declared aliases in a few
//! address spaces. Both the verdict and the named pair must match the contract's
//! procedure (§8.3, §8.5), computed here the slow, obvious way.

use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use weight_manifest::Options;
use weight_manifest::{Code, Placement, Runtime};

#[derive(Clone, Debug)]
struct Fragment {
    rank: u64,
    offset: Vec<u64>,
    extent: Vec<u64>,
}

fn intersects(a: &Fragment, b: &Fragment) -> bool {
    (0..a.offset.len())
        .all(|k| a.offset[k] < b.offset[k] + b.extent[k] && b.offset[k] < a.offset[k] + a.extent[k])
}

/// §8.3 as written: groups in first-appearance order, sweep axis with the most distinct
/// (offset, end) pairs (lowest on ties), stable sort, active list in insertion order.
fn oracle(fragments: &[Fragment]) -> Option<(usize, usize)> {
    let mut ranks: Vec<u64> = Vec::new();
    for f in fragments {
        if !ranks.contains(&f.rank) {
            ranks.push(f.rank);
        }
    }
    for rank in ranks {
        let group: Vec<usize> = (0..fragments.len())
            .filter(|&i| fragments[i].rank == rank)
            .collect();
        if group.len() < 2 {
            continue;
        }
        let ndim = fragments[group[0]].offset.len();
        let distinct = |axis: usize| {
            let mut pairs: Vec<(u64, u64)> = group
                .iter()
                .map(|&i| {
                    (
                        fragments[i].offset[axis],
                        fragments[i].offset[axis] + fragments[i].extent[axis],
                    )
                })
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            pairs.len()
        };
        let mut sweep = 0;
        for axis in 1..ndim {
            if distinct(axis) > distinct(sweep) {
                sweep = axis;
            }
        }
        let mut order = group.clone();
        order.sort_by_key(|&i| fragments[i].offset[sweep]);
        let mut active: Vec<usize> = Vec::new();
        for &c in &order {
            let start = fragments[c].offset[sweep];
            active.retain(|&p| fragments[p].offset[sweep] + fragments[p].extent[sweep] > start);
            if let Some(&p) = active
                .iter()
                .find(|&&p| intersects(&fragments[p], &fragments[c]))
            {
                return Some((p, c));
            }
            active.push(c);
        }
    }
    None
}

fn placement_text(fragments: &[Fragment], shape: &[u64]) -> String {
    let dims: Vec<String> = (0..shape.len()).map(|d| d.to_string()).collect();
    let mut text = format!(
        r#"{{"model_id":"m","revision":"r","placement_id":null,"tensors":[{{"tensor_id":"t","global_shape":{shape:?},"dtype":"u8","itemsize":1,"partition_dim":null,"shard_dims":[{}],"layout_fingerprint":"f","layer_id":null,"expert_id":null}}],"fragments":["#,
        dims.join(",")
    );
    for (i, f) in fragments.iter().enumerate() {
        let nbytes: u64 = f.extent.iter().product();
        if i > 0 {
            text.push(',');
        }
        let _ = write!(
            text,
            r#"{{"placement_fragment_id":"f{i:02}","tensor_id":"t","global_offset":{:?},"local_shape":{:?},"nbytes":{nbytes},"rank":{{"dp":0,"tp":{},"pp":0,"ep":0}},"aliases":[]}}"#,
            f.offset, f.extent, f.rank
        );
    }
    text.push_str("]}");
    text
}

fn boxes() -> impl Strategy<Value = (Vec<u64>, Vec<Fragment>)> {
    (1usize..=6).prop_flat_map(|ndim| {
        let fragment =
            (0u64..3, prop::collection::vec((0u64..4, 1u64..3), ndim)).prop_map(|(rank, axes)| {
                Fragment {
                    rank,
                    offset: axes.iter().map(|a| a.0).collect(),
                    extent: axes.iter().map(|a| a.1).collect(),
                }
            });
        (
            Just(vec![6u64; ndim]),
            prop::collection::vec(fragment, 2..12),
        )
    })
}

#[test]
fn same_rank_box_overlap_matches_the_contract_procedure() {
    let mut runner = TestRunner::new(Config {
        cases: 1500,
        ..Config::default()
    });
    runner
        .run(&boxes(), |(shape, fragments)| {
            // Fragments are sorted by id before the rules run; ids f00.. keep input order.
            let outcome = Placement::from_json(placement_text(&fragments, &shape), &Options::default());
            // §8.2 F2 runs first: an identical box on the same rank is a duplicate.
            let duplicate = (0..fragments.len()).find(|&c| {
                (0..c).any(|p| {
                    let (a, b) = (&fragments[p], &fragments[c]);
                    a.rank == b.rank && a.offset == b.offset && a.extent == b.extent
                })
            });
            if let Some(c) = duplicate {
                let error = outcome.expect_err("a duplicate logical fragment");
                prop_assert_eq!(error.code(), Code::DuplicateLogicalFragment);
                let suffix = format!(": f{c:02}");
                prop_assert!(error.message().ends_with(&suffix), "{}", error.message());
                return Ok(());
            }
            match oracle(&fragments) {
                None => prop_assert!(outcome.is_ok(), "{:?}", outcome.err()),
                Some((first, second)) => {
                    let error = outcome.expect_err("the oracle found an overlap");
                    prop_assert_eq!(error.code(), Code::FragmentOverlap);
                    let expected = format!(
                        "logical fragment boxes overlap for tensor and parallel rank: f{first:02} and f{second:02}"
                    );
                    prop_assert_eq!(error.message(), expected.as_str());
                }
            }
            Ok(())
        })
        .unwrap();
}

#[derive(Clone, Debug)]
struct Range {
    space: u64,
    address: u64,
    nbytes: u64,
    aliased: bool,
}

/// §8.5 as written, with every fragment of one 1-D tensor at the same box, so alias pairs
/// are decided by address, nbytes and the declared alias list alone.
fn physical_oracle(ranges: &[Range]) -> Option<(usize, usize)> {
    let mut spaces: Vec<u64> = Vec::new();
    for r in ranges {
        if !spaces.contains(&r.space) {
            spaces.push(r.space);
        }
    }
    for space in spaces {
        let mut order: Vec<usize> = (0..ranges.len())
            .filter(|&i| ranges[i].space == space)
            .collect();
        order.sort_by_key(|&i| ranges[i].address);
        let mut active: Vec<usize> = Vec::new();
        for &c in &order {
            active.retain(|&p| ranges[p].address + ranges[p].nbytes > ranges[c].address);
            for &p in &active {
                let alias = ranges[p].aliased
                    && ranges[c].aliased
                    && ranges[p].address == ranges[c].address
                    && ranges[p].nbytes == ranges[c].nbytes;
                if !alias {
                    return Some((p, c));
                }
            }
            active.push(c);
        }
    }
    None
}

fn runtime_text(ranges: &[Range]) -> String {
    let mut text = String::from(
        r#"{"model_id":"m","revision":"r","instance_id":"i","lease_id":null,"placement_id":null,"generation":null,"tensors":[{"tensor_id":"t","global_shape":[8],"dtype":"u8","itemsize":1,"partition_dim":null,"shard_dims":null,"layout_fingerprint":"f","layer_id":null,"expert_id":null}],"fragments":["#,
    );
    for (i, r) in ranges.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        let aliases = if r.aliased { r#"["a","b"]"# } else { "[]" };
        // Distinct ranks keep the logical fragments distinct (§8.2 F2); the box is the
        // whole replicated tensor, so nbytes must be 8: the byte range is [address, +8).
        let _ = write!(
            text,
            r#"{{"fragment_id":"r{i:02}","tensor_id":"t","global_offset":[0],"local_shape":[8],"address":{},"nbytes":8,"worker_id":"w{}","endpoint":"e{i}","device":"d","rank":{{"dp":{i},"tp":0,"pp":0,"ep":0}},"lease_generation":0,"aliases":{aliases},"placement_fragment_id":null}}"#,
            r.address, r.space
        );
    }
    text.push_str("]}");
    text
}

#[test]
fn physical_overlap_matches_the_contract_procedure() {
    let range = (0u64..3, 1u64..40, any::<bool>()).prop_map(|(space, address, aliased)| Range {
        space,
        address: address * 4,
        nbytes: 8,
        aliased,
    });
    let mut runner = TestRunner::new(Config {
        cases: 1500,
        ..Config::default()
    });
    runner
        .run(&prop::collection::vec(range, 2..14), |ranges| {
            let outcome = Runtime::from_json(runtime_text(&ranges), &Options::default());
            match physical_oracle(&ranges) {
                None => prop_assert!(outcome.is_ok(), "{:?}", outcome.err()),
                Some((first, second)) => {
                    let error = outcome.expect_err("the oracle found an overlap");
                    prop_assert_eq!(error.code(), Code::AddressOverlap);
                    let prefix = format!(
                        "runtime manifest address ranges overlap: r{first:02} and r{second:02} in "
                    );
                    prop_assert!(
                        error.message().starts_with(&prefix),
                        "{} vs {}",
                        error.message(),
                        prefix
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}
