//! The members a manifest instance built by the core makes on first access (`tensors`,
//! `fragments`), and the value instances they hold: built without re-running the checks
//! (the value classes make their own instances, `values`).

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weight_manifest::wire::{key, ParallelRank, TensorDescriptor};
use weight_manifest::{Binding, Placement, Runtime};

use crate::classes::GcPause;
use crate::scalars::{owner, Fields};
use crate::values;

/// Builds ParallelRank instances, one per distinct rank (they are immutable values).
pub(crate) struct Ranks<'py> {
    py: Python<'py>,
    made: HashMap<(u64, u64, u64, u64), Bound<'py, PyAny>>,
}

impl<'py> Ranks<'py> {
    /// An empty set of ranks.
    pub(crate) fn new(py: Python<'py>) -> Self {
        Ranks {
            py,
            made: HashMap::new(),
        }
    }

    /// The instance for `rank`.
    pub(crate) fn get(&mut self, rank: &ParallelRank) -> PyResult<Bound<'py, PyAny>> {
        let key = (rank.dp, rank.tp, rank.pp, rank.ep);
        if let Some(made) = self.made.get(&key) {
            return Ok(made.clone());
        }
        let made = values::ParallelRank::trusted(self.py, rank)?.into_any();
        self.made.insert(key, made.clone());
        Ok(made)
    }
}

/// TensorDescriptor instances for checked descriptors.
pub(crate) fn descriptors<'py>(
    py: Python<'py>,
    tensors: &[TensorDescriptor],
) -> PyResult<Bound<'py, PyAny>> {
    let items = tensors
        .iter()
        .map(|d| values::TensorDescriptor::trusted(py, d))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyTuple::new(py, items)?.into_any())
}

/// The `tensors` and `fragments` members of a PlacementManifest for its core placement.
pub(crate) fn placement_members<'py>(
    py: Python<'py>,
    placement: &Placement,
) -> PyResult<Fields<'py>> {
    let _pause = GcPause::new(py)?;
    let mut ranks = Ranks::new(py);
    let fragments = placement
        .fragments()
        .iter()
        .map(|f| values::PlacementFragment::trusted(f, &ranks.get(&f.rank)?))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(vec![
        (key::TENSORS, descriptors(py, placement.tensors())?),
        (key::FRAGMENTS, PyTuple::new(py, fragments)?.into_any()),
    ])
}

/// The `tensors` and `fragments` members of a RuntimeManifest for its core value.
pub(crate) fn runtime_members<'py>(py: Python<'py>, runtime: &Runtime) -> PyResult<Fields<'py>> {
    let _pause = GcPause::new(py)?;
    let mut ranks = Ranks::new(py);
    let fragments = runtime
        .fragments()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let owner = owner(py, runtime.owner(i));
            values::RuntimeFragment::trusted(f, &ranks.get(&f.rank)?, &owner)
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(vec![
        (key::TENSORS, descriptors(py, runtime.tensors())?),
        (key::FRAGMENTS, PyTuple::new(py, fragments)?.into_any()),
    ])
}

/// The `fragments` member of a RuntimeBindingManifest for its core binding.
pub(crate) fn binding_members<'py>(py: Python<'py>, binding: &Binding) -> PyResult<Fields<'py>> {
    let _pause = GcPause::new(py)?;
    let fragments = binding
        .fragments()
        .iter()
        .enumerate()
        .map(|(i, f)| values::RuntimeBindingFragment::trusted(f, &owner(py, binding.owner(i))))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(vec![(
        key::FRAGMENTS,
        PyTuple::new(py, fragments)?.into_any(),
    )])
}
