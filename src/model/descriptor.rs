//! TensorDescriptor checks (contract §2.2) and the canonical descriptor (§3).

use crate::check;
use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::value::Value;
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

    let global_shape = check::ints(fields.global_shape, "global_shape", 1, &at("global_shape"))?;
    if global_shape.is_empty() {
        return Err(Error::at(
            Code::EmptyShape,
            "global_shape must not be empty",
            &at("global_shape"),
        ));
    }
    let ndim = global_shape.len() as u64;
    let tensor_id = check::string(fields.tensor_id, "tensor_id", &at("tensor_id"))?;
    let dtype = check::string(fields.dtype, "dtype", &at("dtype"))?;
    let itemsize = check::int(fields.itemsize, "itemsize", 1, &at("itemsize"))?;

    let partition_dim = match set(fields.partition_dim) {
        None => None,
        Some(v) => {
            let dim = check::int(v, "partition_dim", 0, &at("partition_dim"))?;
            if dim >= ndim {
                return Err(Error::at(
                    Code::PartitionDimOutOfRange,
                    "partition_dim is out of range",
                    &at("partition_dim"),
                ));
            }
            Some(dim)
        }
    };

    let shard_dims = match set(fields.shard_dims) {
        None => None,
        Some(v) => Some(check_shard_dims(v, ndim, partition_dim, &at("shard_dims"))?),
    };

    let layer_id = check::opt_int(set(fields.layer_id), "layer_id", 0, &at("layer_id"))?;
    let expert_id = check::opt_int(set(fields.expert_id), "expert_id", 0, &at("expert_id"))?;
    let layout_fingerprint = check::string(
        fields.layout_fingerprint,
        "layout_fingerprint",
        &at("layout_fingerprint"),
    )?;

    // Canonical form (§3): shard_dims is the effective list, partition_dim its single
    // element when there is exactly one.
    let effective = shard_dims.unwrap_or_else(|| partition_dim.into_iter().collect());
    let canonical_partition = match effective.as_slice() {
        [only] => Some(*only),
        _ => None,
    };
    Ok(TensorDescriptor {
        dtype: dtype.to_owned(),
        expert_id,
        global_shape,
        itemsize,
        layer_id,
        layout_fingerprint: layout_fingerprint.to_owned(),
        partition_dim: canonical_partition,
        shard_dims: Some(effective),
        tensor_id: tensor_id.to_owned(),
    })
}

fn check_shard_dims(
    value: &Value<'_>,
    ndim: u64,
    partition_dim: Option<u64>,
    path: &Path<'_>,
) -> Result<Vec<u64>> {
    let dims = check::ints(value, "shard_dims", 0, path)?;
    let mut sorted = dims.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::at(
            Code::ShardDimsDuplicate,
            "shard_dims must not contain duplicates",
            path,
        ));
    }
    if sorted != dims {
        return Err(Error::at(
            Code::ShardDimsUnsorted,
            "shard_dims must be sorted",
            path,
        ));
    }
    if dims.iter().any(|&d| d >= ndim) {
        return Err(Error::at(
            Code::ShardDimsOutOfRange,
            "shard_dims contains an out-of-range dimension",
            path,
        ));
    }
    if let Some(dim) = partition_dim {
        if dims != [dim] {
            return Err(Error::at(
                Code::PartitionDimConflict,
                "partition_dim conflicts with shard_dims",
                path,
            ));
        }
    }
    Ok(dims)
}

/// The effective shard dims of a canonical descriptor (§3): empty means replicated.
pub(crate) fn shard_dims(descriptor: &TensorDescriptor) -> &[u64] {
    descriptor.shard_dims.as_deref().unwrap_or(&[])
}
