//! The fragment-set rules of contract §8.2 (T1, F1–F8), shared by placement and runtime
//! manifests, followed by the same-rank overlap rule (§8.3).

use std::collections::{HashMap, HashSet};

use super::box_overlap::check_box_overlap;
use super::fast_set::all_pass;
use crate::error::{Code, Error, Result};
use crate::geometry::Natural;
use crate::model::descriptor::shard_dims;
use crate::rules::fragment_box::{first_box_failure, BoxFailure, TensorFrame};
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
pub(super) fn first_failure(
    tensors: &[TensorDescriptor],
    fragments: &[LogicalFragment<'_>],
) -> Result<()> {
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

/// F4–F8 for one fragment of a known tensor ([`first_box_failure`]), as the error of
/// the first that fails.
fn check_box(tensor: &TensorDescriptor, fragment: &LogicalFragment<'_>) -> Result<()> {
    let sharded = shard_dims(tensor);
    let frame = TensorFrame {
        shape: &tensor.global_shape,
        itemsize: tensor.itemsize,
        replicated: sharded.is_empty(),
        is_shard_axis: |k: usize| sharded.contains(&(k as u64)),
    };
    let (offset, extent) = (fragment.global_offset, fragment.local_shape);
    let Some(failure) = first_box_failure(&frame, offset, extent, fragment.nbytes) else {
        return Ok(());
    };
    let id = fragment.id;
    let (code, message) = match failure {
        BoxFailure::RankMismatch => (
            Code::FragmentRankMismatch,
            format!("fragment rank mismatch: {id}"),
        ),
        BoxFailure::OutOfBounds => (
            Code::FragmentOutOfBounds,
            format!("fragment is out of bounds: {id}"),
        ),
        BoxFailure::ReplicatedOffset => (
            Code::ReplicatedFragmentOffset,
            format!("replicated fragment has an offset: {id}"),
        ),
        BoxFailure::ReplicatedIncomplete => (
            Code::ReplicatedFragmentIncomplete,
            format!("replicated fragment is incomplete: {id}"),
        ),
        BoxFailure::NonShardAxisOffset(k) => (
            Code::NonShardAxisOffset,
            format!("fragment offset uses a non-shard axis: {k}"),
        ),
        BoxFailure::NonShardAxisShape(k) => (
            Code::NonShardAxisShape,
            format!("fragment shape uses a non-shard axis: {k}"),
        ),
        BoxFailure::NbytesMismatch => {
            let mut factors = extent.to_vec();
            factors.push(tensor.itemsize);
            (
                Code::NbytesMismatch,
                format!(
                    "fragment byte size mismatch: {id}: expected {}, got {}",
                    Natural::product(&factors).to_decimal(),
                    fragment.nbytes
                ),
            )
        }
    };
    Err(Error::new(code, message))
}
