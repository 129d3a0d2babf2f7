//! Core values to Python: scalars and document values, and the instances the core's
//! results become (built without re-running the checks; the value classes make their own
//! instances, `values`).

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple, PyType};
use weight_manifest::wire::{key, ParallelRank, TensorDescriptor};
use weight_manifest::{Binding, Owner, Placement, Runtime, Value};

use crate::classes::{trusted, GcPause};
use crate::manifests::{BindingCore, PlacementCore, RuntimeCore, CORE};
use crate::values;

/// Named fields of a dataclass instance.
pub(crate) type Fields<'py> = Vec<(&'static str, Bound<'py, PyAny>)>;

/// A tuple of ints.
pub(crate) fn ints<'py>(py: Python<'py>, values: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, values)?.into_any())
}

/// A tuple of strs.
pub(crate) fn strs<'py>(py: Python<'py>, values: &[String]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, values)?.into_any())
}

/// A str.
pub(crate) fn string<'py>(py: Python<'py>, value: &str) -> PyResult<Bound<'py, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// An int.
pub(crate) fn int(py: Python<'_>, value: u64) -> PyResult<Bound<'_, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// An int or None.
pub(crate) fn opt_int(py: Python<'_>, value: Option<u64>) -> PyResult<Bound<'_, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// A str or None.
pub(crate) fn opt_str<'py>(py: Python<'py>, value: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// The Python object held as an owner, or None.
pub(crate) fn owner<'py>(py: Python<'py>, owner: Option<&Owner>) -> Bound<'py, PyAny> {
    owner
        .and_then(|o| o.downcast_ref::<Py<PyAny>>())
        .map_or_else(|| py.None().into_bound(py), |o| o.bind(py).clone())
}

/// A document value as Python data: null, booleans, exact ints, floats, strs; arrays as
/// tuples (`tuples`) or lists; objects as dicts.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    value: &Value<'_>,
    tuples: bool,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::UInt(n) => int(py, *n)?,
        Value::NegInt(text) | Value::BigUInt(text) => big_int(py, text)?,
        Value::Float(text) => PyFloat::new(py, text.parse::<f64>().unwrap_or(f64::NAN)).into_any(),
        Value::Str(s) => string(py, s)?,
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| to_py(py, item, tuples))
                .collect::<PyResult<Vec<_>>>()?;
            if tuples {
                PyTuple::new(py, items)?.into_any()
            } else {
                PyList::new(py, items)?.into_any()
            }
        }
        Value::Object(object) => {
            let dict = PyDict::new(py);
            for (key, item) in object.iter() {
                dict.set_item(key, to_py(py, item, tuples)?)?;
            }
            dict.into_any()
        }
    })
}

/// An integer written in decimal, of any size (Python's int-to-str digit limit does not
/// apply to `decimal`).
fn big_int<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let int = py.import("builtins")?.getattr("int")?;
    match int.call1((text,)) {
        Ok(n) => Ok(n),
        Err(_) => int.call1((py.import("decimal")?.getattr("Decimal")?.call1((text,))?,)),
    }
}

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
