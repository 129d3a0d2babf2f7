//! The fragment-set rules of contract §8.2 (T1, F1–F8), shared by placement and runtime
//! manifests, followed by the same-rank overlap rule (§8.3).

pub(crate) mod fast;
pub(crate) mod fragment_box;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use crate::error::{Code, Detail, Error, Result};
use crate::geometry::Natural;
use crate::locate::Site;
use crate::rules::box_overlap::check_box_overlap;
use crate::rules::descriptor::shard_dims;
pub(crate) use crate::rules::logical::LogicalFragment;
use crate::wire::{key, ParallelRank, TensorDescriptor};
use fast::all_pass;
use fragment_box::{first_box_failure, BoxFailure, TensorFrame};

type LogicalKey<'a> = (&'a str, &'a ParallelRank, &'a [u64], &'a [u64]);

/// Runs T1, then F1–F8 per fragment in manifest order, then §8.3, on the `count`
/// fragments that `fragment(i)` describes; the overlap searches spend at most `per_box`
/// units per box (`max_geometry_work`).
///
/// A fast yes/no pass ([`all_pass`]) decides valid sets without materialising the list;
/// the exact procedure below runs only to name the first failure.
pub(crate) fn check_fragment_set<'a>(
    tensors: &[TensorDescriptor],
    count: usize,
    per_box: u64,
    fragment: impl Fn(usize) -> LogicalFragment<'a>,
) -> Result<()> {
    if all_pass(tensors, count, &fragment, per_box) {
        return Ok(());
    }
    let fragments: Vec<LogicalFragment<'a>> = (0..count).map(fragment).collect();
    first_failure(tensors, &fragments, per_box)
}

/// The exact procedure: T1, then F1–F8 per fragment in manifest order, then §8.3. Each
/// error names the element it rejects by its [`Site`] in these lists (and, for a
/// duplicate, the first of the two), for the constructor to locate.
pub(super) fn first_failure(
    tensors: &[TensorDescriptor],
    fragments: &[LogicalFragment<'_>],
    per_box: u64,
) -> Result<()> {
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(tensors.len());
    for (i, tensor) in tensors.iter().enumerate() {
        if let Some(&first) = by_id.get(tensor.tensor_id.as_str()) {
            let at = |i| Site::tensor(i).member(key::TENSOR_ID);
            return Err(Error::at_site(
                Code::DuplicateTensorId,
                format!("duplicate tensor_id: {}", tensor.tensor_id),
                at(i),
            )
            .with_detail(duplicate(&tensor.tensor_id))
            .with_other_site(at(first)));
        }
        by_id.insert(&tensor.tensor_id, i);
    }

    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(fragments.len());
    let mut logical: HashMap<LogicalKey<'_>, usize> = HashMap::with_capacity(fragments.len());
    for (i, fragment) in fragments.iter().enumerate() {
        let site = Site::fragment(i);
        if let Some(&first) = ids.get(fragment.id) {
            let at = |i| Site::fragment(i).member(fragment.id_key);
            return Err(Error::at_site(
                Code::DuplicateFragmentId,
                format!("duplicate fragment_id: {}", fragment.id),
                at(i),
            )
            .with_detail(duplicate(fragment.id))
            .with_other_site(at(first)));
        }
        ids.insert(fragment.id, i);
        let key = (
            fragment.tensor_id,
            fragment.rank,
            fragment.global_offset,
            fragment.local_shape,
        );
        if let Some(&first) = logical.get(&key) {
            let rank = fragment.rank;
            let identity = format!(
                "tensor {} on rank dp{}.pp{}.tp{}.ep{} with box offset {:?} shape {:?}",
                fragment.tensor_id,
                rank.dp,
                rank.pp,
                rank.tp,
                rank.ep,
                fragment.global_offset,
                fragment.local_shape
            );
            return Err(Error::at_site(
                Code::DuplicateLogicalFragment,
                format!(
                    "duplicate logical fragment for tensor and parallel rank: {}",
                    fragment.id
                ),
                site,
            )
            .with_detail(duplicate(&identity))
            .with_other_site(Site::fragment(first)));
        }
        logical.insert(key, i);
        let Some(&tensor) = by_id.get(fragment.tensor_id) else {
            return Err(Error::at_site(
                Code::UnknownTensorId,
                format!("unknown tensor_id: {}", fragment.tensor_id),
                site.member(key::TENSOR_ID),
            ));
        };
        check_box(&tensors[tensor], fragment, site)?;
    }

    check_box_overlap(fragments, per_box)
}

/// The detail of a duplicate whose other element is named by a site.
fn duplicate(key: &str) -> Detail {
    Detail::Duplicate {
        key: key.to_owned(),
        other: None,
    }
}

/// F4–F8 for one fragment of a known tensor ([`first_box_failure`]), as the error of
/// the first that fails, at the member (and axis) that fails it.
fn check_box(tensor: &TensorDescriptor, fragment: &LogicalFragment<'_>, site: Site) -> Result<()> {
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
    let wide = |n: usize| n as u64;
    // The box on axis k, at the member that makes it fail there.
    let axis = |k: usize, key: &'static str| {
        let (o, e, size) = (offset[k], extent[k], tensor.global_shape[k]);
        let detail = Detail::BoxAxis {
            axis: wide(k),
            offset: o,
            extent: e,
            size,
        };
        (site.member(key).element(k), Some(detail))
    };
    let (code, message, (at, detail)) = match failure {
        BoxFailure::RankMismatch => {
            let ndim = tensor.global_shape.len();
            let member = if offset.len() == ndim {
                key::LOCAL_SHAPE
            } else {
                key::GLOBAL_OFFSET
            };
            let detail = Detail::RankMismatch {
                ndim: wide(ndim),
                offset_len: wide(offset.len()),
                shape_len: wide(extent.len()),
            };
            (
                Code::FragmentRankMismatch,
                format!("fragment rank mismatch: {id}"),
                (site.member(member), Some(detail)),
            )
        }
        BoxFailure::OutOfBounds(k) => {
            // An offset at or past the end is the wrong value; else the extent is.
            let member = if offset[k] >= tensor.global_shape[k] {
                key::GLOBAL_OFFSET
            } else {
                key::LOCAL_SHAPE
            };
            (
                Code::FragmentOutOfBounds,
                format!("fragment is out of bounds: {id}"),
                axis(k, member),
            )
        }
        BoxFailure::ReplicatedOffset(k) => (
            Code::ReplicatedFragmentOffset,
            format!("replicated fragment has an offset: {id}"),
            axis(k, key::GLOBAL_OFFSET),
        ),
        BoxFailure::ReplicatedIncomplete(k) => (
            Code::ReplicatedFragmentIncomplete,
            format!("replicated fragment is incomplete: {id}"),
            axis(k, key::LOCAL_SHAPE),
        ),
        BoxFailure::NonShardAxisOffset(k) => (
            Code::NonShardAxisOffset,
            format!("fragment offset uses a non-shard axis: {k}"),
            axis(k, key::GLOBAL_OFFSET),
        ),
        BoxFailure::NonShardAxisShape(k) => (
            Code::NonShardAxisShape,
            format!("fragment shape uses a non-shard axis: {k}"),
            axis(k, key::LOCAL_SHAPE),
        ),
        BoxFailure::NbytesMismatch => {
            let mut factors = extent.to_vec();
            factors.push(tensor.itemsize);
            let expected = Natural::product(&factors).to_decimal();
            let message = format!(
                "fragment byte size mismatch: {id}: expected {expected}, got {}",
                fragment.nbytes
            );
            let detail = Detail::Mismatch {
                expected,
                got: fragment.nbytes.to_string(),
                other: None,
            };
            (
                Code::NbytesMismatch,
                message,
                (site.member(key::NBYTES), Some(detail)),
            )
        }
    };
    let error = Error::at_site(code, message, at);
    Err(match detail {
        Some(detail) => error.with_detail(detail),
        None => error,
    })
}
