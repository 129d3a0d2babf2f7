//! F4–F8 of the fragment-set rules (§8.2) for one fragment of a known tensor: the box fits
//! the tensor's rank and bounds, uses only its shard axes, and holds exactly nbytes.

/// What F4–F8 read of a tensor. `is_shard_axis(k)` says whether axis k is one of the
/// tensor's effective shard dims; `replicated` is true when it has none.
#[derive(Clone, Copy)]
pub(crate) struct TensorFrame<'a, S> {
    /// The global_shape.
    pub shape: &'a [u64],
    /// The itemsize.
    pub itemsize: u64,
    /// Whether the tensor has no effective shard dims.
    pub replicated: bool,
    /// Whether axis k is an effective shard dim.
    pub is_shard_axis: S,
}

/// The first of F4–F8 that a fragment's box fails, in the order of §8.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoxFailure {
    /// F4: len(global_offset) or len(local_shape) differs from ndim.
    RankMismatch,
    /// F5: offset + extent exceeds the global shape (or 2^64−1) on this axis, the first.
    OutOfBounds(usize),
    /// F6a: a replicated tensor's fragment has an offset on this axis, the first.
    ReplicatedOffset(usize),
    /// F6b: a replicated tensor's fragment does not span it on this axis, the first.
    ReplicatedIncomplete(usize),
    /// F7: an offset on this non-shard axis.
    NonShardAxisOffset(usize),
    /// F7: a partial extent on this non-shard axis.
    NonShardAxisShape(usize),
    /// F8: nbytes differs from product(local_shape) × itemsize.
    NbytesMismatch,
}

/// F4–F8 (§8.2) for the box (`offset`, `extent`, `nbytes`) of a fragment of `tensor`: the
/// first failure, or `None` when all pass.
#[inline]
pub(crate) fn first_box_failure<S: Fn(usize) -> bool>(
    tensor: &TensorFrame<'_, S>,
    offset: &[u64],
    extent: &[u64],
    nbytes: u64,
) -> Option<BoxFailure> {
    let shape = tensor.shape;
    if offset.len() != shape.len() || extent.len() != shape.len() {
        return Some(BoxFailure::RankMismatch);
    }
    let axes = || shape.iter().zip(offset).zip(extent).enumerate();
    // F5; a sum above 2^64−1 is out of bounds.
    if let Some((k, _)) =
        axes().find(|(_, ((&size, &o), &e))| o.checked_add(e).is_none_or(|end| end > size))
    {
        return Some(BoxFailure::OutOfBounds(k));
    }
    if tensor.replicated {
        if let Some(k) = offset.iter().position(|&o| o != 0) {
            return Some(BoxFailure::ReplicatedOffset(k));
        }
        if let Some(k) = extent.iter().zip(shape).position(|(e, s)| e != s) {
            return Some(BoxFailure::ReplicatedIncomplete(k));
        }
    } else {
        for (k, ((&size, &o), &e)) in axes() {
            if (tensor.is_shard_axis)(k) {
                continue;
            }
            if o != 0 {
                return Some(BoxFailure::NonShardAxisOffset(k));
            }
            if e != size {
                return Some(BoxFailure::NonShardAxisShape(k));
            }
        }
    }
    // F8: the product is exact; one above 2^64−1 equals no nbytes.
    let product = extent
        .iter()
        .try_fold(tensor.itemsize, |acc, &e| acc.checked_mul(e));
    if product != Some(nbytes) {
        return Some(BoxFailure::NbytesMismatch);
    }
    None
}

/// Whether the box passes every one of F4–F8 (§8.2): [`first_box_failure`] as yes/no.
#[inline]
pub(crate) fn box_admissible<S: Fn(usize) -> bool>(
    tensor: &TensorFrame<'_, S>,
    offset: &[u64],
    extent: &[u64],
    nbytes: u64,
) -> bool {
    first_box_failure(tensor, offset, extent, nbytes).is_none()
}
