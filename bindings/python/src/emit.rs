//! The manifest instances the core's results become: their scalar members at once, their
//! lists on first access (`members`).

use pyo3::prelude::*;
use pyo3::types::PyType;
use weight_manifest::wire::key;
use weight_manifest::{Binding, Placement, Runtime};

use crate::classes::trusted;
use crate::manifests::{BindingCore, PlacementCore, RuntimeCore, CORE};
use crate::scalars::{int, opt_int, opt_str, string};

/// A PlacementManifest instance of `class` for a core placement. Its `tensors` and
/// `fragments` are made on first access ([`placement_members`]): most results are used
/// through the core (ids, JSON, plans), and building 10^5 dataclass instances costs more
/// than reading the document did.
pub(crate) fn placement<'py>(
    class: &Bound<'py, PyType>,
    placement: Placement,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let fields = vec![
        (key::MODEL_ID, string(py, placement.model_id())?),
        (key::REVISION, string(py, placement.revision())?),
        (key::PLACEMENT_ID, string(py, placement.placement_id())?),
        (CORE, Bound::new(py, PlacementCore(placement))?.into_any()),
    ];
    trusted(class, &fields)
}

/// A RuntimeManifest instance of `class` for a core runtime manifest (with its owners);
/// `tensors` and `fragments` are made on first access ([`runtime_members`]).
pub(crate) fn runtime<'py>(
    class: &Bound<'py, PyType>,
    runtime: Runtime,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let wire = runtime.as_wire();
    let fields = vec![
        (key::MODEL_ID, string(py, &wire.model_id)?),
        (key::REVISION, string(py, &wire.revision)?),
        (key::INSTANCE_ID, string(py, &wire.instance_id)?),
        (key::LEASE_ID, opt_str(py, wire.lease_id.as_deref())?),
        (
            key::PLACEMENT_ID,
            opt_str(py, wire.placement_id.as_deref())?,
        ),
        (key::GENERATION, opt_int(py, wire.generation)?),
        (CORE, Bound::new(py, RuntimeCore(runtime))?.into_any()),
    ];
    trusted(class, &fields)
}

/// A RuntimeBindingManifest instance of `class` for a core binding (with its owners);
/// `fragments` is made on first access ([`binding_members`]).
pub(crate) fn binding<'py>(
    class: &Bound<'py, PyType>,
    binding: Binding,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let wire = binding.as_wire();
    let fields = vec![
        (key::MODEL_ID, string(py, &wire.model_id)?),
        (key::REVISION, string(py, &wire.revision)?),
        (key::PLACEMENT_ID, string(py, &wire.placement_id)?),
        (key::PLACEMENT_DIGEST, string(py, &wire.placement_digest)?),
        (key::INSTANCE_ID, string(py, &wire.instance_id)?),
        (key::GENERATION, int(py, wire.generation)?),
        (key::LEASE_ID, string(py, &wire.lease_id)?),
        (CORE, Bound::new(py, BindingCore(binding))?.into_any()),
    ];
    trusted(class, &fields)
}
