//! The five value types (contract §2.1–§2.5) read back from their instances: the checked
//! wire value of each, for the manifests' constructors. (Their `__init__` is `init`.)

use std::borrow::Cow;

use pyo3::prelude::*;
use weight_manifest::construct;
use weight_manifest::wire::{
    key, ParallelRank, PlacementFragment, RuntimeBindingFragment, RuntimeFragment, TensorDescriptor,
};
use weight_manifest::Object;

use crate::classes::{classes, is_a, Names};
use crate::convert::value;
use crate::emit::ints;
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

/// `TensorDescriptor.effective_shard_dims`: the canonical form's shard dims (§3).
#[pyfunction]
pub(crate) fn effective_shard_dims<'py>(this: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let d = descriptor(this)?;
    ints(this.py(), d.shard_dims.as_deref().unwrap_or_default())
}
