//! Inventories given as Python objects (contract §10, §16 D5): the top level and each
//! record may be a mapping (read by key) or any object (read by attribute), as the
//! reference reads them. Only the members the contract reads are taken; the result is the
//! document the core's inventory readers read, so every rule and its order are the core's.

use std::borrow::Cow;

use pyo3::exceptions::{PyAttributeError, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString};
use weight_manifest::wire::key;
use weight_manifest::{inventory, Object, Value};

use crate::classes::Names;
use crate::convert::{is_sequence, value};

// The member lists are the core's own (`weight_manifest::inventory`), so the binding
// takes exactly the members the readers read.
static RUNTIME_RECORD: Names = Names::new(inventory::RUNTIME_RECORD_MEMBERS);
static BINDING_RECORD: Names = Names::new(inventory::BINDING_RECORD_MEMBERS);
static PLACEMENT_RECORD: Names = Names::new(inventory::PLACEMENT_RECORD_MEMBERS);
static RANK: Names = Names::new(inventory::RANK_MEMBERS);

/// An inventory as a document, with its records as given (for the owner resolver).
pub(crate) struct Inventory<'py> {
    /// The document the core reads.
    pub document: Value<'static>,
    /// The records, in order (empty when the list member is not a sequence).
    pub records: Vec<Bound<'py, PyAny>>,
}

static RUNTIME_TOP: Names = Names::without(inventory::RUNTIME_TOP_MEMBERS, &[key::TENSORS]);
static BINDING_TOP: Names = Names::without(inventory::BINDING_TOP_MEMBERS, &[key::FRAGMENTS]);
static PLACEMENT_TOP: Names = Names::without(inventory::PLACEMENT_TOP_MEMBERS, &[key::TENSORS]);

/// A runtime inventory (§10.3).
pub(crate) fn runtime<'py>(inventory: &Bound<'py, PyAny>) -> PyResult<Inventory<'py>> {
    read(inventory, &RUNTIME_TOP, key::TENSORS, &[&RUNTIME_RECORD])
}

/// A binding inventory (§10.4).
pub(crate) fn binding<'py>(inventory: &Bound<'py, PyAny>) -> PyResult<Inventory<'py>> {
    read(inventory, &BINDING_TOP, key::FRAGMENTS, &[&BINDING_RECORD])
}

/// A placement inventory (§10.5).
pub(crate) fn placement<'py>(inventory: &Bound<'py, PyAny>) -> PyResult<Inventory<'py>> {
    read(
        inventory,
        &PLACEMENT_TOP,
        key::TENSORS,
        &[&PLACEMENT_RECORD],
    )
}

/// Reads the `top` members, then the member `list`: a list of records with the members
/// `record_names` when it is a sequence, else the value as given (the core rejects it).
fn read<'py>(
    inventory: &Bound<'py, PyAny>,
    top: &Names,
    list: &'static str,
    record_names: &[&Names],
) -> PyResult<Inventory<'py>> {
    let py = inventory.py();
    let mut members = Vec::new();
    for (name, key) in top.interned(py) {
        if let Some(member) = member(inventory, &key)? {
            members.push((Cow::Borrowed(name), value(&member)?));
        }
    }
    let mut records = Vec::new();
    if let Some(member) = member(inventory, &PyString::intern(py, list))? {
        let converted = if is_sequence(&member) {
            records = member.try_iter()?.collect::<PyResult<Vec<_>>>()?;
            let values = records
                .iter()
                .map(|r| record(r, record_names))
                .collect::<PyResult<Vec<_>>>()?;
            Value::Array(values)
        } else {
            value(&member)?
        };
        members.push((Cow::Borrowed(list), converted));
    }
    Ok(Inventory {
        document: Value::Object(Object::from_members(members)),
        records,
    })
}

/// A record as an object holding the members it has; `rank` is read as a record too.
fn record(object: &Bound<'_, PyAny>, names: &[&Names]) -> PyResult<Value<'static>> {
    let py = object.py();
    let mut members = Vec::new();
    for (name, key) in names.iter().flat_map(|names| names.interned(py)) {
        if let Some(member) = member(object, &key)? {
            let converted = if name == key::RANK {
                record(&member, &[&RANK])?
            } else {
                value(&member)?
            };
            members.push((Cow::Borrowed(name), converted));
        }
    }
    Ok(Value::Object(Object::from_members(members)))
}

/// The member `name` of a mapping (by key) or of any other object (by attribute); `None`
/// when it has none.
fn member<'py>(
    object: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = object.py();
    if object.is_exact_instance_of::<PyDict>() {
        return object.cast::<PyDict>()?.get_item(name);
    }
    let found = if object.cast::<PyMapping>().is_ok() {
        object
            .get_item(name)
            .map_or_else(|e| absent_if::<PyKeyError>(py, e), |v| Ok(Some(v)))
    } else {
        object
            .getattr(name)
            .map_or_else(|e| absent_if::<PyAttributeError>(py, e), |v| Ok(Some(v)))
    };
    found
}

fn absent_if<E: pyo3::PyTypeInfo>(
    py: Python<'_>,
    error: PyErr,
) -> PyResult<Option<Bound<'_, PyAny>>> {
    if error.is_instance_of::<E>(py) {
        Ok(None)
    } else {
        Err(error)
    }
}
