//! Mooncake's tensor descriptors and parallel axes: read from the tree and checked as
//! `TensorDescriptor` and the axis types check themselves when built.
//!
//! The placement and the storage manifest read the same nine members but in different
//! orders (the storage reader reads the axes first), so the first error of a descriptor
//! with several faults is the one upstream reports; [`Order`] picks the order.

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::limits::Limits;
use weight_manifest::path::Path;
use weight_manifest::value::{Object, Value};

use crate::fields::{exact, int, ints, member, object, opt_int, seq, string};
use crate::model::{Axis, AxisKind, Semantics, Tensor};
use crate::wire::key;
use crate::wire::{MooncakeAxis, MooncakeTensorDescriptor};

/// The nine members of a descriptor.
pub(crate) const KEYS: &[&str] = MooncakeTensorDescriptor::FIELDS;

/// Which reader's member order to check in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// `weight_placement_from_json`.
    Placement,
    /// `WeightManifest.from_dict`.
    Storage,
}

fn axis_invalid(message: impl Into<String>, path: &Path<'_>) -> Error {
    Error::at(Code::MooncakeAxisInvalid, message, path)
}

/// Reads one axis (`mooncake.reshard.weight.serde` `_axis_from_wire`).
pub(crate) fn read_axis(value: &Value<'_>, index: usize, path: &Path<'_>) -> Result<Axis> {
    let label = format!("placement tensor parallel axis {index}");
    let obj = object(value, &label, path)?;
    let semantics_path = path.key(key::SEMANTICS);
    let semantics = match obj.get(key::SEMANTICS) {
        Some(v) => string(v, "axis semantics", &semantics_path)?,
        None => {
            return Err(weight_manifest::rules::values::empty_string(
                "axis semantics",
                path,
            ))
        }
    };
    let keys: &[&str] = match semantics.as_str() {
        weight_manifest::wire::key::SPLIT => MooncakeAxis::FIELDS,
        "replicated" | "ownership" => MooncakeAxis::REQUIRED,
        other => {
            return Err(axis_invalid(
                format!("unsupported parallel axis semantics: {other}"),
                &semantics_path,
            ))
        }
    };
    let obj = exact(value, keys, &label, path)?;
    let kind_path = path.key(key::KIND);
    let kind_text = string(member(obj, key::KIND), "parallel axis kind", &kind_path)?;
    let kind = AxisKind::parse(&kind_text).ok_or_else(|| {
        axis_invalid(
            format!("unsupported parallel axis kind: {kind_text}"),
            &kind_path,
        )
    })?;
    let semantics = match semantics.as_str() {
        weight_manifest::wire::key::SPLIT => {
            if !matches!(kind, AxisKind::Ep | AxisKind::Tp) {
                return Err(axis_invalid(
                    format!("{kind_text} cannot use split semantics"),
                    &kind_path,
                ));
            }
            let dim_path = path.key(key::DIM);
            let dim = int(member(obj, key::DIM), "split axis dim", 0, &dim_path)?;
            if kind == AxisKind::Ep && dim != 0 {
                return Err(axis_invalid(
                    "EP must split the leading logical expert dimension",
                    &dim_path,
                ));
            }
            Semantics::Split { dim }
        }
        "replicated" => Semantics::Replicated,
        _ => Semantics::Ownership,
    };
    Ok(Axis { kind, semantics })
}

/// Reads a document's `tensors` member (`root` is the document's path): a sequence (named
/// `list` when it is not one) within the tensor limit, each element a descriptor, named
/// `label(i)` in a key-set error, whose `global_shape` is within the dimension limit.
pub(crate) fn read_tensors(
    obj: &Object<'_>,
    list: &str,
    label: impl Fn(usize) -> String,
    order: Order,
    root: &Path<'_>,
    limits: &Limits,
) -> Result<Vec<Tensor>> {
    let path = root.key(key::TENSORS);
    let items = seq(member(obj, key::TENSORS), list, &path)?;
    limits.check_tensors(items.len(), &path)?;
    let mut tensors = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(shape) = item.as_object().and_then(|o| o.get(key::GLOBAL_SHAPE)) {
            limits.check_dims(shape, &path.index(i).key(key::GLOBAL_SHAPE))?;
        }
        tensors.push(read_tensor(item, &label(i), order, &path.index(i))?);
    }
    Ok(tensors)
}

/// Reads and checks one descriptor at `path`; `label` names it in a key-set error.
pub(crate) fn read_tensor(
    value: &Value<'_>,
    label: &str,
    order: Order,
    path: &Path<'_>,
) -> Result<Tensor> {
    let obj = exact(value, KEYS, label, path)?;
    let at = |k: &'static str| (member(obj, k), k);
    let axes_of = || -> Result<Vec<Axis>> {
        let (v, k) = at(key::PARALLEL_AXES);
        let p = path.key(k);
        let items = seq(v, "placement tensor parallel_axes", &p)?;
        items
            .iter()
            .enumerate()
            .map(|(i, a)| read_axis(a, i, &p.index(i)))
            .collect()
    };
    let str_of = |k: &'static str| string(member(obj, k), k, &path.key(k));
    let mut axes = None;
    if order == Order::Storage {
        axes = Some(axes_of()?);
    }
    let tensor_id = str_of(key::TENSOR_ID)?;
    let global_shape = ints(
        member(obj, key::GLOBAL_SHAPE),
        key::GLOBAL_SHAPE,
        1,
        &path.key(key::GLOBAL_SHAPE),
    )?;
    let dtype = str_of(key::DTYPE)?;
    let itemsize = int(
        member(obj, key::ITEMSIZE),
        key::ITEMSIZE,
        1,
        &path.key(key::ITEMSIZE),
    )?;
    let (shard_dims, layout_fingerprint, layer_id, expert_id);
    let opt = |k: &'static str| opt_int(member(obj, k), k, 0, &path.key(k));
    if order == Order::Placement {
        shard_dims = ints(
            member(obj, key::SHARD_DIMS),
            key::SHARD_DIMS,
            0,
            &path.key(key::SHARD_DIMS),
        )?;
        layout_fingerprint = str_of(key::LAYOUT_FINGERPRINT)?;
        axes = Some(axes_of()?);
        layer_id = opt(key::LAYER_ID)?;
        expert_id = opt(key::EXPERT_ID)?;
    } else {
        layer_id = opt(key::LAYER_ID)?;
        expert_id = opt(key::EXPERT_ID)?;
        layout_fingerprint = str_of(key::LAYOUT_FINGERPRINT)?;
        shard_dims = ints(
            member(obj, key::SHARD_DIMS),
            key::SHARD_DIMS,
            0,
            &path.key(key::SHARD_DIMS),
        )?;
    }
    let tensor = Tensor {
        tensor_id,
        global_shape,
        dtype,
        itemsize,
        shard_dims,
        layout_fingerprint,
        parallel_axes: axes.unwrap_or_default(),
        layer_id,
        expert_id,
    };
    check_tensor(tensor, path)
}

/// The descriptor's own rules (`TensorDescriptor.__post_init__`), in upstream's order;
/// returns it with its axes in canonical kind order.
pub(crate) fn check_tensor(mut t: Tensor, path: &Path<'_>) -> Result<Tensor> {
    if t.global_shape.is_empty() {
        return Err(Error::at(
            Code::EmptyShape,
            "global_shape must not be empty",
            &path.key(key::GLOBAL_SHAPE),
        ));
    }
    let ndim = t.global_shape.len() as u64;
    let dims_path = path.key(key::SHARD_DIMS);
    let mut seen = t.shard_dims.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != t.shard_dims.len() {
        return Err(Error::at(
            Code::ShardDimsDuplicate,
            "shard_dims must not contain duplicates",
            &dims_path,
        ));
    }
    if seen != t.shard_dims {
        return Err(Error::at(
            Code::ShardDimsUnsorted,
            "shard_dims must be sorted",
            &dims_path,
        ));
    }
    if t.shard_dims.iter().any(|&d| d >= ndim) {
        return Err(Error::at(
            Code::ShardDimsOutOfRange,
            "shard_dims contains an out-of-range dimension",
            &dims_path,
        ));
    }
    let axes_path = path.key(key::PARALLEL_AXES);
    // A stable sort, as Python's: equal kinds keep their order until rejected below.
    t.parallel_axes.sort_by_key(|a| a.kind);
    if t.parallel_axes.windows(2).any(|w| w[0].kind == w[1].kind) {
        return Err(axis_invalid(
            "parallel_axes must not contain duplicate kinds",
            &axes_path,
        ));
    }
    let mut split_dims: Vec<u64> = t
        .parallel_axes
        .iter()
        .filter_map(|a| match a.semantics {
            Semantics::Split { dim } => Some(dim),
            _ => None,
        })
        .collect();
    let mut distinct = split_dims.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != split_dims.len() {
        return Err(axis_invalid(
            "split axes must not share a dimension",
            &axes_path,
        ));
    }
    if split_dims.iter().any(|&d| d >= ndim) {
        return Err(axis_invalid(
            "split axis dimension is out of range",
            &axes_path,
        ));
    }
    split_dims.sort_unstable();
    if split_dims != t.shard_dims {
        return Err(axis_invalid(
            "parallel axis split dimensions conflict with shard_dims",
            &axes_path,
        ));
    }
    let ep_split = t
        .parallel_axes
        .iter()
        .any(|a| a.kind == AxisKind::Ep && matches!(a.semantics, Semantics::Split { .. }));
    if t.expert_id.is_some() && ep_split {
        return Err(axis_invalid(
            "an individually allocated expert requires explicit EP ownership",
            &path.key(key::EXPERT_ID),
        ));
    }
    Ok(t)
}
