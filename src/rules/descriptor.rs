//! TensorDescriptor checks (contract §2.2) and the canonical descriptor (§3).

use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::rules::values;
use crate::rules::values::{MIN_EXTENT, MIN_ITEMSIZE};
use crate::value::Value;
use crate::wire::key;
use crate::wire::TensorDescriptor;

/// The members a descriptor is built from, each as found in the document.
/// `None` and `Some(Value::Null)` both mean "not set" for the nullable members.
pub(crate) struct DescriptorFields<'v, 'a> {
    pub tensor_id: &'v Value<'a>,
    pub global_shape: &'v Value<'a>,
    pub dtype: &'v Value<'a>,
    pub itemsize: &'v Value<'a>,
    pub partition_dim: Option<&'v Value<'a>>,
    pub layout_fingerprint: &'v Value<'a>,
    pub layer_id: Option<&'v Value<'a>>,
    pub expert_id: Option<&'v Value<'a>>,
    pub shard_dims: Option<&'v Value<'a>>,
}

fn set<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !matches!(v, Value::Null))
}

/// Runs the §2.2 checks in order and returns the descriptor in canonical form (§3).
/// `record` locates the object that holds the members.
pub(crate) fn check_descriptor(
    fields: &DescriptorFields<'_, '_>,
    record: &Path<'_>,
) -> Result<TensorDescriptor> {
    let at = |key: &'static str| Path::Key(record, key);

    let global_shape = values::ints(
        fields.global_shape,
        "global_shape",
        MIN_EXTENT,
        &at(key::GLOBAL_SHAPE),
    )?;
    if global_shape.is_empty() {
        return Err(Error::at(
            Code::EmptyShape,
            "global_shape must not be empty",
            &at(key::GLOBAL_SHAPE),
        ));
    }
    let ndim = global_shape.len() as u64;
    let tensor_id = values::string(fields.tensor_id, key::TENSOR_ID, &at(key::TENSOR_ID))?;
    let dtype = values::string(fields.dtype, key::DTYPE, &at(key::DTYPE))?;
    let itemsize = values::int(
        fields.itemsize,
        key::ITEMSIZE,
        MIN_ITEMSIZE,
        &at(key::ITEMSIZE),
    )?;

    let partition_dim = match set(fields.partition_dim) {
        None => None,
        Some(v) => {
            let dim = values::int(v, key::PARTITION_DIM, 0, &at(key::PARTITION_DIM))?;
            if dim >= ndim {
                return Err(Error::at(
                    Code::PartitionDimOutOfRange,
                    "partition_dim is out of range",
                    &at(key::PARTITION_DIM),
                ));
            }
            Some(dim)
        }
    };

    let shard_dims = match set(fields.shard_dims) {
        None => None,
        Some(v) => Some(check_shard_dims(
            v,
            ndim,
            partition_dim,
            &at(key::SHARD_DIMS),
        )?),
    };

    let layer_id = values::opt_int(set(fields.layer_id), key::LAYER_ID, 0, &at(key::LAYER_ID))?;
    let expert_id = values::opt_int(
        set(fields.expert_id),
        key::EXPERT_ID,
        0,
        &at(key::EXPERT_ID),
    )?;
    let layout_fingerprint = values::string(
        fields.layout_fingerprint,
        "layout_fingerprint",
        &at(key::LAYOUT_FINGERPRINT),
    )?;

    Ok(canonical(Typed {
        tensor_id,
        global_shape,
        dtype,
        itemsize,
        partition_dim,
        shard_dims,
        layer_id,
        expert_id,
        layout_fingerprint,
    }))
}

/// The members of a descriptor once each has the type §2.2 asks for.
pub(crate) struct Typed<'s> {
    pub tensor_id: &'s str,
    pub global_shape: Vec<u64>,
    pub dtype: &'s str,
    pub itemsize: u64,
    pub partition_dim: Option<u64>,
    pub shard_dims: Option<Vec<u64>>,
    pub layer_id: Option<u64>,
    pub expert_id: Option<u64>,
    pub layout_fingerprint: &'s str,
}

/// Whether the §2.2 checks accept typed members (integers already at their minimums: each
/// global_shape extent and the itemsize at least 1), and the canonical descriptor if so;
/// for the fast paths, which leave any rejection to [`check_descriptor`].
pub(crate) fn accept_typed(typed: Typed<'_>) -> Option<TensorDescriptor> {
    let ndim = typed.global_shape.len() as u64;
    let accepted = ndim > 0
        && !typed.tensor_id.is_empty()
        && !typed.dtype.is_empty()
        && !typed.layout_fingerprint.is_empty()
        && typed.partition_dim.is_none_or(|dim| dim < ndim)
        && typed
            .shard_dims
            .as_deref()
            .is_none_or(|dims| shard_dims_problem(dims, ndim, typed.partition_dim).is_none());
    accepted.then(|| canonical(typed))
}

/// Canonical form (§3): shard_dims is the effective list, partition_dim its single
/// element when there is exactly one.
fn canonical(typed: Typed<'_>) -> TensorDescriptor {
    let effective = typed
        .shard_dims
        .unwrap_or_else(|| typed.partition_dim.into_iter().collect());
    let canonical_partition = match effective.as_slice() {
        [only] => Some(*only),
        _ => None,
    };
    TensorDescriptor {
        dtype: typed.dtype.to_owned(),
        expert_id: typed.expert_id,
        global_shape: typed.global_shape,
        itemsize: typed.itemsize,
        layer_id: typed.layer_id,
        layout_fingerprint: typed.layout_fingerprint.to_owned(),
        partition_dim: canonical_partition,
        shard_dims: Some(effective),
        tensor_id: typed.tensor_id.to_owned(),
    }
}

fn check_shard_dims(
    value: &Value<'_>,
    ndim: u64,
    partition_dim: Option<u64>,
    path: &Path<'_>,
) -> Result<Vec<u64>> {
    let dims = values::ints(value, key::SHARD_DIMS, 0, path)?;
    match shard_dims_problem(&dims, ndim, partition_dim) {
        Some((code, message)) => Err(Error::at(code, message, path)),
        None => Ok(dims),
    }
}

/// The first rule of §2.2 that shard_dims (integers) break, in the contract's order.
fn shard_dims_problem(
    dims: &[u64],
    ndim: u64,
    partition_dim: Option<u64>,
) -> Option<(Code, &'static str)> {
    let mut sorted = dims.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Some((
            Code::ShardDimsDuplicate,
            "shard_dims must not contain duplicates",
        ));
    }
    if sorted != dims {
        return Some((Code::ShardDimsUnsorted, "shard_dims must be sorted"));
    }
    if dims.iter().any(|&d| d >= ndim) {
        return Some((
            Code::ShardDimsOutOfRange,
            "shard_dims contains an out-of-range dimension",
        ));
    }
    match partition_dim {
        Some(dim) if dims != [dim] => Some((
            Code::PartitionDimConflict,
            "partition_dim conflicts with shard_dims",
        )),
        _ => None,
    }
}

/// The effective shard dims of a canonical descriptor (§3): empty means replicated.
pub(crate) fn shard_dims(descriptor: &TensorDescriptor) -> &[u64] {
    descriptor.shard_dims.as_deref().unwrap_or(&[])
}
