//! The compact yes/no pass of the fragment-set rules ([`all_pass`]) against the exact
//! procedure that names the first failure ([`first_failure`]), on random fragment sets of
//! one or two tensors: small boxes on a few ranks (so F2, F5–F8 and §8.3 all fail now and
//! then), with nbytes usually right. A "yes" must never meet an error, and the compact
//! pass must decide most valid sets itself, so one that always declines fails here.

use super::fast::all_pass;
use super::{first_failure, LogicalFragment};
use crate::limits::DEFAULT_MAX_GEOMETRY_WORK;
use crate::test_support::Rng;
use crate::wire::{ParallelRank, TensorDescriptor};

struct Owned {
    id: String,
    tensor_id: &'static str,
    rank: ParallelRank,
    global_offset: Vec<u64>,
    local_shape: Vec<u64>,
    nbytes: u64,
}

fn tensor(tensor_id: &str, ndim: usize, shard_dims: Vec<u64>) -> TensorDescriptor {
    TensorDescriptor {
        dtype: "u8".to_owned(),
        expert_id: None,
        global_shape: vec![4; ndim],
        itemsize: 2,
        layer_id: None,
        layout_fingerprint: "fp".to_owned(),
        partition_dim: None,
        shard_dims: Some(shard_dims),
        tensor_id: tensor_id.to_owned(),
    }
}

/// A random set: fragments of "a" (sharded on a random subset of its axes) and "b"
/// (replicated), a few of them on one rank.
fn random_set(rng: &mut Rng) -> (Vec<TensorDescriptor>, Vec<Owned>) {
    let ndim = 1 + usize::try_from(rng.below(3)).unwrap();
    let shard_dims: Vec<u64> = (0..ndim as u64).filter(|_| rng.below(3) != 0).collect();
    let tensors = vec![
        tensor("a", ndim, shard_dims.clone()),
        tensor("b", 1, vec![]),
    ];
    let count = 1 + usize::try_from(rng.below(6)).unwrap();
    let fragments = (0..count)
        .map(|i| {
            let replicated = rng.below(4) == 0;
            let (tensor_id, axes) = if replicated { ("b", 1) } else { ("a", ndim) };
            let mut global_offset = Vec::with_capacity(axes);
            let mut local_shape = Vec::with_capacity(axes);
            for k in 0..axes {
                let free = !replicated && shard_dims.contains(&(k as u64));
                // Mostly in bounds and on the shard axes only.
                let (offset, extent) = if free || rng.below(12) == 0 {
                    let offset = rng.below(4);
                    let past_the_end = u64::from(rng.below(12) == 0);
                    (offset, 1 + rng.below(4 - offset + past_the_end))
                } else {
                    (0, 4)
                };
                global_offset.push(offset);
                local_shape.push(extent);
            }
            let mut nbytes = 2 * local_shape.iter().product::<u64>();
            if rng.below(12) == 0 {
                nbytes += 2;
            }
            Owned {
                id: format!("f{i}"),
                tensor_id,
                rank: ParallelRank {
                    dp: 0,
                    ep: 0,
                    pp: 0,
                    tp: rng.below(count as u64),
                },
                global_offset,
                local_shape,
                nbytes,
            }
        })
        .collect();
    (tensors, fragments)
}

#[test]
fn the_compact_pass_decides_most_valid_sets_and_never_says_yes_wrongly() {
    let mut rng = Rng::new(0x0f8a_55e7);
    let (mut valid, mut decided, mut invalid) = (0, 0, 0);
    for _ in 0..3000 {
        let (tensors, owned) = random_set(&mut rng);
        let fragment = |i: usize| {
            let f = &owned[i];
            LogicalFragment {
                id: &f.id,
                id_key: "placement_fragment_id",
                tensor_id: f.tensor_id,
                rank: &f.rank,
                global_offset: &f.global_offset,
                local_shape: &f.local_shape,
                nbytes: f.nbytes,
            }
        };
        let fragments: Vec<LogicalFragment<'_>> = (0..owned.len()).map(fragment).collect();
        let exact = first_failure(&tensors, &fragments, DEFAULT_MAX_GEOMETRY_WORK);
        let compact = all_pass(&tensors, owned.len(), &fragment, DEFAULT_MAX_GEOMETRY_WORK);
        if compact {
            assert_eq!(exact, Ok(()), "the compact pass accepted an invalid set");
        }
        match exact {
            Ok(()) => {
                valid += 1;
                decided += usize::from(compact);
            }
            Err(_) => invalid += 1,
        }
    }
    assert!(
        valid > 500 && invalid > 500,
        "{valid} valid, {invalid} invalid"
    );
    // Measured: every valid set. A compact pass that declines even a few fails.
    assert!(
        decided * 100 >= valid * 99,
        "{decided} of {valid} valid sets decided"
    );
}
