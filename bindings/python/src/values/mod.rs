//! The five value types of the contract (§2.1–§2.5) as native classes.
//!
//! Each instance holds its fields (the Python objects its getters return) and the core's
//! checked wire value of them, made once by the constructor: a manifest built from 10^5
//! fragments reads the checked values and no Python field. The instance is immutable for
//! real (no `__dict__`, no setter; `object.__setattr__` fails too), so the checked value
//! cannot go stale.
//!
//! They stay dataclasses for every purpose Python has: `weight_manifest._types` declares
//! each as a frozen dataclass (fields, types, defaults, docs) and its `_native_dataclass`
//! gives the native class that declaration's metadata (`__dataclass_fields__`,
//! `__annotations__`, `__match_args__`, ...) after checking the field lists agree, so
//! `dataclasses.fields`, `replace`, `asdict`, typing and pattern matching see a dataclass;
//! the class itself gives `__eq__`, `__hash__`, `__repr__`, the frozen `__setattr__` and
//! pickling the dataclass semantics (`dataclass`).
//!
//! An instance that can be in no reference cycle (plain fields; a rank or owner that is
//! None or a ParallelRank itself) is taken out of the cyclic garbage collector once made;
//! the fields that may hold an arbitrary object (a fragment's rank and owner) are shown
//! to the collector (`__traverse__`) for the others.

mod args;
pub(crate) mod class;
mod dataclass;
mod descriptor;
mod fields;
mod fragments;
mod rank;

pub(crate) use descriptor::TensorDescriptor;
pub(crate) use fragments::{PlacementFragment, RuntimeBindingFragment, RuntimeFragment};
pub(crate) use rank::ParallelRank;

use pyo3::prelude::*;

/// Registers the value classes and their helper functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ParallelRank>()?;
    m.add_class::<TensorDescriptor>()?;
    m.add_class::<PlacementFragment>()?;
    m.add_class::<RuntimeFragment>()?;
    m.add_class::<RuntimeBindingFragment>()?;
    m.add_function(wrap_pyfunction!(descriptor::effective_shard_dims, m)?)?;
    Ok(())
}
