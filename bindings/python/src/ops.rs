//! The operations on whole documents and manifests: JSON in and out, the inventory
//! readers (with the owner resolver), the projections (§11) and bind (§12).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyType};
use weight_manifest::{
    reader, AddressSemantics, Binding, Options, Owner, Placement, Runtime, Value,
};

use crate::classes::classes;
use crate::convert::value;
use crate::emit;
use crate::errors::OrRaise;
use crate::manifests::{binding_core, placement_core, runtime_core};
use crate::records::{self, Inventory};
use crate::scalars::to_py;

/// The bytes of a document given as `str` or `bytes`. A `str` that is not UTF-8
/// encodable (lone surrogates) keeps its invalid bytes, and anything else is no text at
/// all: the core reader rejects both as `invalid_json`.
pub(crate) fn document_bytes<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(s) = text.cast::<PyString>() {
        return Ok(match crate::utf8::text(s) {
            Some(s) => Cow::Borrowed(s.as_bytes()),
            None => Cow::Owned(
                s.call_method1("encode", ("utf-8", "surrogatepass"))?
                    .cast_into::<PyBytes>()?
                    .as_bytes()
                    .to_vec(),
            ),
        });
    }
    if let Ok(b) = text.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = text.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    Ok(Cow::Borrowed(b""))
}

/// `PlacementManifest.from_json` (§6.2).
#[pyfunction]
pub(crate) fn placement_from_json<'py>(
    class: &Bound<'py, PyType>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let placement =
        Placement::from_json(document_bytes(text)?, &Options::default()).or_raise(class.py())?;
    emit::placement(class, placement)
}

/// `PlacementManifest.to_json` (§6.1).
#[pyfunction]
pub(crate) fn placement_to_json(manifest: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(placement_core(manifest, "manifest")?.get().0.to_json())
}

/// `PlacementManifest.digest` (§7.2).
#[pyfunction]
pub(crate) fn placement_digest(manifest: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(placement_core(manifest, "manifest")?
        .get()
        .0
        .digest()
        .to_owned())
}

/// Runtime manifest JSON (§9.1).
#[pyfunction]
pub(crate) fn runtime_to_json(manifest: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(runtime_core(manifest, "manifest")?.get().0.to_json())
}

/// Runtime binding manifest JSON (§9.2).
#[pyfunction]
pub(crate) fn binding_to_json(manifest: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(binding_core(manifest, "manifest")?.get().0.to_json())
}

/// A RuntimeManifest from runtime manifest JSON (§9.1).
#[pyfunction]
pub(crate) fn runtime_from_json<'py>(
    class: &Bound<'py, PyType>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let runtime =
        Runtime::from_json(document_bytes(text)?, &Options::default()).or_raise(class.py())?;
    emit::runtime(class, runtime)
}

/// A RuntimeBindingManifest from runtime binding manifest JSON (§9.2).
#[pyfunction]
pub(crate) fn binding_from_json<'py>(
    class: &Bound<'py, PyType>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let binding =
        Binding::from_json(document_bytes(text)?, &Options::default()).or_raise(class.py())?;
    emit::binding(class, binding)
}

/// Reads an inventory JSON document with the strict reader (§4) into Python data (dicts,
/// lists, exact ints). A top level that is not an object is rejected by the core's reader
/// for `kind` (`runtime`, `binding`, `placement`) before it reads anything else.
#[pyfunction]
pub(crate) fn read_inventory_json<'py>(
    text: &Bound<'py, PyAny>,
    kind: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = text.py();
    let label = match kind {
        "runtime" => "runtime inventory",
        "binding" => "runtime binding inventory",
        _ => "placement inventory",
    };
    let bytes = document_bytes(text)?;
    let document = reader::read(&bytes, label, &weight_manifest::Limits::default()).or_raise(py)?;
    if !matches!(document, Value::Object(_)) {
        let options = Options::default();
        match kind {
            "runtime" => Runtime::from_inventory(&document, &options).map(|_| ()),
            "binding" => Binding::from_inventory(&document, &options).map(|_| ()),
            _ => Placement::from_inventory(&document, &Options::default()).map(|_| ()),
        }
        .or_raise(py)?;
    }
    to_py(py, &document, false)
}

/// Calls the Python owner resolver once per record, in record order, as the core's readers
/// ask; the first exception it raises is kept and raised after the read.
struct Resolver<'a, 'py> {
    callback: Option<&'a Bound<'py, PyAny>>,
    records: &'a [Bound<'py, PyAny>],
    next: Cell<usize>,
    failure: RefCell<Option<PyErr>>,
}

impl<'a, 'py> Resolver<'a, 'py> {
    fn new(resolver: Option<&'a Bound<'py, PyAny>>, records: &'a [Bound<'py, PyAny>]) -> Self {
        Resolver {
            callback: resolver.filter(|r| !r.is_none()),
            records,
            next: Cell::new(0),
            failure: RefCell::new(None),
        }
    }

    fn resolve(&self) -> Option<Owner> {
        let index = self.next.get();
        self.next.set(index + 1);
        let callback = self.callback?;
        if self.failure.borrow().is_some() {
            return None;
        }
        match callback.call1((self.records.get(index)?,)) {
            Ok(owner) if owner.is_none() => None,
            Ok(owner) => Some(Owner::new(owner.unbind())),
            Err(e) => {
                *self.failure.borrow_mut() = Some(e);
                None
            }
        }
    }

    /// The read's result, unless the resolver raised first.
    fn finish<T>(self, result: PyResult<T>) -> PyResult<T> {
        match self.failure.into_inner() {
            Some(e) => Err(e),
            None => result,
        }
    }
}

/// Reads a runtime or binding inventory with the option and the resolver.
fn read_with<'py, T>(
    inventory: &Inventory<'py>,
    owner_resolver: Option<&Bound<'py, PyAny>>,
    address_semantics: Option<&Bound<'py, PyAny>>,
    read: fn(&Value<'_>, &Options<'_>) -> weight_manifest::Result<T>,
    py: Python<'py>,
) -> PyResult<T> {
    let given = address_semantics.map(value).transpose()?;
    // Any Python value: checked where §10.2 puts it, after the top-level object check.
    let semantics =
        AddressSemantics::for_document(&inventory.document, given.as_ref()).or_raise(py)?;
    let resolver = Resolver::new(owner_resolver, &inventory.records);
    let resolve = |_: &Value<'_>| resolver.resolve();
    let options = Options::default()
        .with_address_semantics(semantics)
        .with_owners(&resolve);
    let result = read(&inventory.document, &options).or_raise(py);
    resolver.finish(result)
}

/// `RuntimeManifest.from_runtime_inventory` (§10.3).
#[pyfunction]
#[pyo3(signature = (class, inventory, owner_resolver=None, address_semantics=None))]
pub(crate) fn runtime_from_inventory<'py>(
    class: &Bound<'py, PyType>,
    inventory: &Bound<'py, PyAny>,
    owner_resolver: Option<&Bound<'py, PyAny>>,
    address_semantics: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let inventory = records::runtime(inventory)?;
    let read = Runtime::from_inventory;
    let runtime = read_with(&inventory, owner_resolver, address_semantics, read, py)?;
    emit::runtime(class, runtime)
}

/// `RuntimeBindingManifest.from_runtime_inventory` (§10.4).
#[pyfunction]
#[pyo3(signature = (class, inventory, owner_resolver=None, address_semantics=None))]
pub(crate) fn binding_from_inventory<'py>(
    class: &Bound<'py, PyType>,
    inventory: &Bound<'py, PyAny>,
    owner_resolver: Option<&Bound<'py, PyAny>>,
    address_semantics: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let inventory = records::binding(inventory)?;
    let read = Binding::from_inventory;
    let binding = read_with(&inventory, owner_resolver, address_semantics, read, py)?;
    emit::binding(class, binding)
}

/// `PlacementManifest.from_runtime_inventory` (§10.5).
#[pyfunction]
pub(crate) fn placement_from_inventory<'py>(
    class: &Bound<'py, PyType>,
    inventory: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let inventory = records::placement(inventory)?;
    let placement =
        Placement::from_inventory(&inventory.document, &Options::default()).or_raise(class.py())?;
    emit::placement(class, placement)
}

/// The projection's `placement_id` argument as a document value: `None` is not given;
/// any other object goes to the argument's STR check.
fn id_argument(placement_id: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value<'static>>> {
    placement_id
        .filter(|id| !id.is_none())
        .map(crate::convert::value)
        .transpose()
}

/// bind takes values, not documents: its errors have no location (§15), so `path` is
/// None. (A projection's errors point into the document its runtime manifest was read
/// from, if it was read from one.)
fn unlocated(error: weight_manifest::Error) -> weight_manifest::Error {
    error.with_pointer(None)
}

/// `placement_manifest_from_runtime_manifest` (§11.1).
#[pyfunction]
#[pyo3(signature = (manifest, placement_id=None))]
pub(crate) fn project_placement<'py>(
    manifest: &Bound<'py, PyAny>,
    placement_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = manifest.py();
    let runtime = runtime_core(manifest, "manifest")?;
    let argument = id_argument(placement_id)?;
    let placement = weight_manifest::project_placement_value(&runtime.get().0, argument.as_ref())
        .or_raise(py)?;
    emit::placement(classes(py)?.placement.bind(py), placement)
}

/// `runtime_binding_from_runtime_manifest` (§11.2).
#[pyfunction]
#[pyo3(signature = (manifest, placement_id=None))]
pub(crate) fn project_binding<'py>(
    manifest: &Bound<'py, PyAny>,
    placement_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = manifest.py();
    let runtime = runtime_core(manifest, "manifest")?;
    let argument = id_argument(placement_id)?;
    let binding =
        weight_manifest::project_binding_value(&runtime.get().0, argument.as_ref()).or_raise(py)?;
    emit::binding(classes(py)?.binding.bind(py), binding)
}

/// `bind_runtime_manifest` (§12).
#[pyfunction]
pub(crate) fn bind<'py>(
    placement: &Bound<'py, PyAny>,
    binding: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = placement.py();
    let p = placement_core(placement, "placement")?;
    let b = binding_core(binding, "binding")?;
    let runtime = weight_manifest::bind(&p.get().0, &b.get().0)
        .map_err(unlocated)
        .or_raise(py)?;
    emit::runtime(classes(py)?.runtime.bind(py), runtime)
}
