//! The three manifests (contract §2.6–§2.8) built from Python objects: `__post_init__` of
//! each dataclass calls its `init_*` here. The binding runs the in-memory steps (§8.1
//! steps 1 and 3, §8.4 step 1, §8.6 step 1: the collection is a sequence of the right
//! type) with the core's error constructors; the core runs everything else. The validated
//! core value is kept on the instance (`_wm_core`, not a field) for `to_json`, `digest`,
//! the projections and bind.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use weight_manifest::{construct, Binding, Object, Owner, Placement, Runtime};

use crate::classes::{classes, is_a, store, Names};
use crate::convert::{is_sequence, value};
use crate::emit::{self, descriptors, int, opt_int, opt_str, string};
use crate::errors::to_py;
use crate::values::{binding_fragment, descriptor, placement_fragment, runtime_fragment};
use pyo3::intern;
use pyo3::types::PyInt;
use weight_manifest::wire::TensorDescriptor;

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
fn items<'py>(
    this: &Bound<'py, PyAny>,
    owner: &str,
    collection: &'static str,
    class: &Py<PyType>,
    type_name: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = this.py();
    let member = this.getattr(collection)?;
    if !is_sequence(&member) {
        let error = construct::not_a_sequence(&format!("{owner} {collection}"));
        return Err(to_py(py, &error));
    }
    let items = member.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    for item in &items {
        if !is_a(item, class)? {
            let error = construct::wrong_element_type(owner, collection, type_name);
            return Err(to_py(py, &error));
        }
    }
    Ok(items)
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

/// The owner of a fragment instance (`None` stays unset).
fn owner_of(fragment: &Bound<'_, PyAny>) -> PyResult<Option<Owner>> {
    let owner = fragment.getattr("owner")?;
    Ok((!owner.is_none()).then(|| Owner::new(owner.unbind())))
}

/// `items` in the order the core holds them: sorted by `id` (byte order, as the core sorts;
/// the core has checked that the ids are distinct).
fn sorted_by<'py, 'a>(
    py: Python<'py>,
    items: &[Bound<'py, PyAny>],
    id: impl Fn(usize) -> &'a str,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| id(a).cmp(id(b)));
    PyTuple::new(py, order.into_iter().map(|i| items[i].clone()))
}

/// Whether a TensorDescriptor instance spells `partition_dim` and `shard_dims` as its
/// canonical form does (§3), so a manifest may hold the instance itself.
fn spelled_canonically(item: &Bound<'_, PyAny>, canonical: &TensorDescriptor) -> PyResult<bool> {
    let py = item.py();
    let exact = |o: &Bound<'_, PyAny>, n: u64| {
        o.is_exact_instance_of::<PyInt>() && o.extract::<u64>().ok() == Some(n)
    };
    let dim = item.getattr(intern!(py, "partition_dim"))?;
    let dim_ok = canonical
        .partition_dim
        .map_or_else(|| dim.is_none(), |n| exact(&dim, n));
    let dims = item.getattr(intern!(py, "shard_dims"))?;
    let dims_ok = match &canonical.shard_dims {
        None => dims.is_none(),
        Some(held) => dims
            .cast_exact::<PyTuple>()
            .is_ok_and(|t| t.len() == held.len() && t.iter().zip(held).all(|(o, &n)| exact(&o, n))),
    };
    Ok(dim_ok && dims_ok)
}

/// The manifest's `tensors` member: the given instances in the core's order (sorted by
/// tensor_id) where they are spelled canonically, new canonical instances where not.
/// `ids` are the items' tensor_ids; `canonical` the core's descriptors, sorted.
fn held_tensors<'py>(
    py: Python<'py>,
    items: &[Bound<'py, PyAny>],
    ids: &[&str],
    canonical: &[TensorDescriptor],
) -> PyResult<Bound<'py, PyAny>> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| ids[a].cmp(ids[b]));
    let class = classes(py)?.descriptor.bind(py);
    let held = order
        .into_iter()
        .zip(canonical)
        .map(|(i, canonical)| {
            if spelled_canonically(&items[i], canonical)? {
                Ok(items[i].clone())
            } else {
                crate::classes::trusted(class, &crate::emit::descriptor_fields(py, canonical)?)
            }
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyTuple::new(py, held)?.into_any())
}

/// Stores a validated placement and its members on the PlacementManifest under
/// construction.
fn store_placement<'py>(
    this: &Bound<'py, PyAny>,
    placement: Placement,
    tensors: Bound<'py, PyAny>,
    fragments: Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    store(
        this,
        &[
            ("model_id", string(py, placement.model_id())?),
            ("revision", string(py, placement.revision())?),
            ("tensors", tensors),
            ("fragments", fragments),
            ("placement_id", string(py, placement.placement_id())?),
            (CORE, Bound::new(py, PlacementCore(placement))?.into_any()),
        ],
    )
}

/// The fast path of `PlacementManifest.__post_init__`: when every field holds its wire
/// type (as the dataclass constructors leave them), the typed manifest is validated by
/// the core as its document; `false` when it is not typed or the core rejects it (the
/// in-memory path then runs, and reports the rejection in its own order).
fn init_typed_placement<'py>(
    this: &Bound<'py, PyAny>,
    tensor_items: &[Bound<'py, PyAny>],
    fragment_items: &[Bound<'py, PyAny>],
) -> PyResult<bool> {
    let py = this.py();
    // Nothing made here is cyclic; a collection would rescan the caller's whole heap.
    let _pause = crate::classes::GcPause::new(py)?;
    let member = |name: &str| this.getattr(name);
    let Some(wire) = crate::bulk::typed::placement_of_items(
        &member("model_id")?,
        &member("revision")?,
        tensor_items,
        fragment_items,
        Some(&member("placement_id")?),
    )?
    else {
        return Ok(false);
    };
    let Ok(placement) = py.detach(|| Placement::from_wire(&wire)) else {
        return Ok(false);
    };
    let tensor_ids: Vec<&str> = wire.tensors.iter().map(|t| t.tensor_id.as_str()).collect();
    let tensors = held_tensors(py, tensor_items, &tensor_ids, placement.tensors())?;
    let fragments = sorted_by(py, fragment_items, |i| {
        wire.fragments[i].placement_fragment_id.as_str()
    })?;
    store_placement(this, placement, tensors, fragments.into_any())?;
    Ok(true)
}

/// `PlacementManifest.__post_init__` (§8.1).
#[pyfunction]
pub(crate) fn init_placement_manifest(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let c = classes(py)?;
    let owner = "PlacementManifest";
    let tensor_items = items(this, owner, "tensors", &c.descriptor, "TensorDescriptor")?;
    let fragment_items = items(
        this,
        owner,
        "fragments",
        &c.placement_fragment,
        "PlacementFragment",
    )?;
    if init_typed_placement(this, &tensor_items, &fragment_items)? {
        return Ok(());
    }
    let tensors = tensor_items
        .iter()
        .map(descriptor)
        .collect::<PyResult<Vec<_>>>()?;
    let fragments = fragment_items
        .iter()
        .map(placement_fragment)
        .collect::<PyResult<Vec<_>>>()?;
    let fields = header(this, &PLACEMENT_HEADER)?;
    let tensor_ids: Vec<String> = tensors.iter().map(|t| t.tensor_id.clone()).collect();
    let fragment_ids: Vec<String> = fragments
        .iter()
        .map(|f| f.placement_fragment_id.clone())
        .collect();
    let placement =
        construct::placement_manifest(&fields, tensors, fragments).map_err(|e| to_py(py, &e))?;
    let ids: Vec<&str> = tensor_ids.iter().map(String::as_str).collect();
    let held = held_tensors(py, &tensor_items, &ids, placement.tensors())?;
    let fragments = sorted_by(py, &fragment_items, |i| fragment_ids[i].as_str())?;
    store_placement(this, placement, held, fragments.into_any())
}

/// `RuntimeManifest.__post_init__` (§8.4). Fragments keep manifest order and their own
/// owners; tensors are held canonical (§8.4 step 2).
#[pyfunction]
pub(crate) fn init_runtime_manifest(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let c = classes(py)?;
    let owner = "RuntimeManifest";
    let tensor_items = items(this, owner, "tensors", &c.descriptor, "TensorDescriptor")?;
    let fragment_items = items(
        this,
        owner,
        "fragments",
        &c.runtime_fragment,
        "RuntimeFragment",
    )?;
    let tensors = tensor_items
        .iter()
        .map(descriptor)
        .collect::<PyResult<Vec<_>>>()?;
    let fragments = fragment_items
        .iter()
        .map(runtime_fragment)
        .collect::<PyResult<Vec<_>>>()?;
    let owners = fragment_items
        .iter()
        .map(owner_of)
        .collect::<PyResult<Vec<_>>>()?;
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
    let c = classes(py)?;
    let fragment_items = items(
        this,
        "RuntimeBindingManifest",
        "fragments",
        &c.binding_fragment,
        "RuntimeBindingFragment",
    )?;
    let fragments = fragment_items
        .iter()
        .map(binding_fragment)
        .collect::<PyResult<Vec<_>>>()?;
    let owners = fragment_items
        .iter()
        .map(owner_of)
        .collect::<PyResult<Vec<_>>>()?;
    let ids: Vec<String> = fragments
        .iter()
        .map(|f| f.placement_fragment_id.clone())
        .collect();
    let binding = construct::binding_manifest(&header(this, &BINDING_HEADER)?, fragments, owners)
        .map_err(|e| to_py(py, &e))?;
    let fragments = sorted_by(py, &fragment_items, |i| ids[i].as_str())?.into_any();
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
        emit::placement_members(py, &core.get().0)?
    } else if let Ok(core) = held.cast::<RuntimeCore>() {
        emit::runtime_members(py, &core.get().0)?
    } else if let Ok(core) = held.cast::<BindingCore>() {
        emit::binding_members(py, &core.get().0)?
    } else {
        return Ok(());
    };
    store(this, &members)
}
