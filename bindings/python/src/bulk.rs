//! The bulk path (`PlacementManifest.from_records`): a placement from plain records, built
//! in one native call. The records become the placement document (§6.2) the core's strict
//! reader reads, so every rule, its order and the pointers of its errors are the core's:
//! a bad record is rejected at `/fragments/5/nbytes` as the same document would be. The
//! result's dataclass members are made on first access (see `emit::placement`).
//!
//! A record is a dict (its items, unknown keys included, so the reader rejects them), a
//! tuple or list in the dataclass's field order, or any object with the fields as
//! attributes. Optional members left out take the dataclass defaults.
//!
//! Records whose members are already of the wire types (exact `str`, `int` in u64, lists
//! or tuples of them) are taken as typed wire values (module `typed`), which the core
//! validates exactly as their document ([`Placement::from_wire`]); this is the fast path,
//! a fraction of the memory of a document tree. Anything else is converted to the
//! document tree, whose errors the core reports as for any document.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use weight_manifest::wire::key;
use weight_manifest::{Object, Options, Placement, Value};

use crate::classes::GcPause;
use crate::convert::value;
use crate::emit;
use crate::errors::OrRaise;

pub(crate) mod typed;

/// A record kind: its members in dataclass field order, and the defaults of the optional
/// ones (the trailing fields).
struct Kind {
    order: &'static [&'static str],
    defaults: fn() -> Vec<(&'static str, Value<'static>)>,
}

const TENSOR: Kind = Kind {
    order: &crate::values::TensorDescriptor::FIELDS,
    defaults: || {
        vec![
            (key::LAYER_ID, Value::Null),
            (key::EXPERT_ID, Value::Null),
            (key::SHARD_DIMS, Value::Null),
        ]
    },
};

const FRAGMENT: Kind = Kind {
    order: &crate::values::PlacementFragment::FIELDS,
    defaults: || vec![(key::ALIASES, Value::Array(Vec::new()))],
};

/// The coordinates of a rank given as a tuple, in `ParallelRank`'s field order.
const RANK_ORDER: [&str; 4] = crate::values::ParallelRank::FIELDS;

/// A member value: `rank` may be a dict, a (dp, tp, pp, ep) tuple or a ParallelRank.
fn member_value(name: &str, object: &Bound<'_, PyAny>) -> PyResult<Value<'static>> {
    if name != key::RANK {
        return value(object);
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        return dict_object(dict, &[]);
    }
    if object.is_instance_of::<PyTuple>() || object.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = object.try_iter()?.collect::<PyResult<_>>()?;
        let members = RANK_ORDER
            .iter()
            .zip(&items)
            .map(|(k, v)| Ok((Cow::Borrowed(*k), value(v)?)))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Object(Object::from_members(members)));
    }
    // An object with the coordinates as attributes (a ParallelRank); anything else is
    // passed on as it is, for the reader to reject.
    let mut members = Vec::with_capacity(RANK_ORDER.len());
    for k in RANK_ORDER {
        match object.getattr(k) {
            Ok(coordinate) => members.push((Cow::Borrowed(k), value(&coordinate)?)),
            Err(_) => return value(object),
        }
    }
    Ok(Value::Object(Object::from_members(members)))
}

/// A dict's items as an object, with `defaults` for the members it leaves out.
fn dict_object(
    dict: &Bound<'_, PyDict>,
    defaults: &[(&'static str, Value<'static>)],
) -> PyResult<Value<'static>> {
    let mut members = Vec::with_capacity(dict.len() + defaults.len());
    for (k, v) in dict.iter() {
        let k = k
            .cast_into::<PyString>()
            .map_err(|_| PyTypeError::new_err("record keys must be str"))?;
        // A key that is no Unicode text (a lone surrogate) is an unknown member, which the
        // reader rejects where it is.
        let name =
            crate::utf8::text(&k).map_or_else(|| k.to_string_lossy().into_owned(), str::to_owned);
        let converted = member_value(&name, &v)?;
        members.push((Cow::Owned(name), converted));
    }
    for (name, default) in defaults {
        if !dict.contains(*name)? {
            members.push((Cow::Borrowed(*name), default.clone()));
        }
    }
    Ok(Value::Object(Object::from_members(members)))
}

/// One record of `kind` as a document object.
fn record(object: &Bound<'_, PyAny>, kind: &Kind) -> PyResult<Value<'static>> {
    let defaults = (kind.defaults)();
    if let Ok(dict) = object.cast::<PyDict>() {
        return dict_object(dict, &defaults);
    }
    let mut members = Vec::with_capacity(kind.order.len());
    if object.is_instance_of::<PyTuple>() || object.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = object.try_iter()?.collect::<PyResult<_>>()?;
        if items.len() > kind.order.len() {
            return Err(PyTypeError::new_err(format!(
                "a record tuple has at most {} items, got {}",
                kind.order.len(),
                items.len()
            )));
        }
        for (name, item) in kind.order.iter().zip(&items) {
            members.push((Cow::Borrowed(*name), member_value(name, item)?));
        }
    } else {
        for name in kind.order {
            if let Ok(attribute) = object.getattr(*name) {
                members.push((Cow::Borrowed(*name), member_value(name, &attribute)?));
            }
        }
    }
    for (name, default) in defaults {
        if !members.iter().any(|(k, _)| k == name) {
            members.push((Cow::Borrowed(name), default));
        }
    }
    Ok(Value::Object(Object::from_members(members)))
}

/// The records of an iterable as a document array.
fn records(iterable: &Bound<'_, PyAny>, kind: &Kind) -> PyResult<Value<'static>> {
    let items = iterable
        .try_iter()?
        .map(|item| record(&item?, kind))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Value::Array(items))
}

/// `PlacementManifest.from_records(model_id=, revision=, tensors=, fragments=,
/// placement_id=None)`: the placement of the records, validated by the core as the
/// document with those members would be. A given placement_id must be the canonical id.
#[pyfunction]
#[pyo3(signature = (class, model_id, revision, tensors, fragments, placement_id=None))]
pub(crate) fn placement_from_records<'py>(
    class: &Bound<'py, PyType>,
    model_id: &Bound<'py, PyAny>,
    revision: &Bound<'py, PyAny>,
    tensors: &Bound<'py, PyAny>,
    fragments: &Bound<'py, PyAny>,
    placement_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    if let Some(wire) = typed::placement(model_id, revision, tensors, fragments, placement_id)? {
        let placement = py
            .detach(|| Placement::from_wire_owned(wire))
            .or_raise(py)?;
        return emit::placement(class, placement);
    }
    let document = {
        let _pause = GcPause::new(py)?;
        let id = placement_id.map_or(Ok(Value::Null), value)?;
        Value::Object(Object::from_members(vec![
            (Cow::Borrowed(key::MODEL_ID), value(model_id)?),
            (Cow::Borrowed(key::REVISION), value(revision)?),
            (Cow::Borrowed(key::PLACEMENT_ID), id),
            (Cow::Borrowed(key::TENSORS), records(tensors, &TENSOR)?),
            (
                Cow::Borrowed(key::FRAGMENTS),
                records(fragments, &FRAGMENT)?,
            ),
        ]))
    };
    let placement = py
        .detach(|| Placement::from_value(&document, &Options::default()))
        .or_raise(py)?;
    drop(document);
    emit::placement(class, placement)
}
