//! The exact declared alias pair of the physical address rules (§8.5): the one case in
//! which two fragments of one address space may share bytes.

use crate::wire::TensorDescriptor;

/// What the exact alias pair rule reads of a runtime fragment.
#[derive(Clone, Copy)]
pub(crate) struct AliasCandidate<'a> {
    /// The first byte.
    pub address: u64,
    /// The byte count.
    pub nbytes: u64,
    /// The lease generation.
    pub lease_generation: u64,
    /// The declared aliases, held sorted (ALIASES, §1.4).
    pub aliases: &'a [String],
    /// The box's offset.
    pub global_offset: &'a [u64],
    /// The box's extent.
    pub local_shape: &'a [u64],
    /// Its tensor's canonical descriptor.
    pub descriptor: &'a TensorDescriptor,
}

/// §8.5: whether `a` and `b` form an exact declared alias pair. The same address, nbytes
/// and lease_generation; the same aliases, at least two of them; the same global_offset
/// and local_shape; the same canonical descriptor but for tensor_id. Ranks may differ.
#[inline]
pub(crate) fn exact_alias_pair(a: &AliasCandidate<'_>, b: &AliasCandidate<'_>) -> bool {
    a.address == b.address
        && a.nbytes == b.nbytes
        && a.lease_generation == b.lease_generation
        && a.aliases.len() >= 2
        && a.aliases == b.aliases
        && a.global_offset == b.global_offset
        && a.local_shape == b.local_shape
        && same_layout(a.descriptor, b.descriptor)
}

/// Whether two descriptors agree in every member but tensor_id (an exact alias pair may
/// join two tensors of one layout).
#[inline]
fn same_layout(a: &TensorDescriptor, b: &TensorDescriptor) -> bool {
    a.global_shape == b.global_shape
        && a.dtype == b.dtype
        && a.itemsize == b.itemsize
        && a.partition_dim == b.partition_dim
        && a.shard_dims == b.shard_dims
        && a.layer_id == b.layer_id
        && a.expert_id == b.expert_id
        && a.layout_fingerprint == b.layout_fingerprint
}
