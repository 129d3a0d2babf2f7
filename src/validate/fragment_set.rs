//! The fragment-set rules of contract §8.2 (T1, F1–F8), shared by placement and runtime
//! manifests, followed by the same-rank overlap rule (§8.3).

use std::collections::{HashMap, HashSet};

use super::bignum::product_decimal;
use super::box_overlap::check_box_overlap;
use super::fast_set::all_pass;
use crate::error::{Code, Error, Result};
use crate::model::descriptor::shard_dims;
use crate::wire::{ParallelRank, TensorDescriptor};

/// The logical half of a fragment, as the fragment-set rules see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogicalFragment<'a> {
    /// placement_fragment_id for a placement, fragment_id for a runtime manifest.
    pub id: &'a str,
    pub tensor_id: &'a str,
    pub rank: &'a ParallelRank,
    pub global_offset: &'a [u64],
    pub local_shape: &'a [u64],
    pub nbytes: u64,
}

type LogicalKey<'a> = (&'a str, &'a ParallelRank, &'a [u64], &'a [u64]);

/// Runs T1, then F1–F8 per fragment in manifest order, then §8.3, on the `count`
/// fragments that `fragment(i)` describes.
///
/// A fast yes/no pass ([`all_pass`]) decides valid sets without materialising the list;
/// the exact procedure below runs only to name the first failure.
pub(crate) fn check_fragment_set<'a>(
    tensors: &[TensorDescriptor],
    count: usize,
    fragment: impl Fn(usize) -> LogicalFragment<'a>,
) -> Result<()> {
    if all_pass(tensors, count, &fragment) {
        return Ok(());
    }
    let fragments: Vec<LogicalFragment<'a>> = (0..count).map(fragment).collect();
    first_failure(tensors, &fragments)
}

/// The exact procedure: T1, then F1–F8 per fragment in manifest order, then §8.3.
fn first_failure(tensors: &[TensorDescriptor], fragments: &[LogicalFragment<'_>]) -> Result<()> {
    let mut by_id: HashMap<&str, &TensorDescriptor> = HashMap::with_capacity(tensors.len());
    for tensor in tensors {
        if by_id.insert(&tensor.tensor_id, tensor).is_some() {
            return Err(Error::new(
                Code::DuplicateTensorId,
                format!("duplicate tensor_id: {}", tensor.tensor_id),
            ));
        }
    }

    let mut ids: HashSet<&str> = HashSet::with_capacity(fragments.len());
    let mut logical: HashSet<LogicalKey<'_>> = HashSet::with_capacity(fragments.len());
    for fragment in fragments {
        if !ids.insert(fragment.id) {
            return Err(Error::new(
                Code::DuplicateFragmentId,
                format!("duplicate fragment_id: {}", fragment.id),
            ));
        }
        let key = (
            fragment.tensor_id,
            fragment.rank,
            fragment.global_offset,
            fragment.local_shape,
        );
        if !logical.insert(key) {
            return Err(Error::new(
                Code::DuplicateLogicalFragment,
                format!(
                    "duplicate logical fragment for tensor and parallel rank: {}",
                    fragment.id
                ),
            ));
        }
        let Some(tensor) = by_id.get(fragment.tensor_id) else {
            return Err(Error::new(
                Code::UnknownTensorId,
                format!("unknown tensor_id: {}", fragment.tensor_id),
            ));
        };
        check_box(tensor, fragment)?;
    }

    check_box_overlap(fragments)
}

/// F4–F8 for one fragment of a known tensor.
fn check_box(tensor: &TensorDescriptor, fragment: &LogicalFragment<'_>) -> Result<()> {
    let id = fragment.id;
    let shape = &tensor.global_shape;
    let (offset, extent) = (fragment.global_offset, fragment.local_shape);
    if offset.len() != shape.len() || extent.len() != shape.len() {
        return Err(Error::new(
            Code::FragmentRankMismatch,
            format!("fragment rank mismatch: {id}"),
        ));
    }
    let out_of_bounds = (0..shape.len()).any(|k| {
        offset[k]
            .checked_add(extent[k])
            .is_none_or(|end| end > shape[k])
    });
    if out_of_bounds {
        return Err(Error::new(
            Code::FragmentOutOfBounds,
            format!("fragment is out of bounds: {id}"),
        ));
    }
    let sharded = shard_dims(tensor);
    if sharded.is_empty() {
        if offset.iter().any(|&o| o != 0) {
            return Err(Error::new(
                Code::ReplicatedFragmentOffset,
                format!("replicated fragment has an offset: {id}"),
            ));
        }
        if extent != shape.as_slice() {
            return Err(Error::new(
                Code::ReplicatedFragmentIncomplete,
                format!("replicated fragment is incomplete: {id}"),
            ));
        }
    } else {
        for k in 0..shape.len() {
            if sharded.contains(&(k as u64)) {
                continue;
            }
            if offset[k] != 0 {
                return Err(Error::new(
                    Code::NonShardAxisOffset,
                    format!("fragment offset uses a non-shard axis: {k}"),
                ));
            }
            if extent[k] != shape[k] {
                return Err(Error::new(
                    Code::NonShardAxisShape,
                    format!("fragment shape uses a non-shard axis: {k}"),
                ));
            }
        }
    }
    let product = extent
        .iter()
        .try_fold(tensor.itemsize, |acc, &e| acc.checked_mul(e));
    if product != Some(fragment.nbytes) {
        let mut factors = extent.to_vec();
        factors.push(tensor.itemsize);
        return Err(Error::new(
            Code::NbytesMismatch,
            format!(
                "fragment byte size mismatch: {id}: expected {}, got {}",
                product_decimal(&factors),
                fragment.nbytes
            ),
        ));
    }
    Ok(())
}
