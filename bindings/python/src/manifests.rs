//! The three manifests (contract §2.6–§2.8) built from Python objects: `__post_init__` of
//! each dataclass calls its `init_*` here. The binding runs the in-memory steps (§8.1
//! steps 1 and 3, §8.4 step 1, §8.6 step 1: the collection is a sequence of the right
//! type) with the core's error constructors; the value instances hold their checked
//! values (`values`), and the core runs everything else on them. The validated core value
//! is kept on the instance (`_wm_core`, not a field) for `to_json`, `digest`, the
//! projections and bind.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{PyClass, PyTypeInfo};
use weight_manifest::wire;
use weight_manifest::{construct, Binding, Object, Owner, Placement, Runtime};

use crate::classes::{classes, is_a, store, Names};
use crate::convert::{is_sequence, value};
use crate::errors::to_py;
use crate::manifest_lists::{self, descriptors};
use crate::scalars::{int, opt_int, opt_str, string};
use crate::values::{PlacementFragment, RuntimeBindingFragment, RuntimeFragment, TensorDescriptor};

/// The instance attribute that holds the validated core value.
pub(crate) const CORE: &str = "_wm_core";

/// A validated placement (held by a PlacementManifest).
#[pyclass(frozen, module = "weight_manifest._native")]
pub(crate) struct PlacementCore(pub(crate) Placement);

/// A validated runtime manifest with its owners (held by a RuntimeManifest).
#[pyclass(frozen, module = "weight_manifest._native")]
pub(crate) struct RuntimeCore(pub(crate) Runtime);

/// A validated runtime binding with its owners (held by a RuntimeBindingManifest).
#[pyclass(frozen, module = "weight_manifest._native")]
pub(crate) struct BindingCore(pub(crate) Binding);

/// The top-level fields of a PlacementManifest the core reads.
static PLACEMENT_HEADER: Names = Names::new(&["model_id", "revision", "placement_id"]);

/// The top-level fields of a RuntimeManifest the core reads.
static RUNTIME_HEADER: Names = Names::new(&[
    "model_id",
    "revision",
    "instance_id",
    "lease_id",
    "placement_id",
    "generation",
]);

/// The top-level fields of a RuntimeBindingManifest the core reads.
static BINDING_HEADER: Names = Names::new(&[
    "model_id",
    "revision",
    "placement_id",
    "placement_digest",
    "instance_id",
    "lease_id",
    "generation",
]);

/// SEQ("{owner} {collection}") and the element type (`wrong_element_type`).
fn items<'py, T: PyClass + PyTypeInfo>(
    this: &Bound<'py, PyAny>,
    owner: &str,
    collection: &'static str,
) -> PyResult<Vec<Bound<'py, T>>> {
    let py = this.py();
    let member = this.getattr(collection)?;
    if !is_sequence(&member) {
        let error = construct::not_a_sequence(&format!("{owner} {collection}"));
        return Err(to_py(py, &error));
    }
    member
        .try_iter()?
        .map(|item| {
            item?.cast_into::<T>().map_err(|_| {
                to_py(
                    py,
                    &construct::wrong_element_type(owner, collection, T::NAME),
                )
            })
        })
        .collect()
}

/// The named attributes as keyword arguments for the core.
fn header(this: &Bound<'_, PyAny>, names: &Names) -> PyResult<Object<'static>> {
    let members = names
        .interned(this.py())
        .into_iter()
        .map(|(name, key)| Ok((name.into(), value(&this.getattr(key)?)?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Object::from_members(members))
}

/// The owner held by a fragment (`None` stays unset).
fn owner_of(owner: &Bound<'_, PyAny>) -> Option<Owner> {
    (!owner.is_none()).then(|| Owner::new(owner.clone().unbind()))
}

/// `items` in the order the core holds them: sorted by `id` (byte order, as the core sorts;
/// the core has checked that the ids are distinct).
fn sorted_by<'a, 'py, T>(
    items: &'a [Bound<'py, T>],
    id: impl Fn(&T) -> &str,
) -> Vec<&'a Bound<'py, T>>
where
    T: PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync,
{
    let mut order: Vec<&Bound<'py, T>> = items.iter().collect();
    order.sort_by(|a, b| id(a.get()).cmp(id(b.get())));
    order
}

/// The manifest's `tensors` member: the given instances in the core's order (sorted by
/// tensor_id) where they are spelled canonically, new canonical instances where not.
fn held_tensors<'py>(
    py: Python<'py>,
    items: &[Bound<'py, TensorDescriptor>],
    canonical: &[wire::TensorDescriptor],
) -> PyResult<Bound<'py, PyAny>> {
    let held = sorted_by(items, |t| &t.checked.tensor_id)
        .into_iter()
        .zip(canonical)
        .map(|(item, canonical)| {
            if item.get().spelled_canonically(py) {
                Ok(item.clone())
            } else {
                TensorDescriptor::trusted(py, canonical)
            }
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyTuple::new(py, held)?.into_any())
}

/// The checked values of value instances, for the core (which takes them by value).
fn checked<T, V: Clone>(items: &[Bound<'_, T>], value: impl Fn(&T) -> &V) -> Vec<V>
where
    T: PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync,
{
    items.iter().map(|item| value(item.get()).clone()).collect()
}

/// `PlacementManifest.__post_init__` (§8.1). The tensors and fragments hold their checked
/// values, so only the manifest's own steps run here.
#[pyfunction]
pub(crate) fn init_placement_manifest(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let owner = "PlacementManifest";
    let tensor_items = items::<TensorDescriptor>(this, owner, "tensors")?;
    let fragment_items = items::<PlacementFragment>(this, owner, "fragments")?;
    let fields = header(this, &PLACEMENT_HEADER)?;
    let tensors = checked(&tensor_items, |t| &t.checked);
    let fragments = checked(&fragment_items, |f| &f.checked);
    let placement = py
        .detach(|| construct::placement_manifest(&fields, tensors, fragments))
        .map_err(|e| to_py(py, &e))?;
    let held = held_tensors(py, &tensor_items, placement.tensors())?;
    let fragments = PyTuple::new(
        py,
        sorted_by(&fragment_items, |f| &f.checked.placement_fragment_id),
    )?;
    store(
        this,
        &[
            ("model_id", string(py, placement.model_id())?),
            ("revision", string(py, placement.revision())?),
            ("tensors", held),
            ("fragments", fragments.into_any()),
            ("placement_id", string(py, placement.placement_id())?),
            (CORE, Bound::new(py, PlacementCore(placement))?.into_any()),
        ],
    )
}

/// `RuntimeManifest.__post_init__` (§8.4). Fragments keep manifest order and their own
/// owners; tensors are held canonical (§8.4 step 2).
#[pyfunction]
pub(crate) fn init_runtime_manifest(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let owner = "RuntimeManifest";
    let tensor_items = items::<TensorDescriptor>(this, owner, "tensors")?;
    let fragment_items = items::<RuntimeFragment>(this, owner, "fragments")?;
    let tensors = checked(&tensor_items, |t| &t.checked);
    let fragments = checked(&fragment_items, |f| &f.checked);
    let owners = fragment_items
        .iter()
        .map(|f| owner_of(f.get().held_owner(py)))
        .collect();
    let runtime =
        construct::runtime_manifest(&header(this, &RUNTIME_HEADER)?, tensors, fragments, owners)
            .map_err(|e| to_py(py, &e))?;
    let wire = runtime.as_wire();
    let stored = [
        ("model_id", string(py, &wire.model_id)?),
        ("revision", string(py, &wire.revision)?),
        ("instance_id", string(py, &wire.instance_id)?),
        ("tensors", descriptors(py, runtime.tensors())?),
        ("fragments", PyTuple::new(py, &fragment_items)?.into_any()),
        ("lease_id", opt_str(py, wire.lease_id.as_deref())?),
        ("placement_id", opt_str(py, wire.placement_id.as_deref())?),
        ("generation", opt_int(py, wire.generation)?),
    ];
    store(this, &stored)?;
    store(
        this,
        &[(CORE, Bound::new(py, RuntimeCore(runtime))?.into_any())],
    )
}

/// `RuntimeBindingManifest.__post_init__` (§8.6). Fragments are held sorted by
/// placement_fragment_id, each with its own owner.
#[pyfunction]
pub(crate) fn init_binding_manifest(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let fragment_items =
        items::<RuntimeBindingFragment>(this, "RuntimeBindingManifest", "fragments")?;
    let fragments = checked(&fragment_items, |f| &f.checked);
    let owners = fragment_items
        .iter()
        .map(|f| owner_of(f.get().held_owner(py)))
        .collect();
    let binding = construct::binding_manifest(&header(this, &BINDING_HEADER)?, fragments, owners)
        .map_err(|e| to_py(py, &e))?;
    let fragments = PyTuple::new(
        py,
        sorted_by(&fragment_items, |f| &f.checked.placement_fragment_id),
    )?
    .into_any();
    let wire = binding.as_wire();
    let stored = [
        ("model_id", string(py, &wire.model_id)?),
        ("revision", string(py, &wire.revision)?),
        ("placement_id", string(py, &wire.placement_id)?),
        ("placement_digest", string(py, &wire.placement_digest)?),
        ("instance_id", string(py, &wire.instance_id)?),
        ("generation", int(py, wire.generation)?),
        ("lease_id", string(py, &wire.lease_id)?),
        ("fragments", fragments),
    ];
    store(this, &stored)?;
    store(
        this,
        &[(CORE, Bound::new(py, BindingCore(binding))?.into_any())],
    )
}

/// The validated core value of a manifest instance of `class`; an instance that lost it
/// (unpickled, copied) is validated again.
fn core<'py, T: pyo3::PyClass>(
    object: &Bound<'py, PyAny>,
    class: &Py<PyType>,
    what: &str,
    type_name: &str,
    init: fn(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyResult<Bound<'py, T>> {
    if !is_a(object, class)? {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a {type_name}"
        )));
    }
    let dict = object.getattr("__dict__")?.cast_into::<PyDict>()?;
    if let Some(held) = dict.get_item(CORE)? {
        if let Ok(held) = held.cast_into::<T>() {
            return Ok(held);
        }
    }
    init(object)?;
    let held = dict
        .get_item(CORE)?
        .ok_or_else(|| PyTypeError::new_err("manifest has no core value"))?;
    Ok(held.cast_into::<T>()?)
}

/// The placement held by a PlacementManifest (`what` names the argument in a TypeError).
pub(crate) fn placement_core<'py>(
    object: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, PlacementCore>> {
    let class = &classes(object.py())?.placement;
    core(object, class, what, "PlacementManifest", |o| {
        init_placement_manifest(o)
    })
}

/// The runtime manifest held by a RuntimeManifest.
pub(crate) fn runtime_core<'py>(
    object: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, RuntimeCore>> {
    let class = &classes(object.py())?.runtime;
    core(object, class, what, "RuntimeManifest", |o| {
        init_runtime_manifest(o)
    })
}

/// The binding held by a RuntimeBindingManifest.
pub(crate) fn binding_core<'py>(
    object: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, BindingCore>> {
    let class = &classes(object.py())?.binding;
    core(object, class, what, "RuntimeBindingManifest", |o| {
        init_binding_manifest(o)
    })
}

/// Makes the members a manifest built by the core left for first access (`tensors`,
/// `fragments`; see `emit::placement`) and stores them on the instance. Called by the
/// classes' `__getattr__`; an instance without a core value has nothing left to make.
#[pyfunction]
pub(crate) fn materialize(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let dict = this.getattr("__dict__")?.cast_into::<PyDict>()?;
    let Some(held) = dict.get_item(CORE)? else {
        return Ok(());
    };
    let members = if let Ok(core) = held.cast::<PlacementCore>() {
        manifest_lists::placement_members(py, &core.get().0)?
    } else if let Ok(core) = held.cast::<RuntimeCore>() {
        manifest_lists::runtime_members(py, &core.get().0)?
    } else if let Ok(core) = held.cast::<BindingCore>() {
        manifest_lists::binding_members(py, &core.get().0)?
    } else {
        return Ok(());
    };
    store(this, &members)
}
