//! The five value types (contract §2.1–§2.5): `__post_init__` of each dataclass calls its
//! `init_*` here, which reads the instance's fields, runs the core's per-type checks and
//! stores the normalised fields back (plain `int`s, tuples, sorted aliases).

use std::borrow::Cow;

use pyo3::prelude::*;
use weight_manifest::construct;
use weight_manifest::wire::{
    key, ParallelRank, PlacementFragment, RuntimeBindingFragment, RuntimeFragment, TensorDescriptor,
};
use weight_manifest::{Object, Value};

use crate::classes::{classes, is_a, store, Names};
use crate::convert::value;
use crate::emit::{
    binding_fragment_fields, descriptor_fields, ints, placement_fragment_fields, rank_fields,
    runtime_fragment_fields, to_py,
};
use crate::errors::OrRaise;

// The schema's field lists; a fragment's rank is read apart (it is an object).
static RANK: Names = Names::new(ParallelRank::FIELDS);
static DESCRIPTOR: Names = Names::new(TensorDescriptor::FIELDS);
static PLACEMENT_FRAGMENT: Names = Names::without(PlacementFragment::FIELDS, &[key::RANK]);
static RUNTIME_FRAGMENT: Names = Names::without(RuntimeFragment::FIELDS, &[key::RANK]);
static BINDING_FRAGMENT: Names = Names::new(RuntimeBindingFragment::FIELDS);

/// The named attributes of `object` as keyword arguments for the core.
fn fields(object: &Bound<'_, PyAny>, names: &Names) -> PyResult<Object<'static>> {
    let members = names
        .interned(object.py())
        .into_iter()
        .map(|(name, key)| Ok((Cow::Borrowed(name), value(&object.getattr(key)?)?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Object::from_members(members))
}

/// The checked rank of a ParallelRank instance.
pub(crate) fn rank(object: &Bound<'_, PyAny>) -> PyResult<ParallelRank> {
    construct::parallel_rank(&fields(object, &RANK)?).or_raise(object.py())
}

/// The checked canonical descriptor of a TensorDescriptor instance.
pub(crate) fn descriptor(object: &Bound<'_, PyAny>) -> PyResult<TensorDescriptor> {
    construct::tensor_descriptor(&fields(object, &DESCRIPTOR)?).or_raise(object.py())
}

/// The `rank` field of a fragment: checked if it is a ParallelRank, else `None`.
fn fragment_rank(object: &Bound<'_, PyAny>) -> PyResult<Option<ParallelRank>> {
    let py = object.py();
    let member = object.getattr("rank")?;
    if is_a(&member, &classes(py)?.rank)? {
        rank(&member).map(Some)
    } else {
        Ok(None)
    }
}

/// The checked PlacementFragment instance.
pub(crate) fn placement_fragment(object: &Bound<'_, PyAny>) -> PyResult<PlacementFragment> {
    let fields = fields(object, &PLACEMENT_FRAGMENT)?;
    let rank = fragment_rank(object)?;
    construct::placement_fragment(&fields, rank).or_raise(object.py())
}

/// The checked RuntimeFragment instance.
pub(crate) fn runtime_fragment(object: &Bound<'_, PyAny>) -> PyResult<RuntimeFragment> {
    let fields = fields(object, &RUNTIME_FRAGMENT)?;
    let rank = fragment_rank(object)?;
    construct::runtime_fragment(&fields, rank).or_raise(object.py())
}

/// The checked RuntimeBindingFragment instance.
pub(crate) fn binding_fragment(object: &Bound<'_, PyAny>) -> PyResult<RuntimeBindingFragment> {
    construct::binding_fragment(&fields(object, &BINDING_FRAGMENT)?).or_raise(object.py())
}

/// `ParallelRank.__post_init__`.
#[pyfunction]
pub(crate) fn init_parallel_rank(this: &Bound<'_, PyAny>) -> PyResult<()> {
    store(this, &rank_fields(this.py(), &rank(this)?)?)
}

/// `TensorDescriptor.__post_init__`: the descriptor keeps the caller's spelling of
/// `partition_dim` and `shard_dims` (the manifests hold the canonical form, §3).
#[pyfunction]
pub(crate) fn init_tensor_descriptor(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let given = fields(this, &DESCRIPTOR)?;
    let canonical = construct::tensor_descriptor(&given).or_raise(py)?;
    let mut stored = descriptor_fields(py, &canonical)?;
    for (name, field) in &mut stored {
        if matches!(*name, "partition_dim" | "shard_dims") {
            *field = to_py(py, given.get(name).unwrap_or(&Value::Null), true)?;
        }
    }
    store(this, &stored)
}

/// `PlacementFragment.__post_init__` (the rank is kept as given).
#[pyfunction]
pub(crate) fn init_placement_fragment(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let fragment = placement_fragment(this)?;
    store(
        this,
        &placement_fragment_fields(this.py(), &fragment, this.getattr("rank")?)?,
    )
}

/// `RuntimeFragment.__post_init__` (rank and owner are kept as given).
#[pyfunction]
pub(crate) fn init_runtime_fragment(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let fragment = runtime_fragment(this)?;
    let (rank, owner) = (this.getattr("rank")?, this.getattr("owner")?);
    store(
        this,
        &runtime_fragment_fields(this.py(), &fragment, rank, owner)?,
    )
}

/// `RuntimeBindingFragment.__post_init__` (the owner is kept as given).
#[pyfunction]
pub(crate) fn init_binding_fragment(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let fragment = binding_fragment(this)?;
    store(
        this,
        &binding_fragment_fields(this.py(), &fragment, this.getattr("owner")?)?,
    )
}

/// `TensorDescriptor.effective_shard_dims`: the canonical form's shard dims (§3).
#[pyfunction]
pub(crate) fn effective_shard_dims<'py>(this: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let d = descriptor(this)?;
    ints(this.py(), d.shard_dims.as_deref().unwrap_or_default())
}
