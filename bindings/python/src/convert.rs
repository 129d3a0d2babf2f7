//! Python objects to document values (`weight_manifest::Value`), the core's input.
//!
//! The conversion decides only which JSON type a Python object stands for; every check is
//! the core's. `None` is null; `bool` is a boolean; a `str` (or subclass) is a string; an
//! `int` subclass other than `bool`, or any object implementing `__index__` (for example
//! `numpy.int64`), is an integer with its exact value; a `float` is a non-integer number;
//! a sequence (`list`, `tuple` or any `collections.abc.Sequence` other than `str`, `bytes`
//! and `bytearray`) is an array. Anything else — a mapping, `bytes`, an arbitrary object, a
//! `str` holding lone surrogates (not a Unicode scalar sequence) — stands for a JSON object:
//! no contract value is one, so it fails whichever check reads it.
//!
//! Contract values are never nested deeper than an array of scalars, so an element of an
//! array that is itself a container is converted as an empty container of its kind: the
//! checks reject it by its type alone, and a self-containing list cannot recurse.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple,
};
use weight_manifest::{Object, Value};

/// The document value a Python object stands for.
pub(crate) fn value(object: &Bound<'_, PyAny>) -> PyResult<Value<'static>> {
    convert(object, false)
}

/// An object that no contract value is: fails every scalar and array check.
pub(crate) fn opaque() -> Value<'static> {
    Value::Object(Object::default())
}

/// A string value.
pub(crate) fn text(text: &str) -> Value<'static> {
    Value::Str(Cow::Owned(text.to_owned()))
}

fn convert(object: &Bound<'_, PyAny>, nested: bool) -> PyResult<Value<'static>> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(string) = object.cast::<PyString>() {
        return Ok(crate::utf8::text(string).map_or_else(opaque, text));
    }
    if object.is_instance_of::<PyInt>() {
        return integer(object);
    }
    if object.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(Cow::Owned(object.repr()?.to_string())));
    }
    if object.is_instance_of::<PyBytes>() || object.is_instance_of::<PyByteArray>() {
        return Ok(opaque());
    }
    if !(object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>()) {
        if let Some(index) = as_index(object)? {
            return integer(&index);
        }
    }
    if is_sequence(object) {
        if nested {
            return Ok(Value::Array(Vec::new()));
        }
        let items = object
            .try_iter()?
            .map(|item| convert(&item?, true))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    Ok(opaque())
}

/// A sequence in the reference's sense: `collections.abc.Sequence`, but not `str`, `bytes`
/// or `bytearray`.
pub(crate) fn is_sequence(object: &Bound<'_, PyAny>) -> bool {
    !(object.is_instance_of::<PyString>()
        || object.is_instance_of::<PyBytes>()
        || object.is_instance_of::<PyByteArray>())
        && object.cast::<PySequence>().is_ok()
}

/// `operator.index(object)` for an object whose type defines `__index__`; `None` when the
/// object is not an integer in that sense (no `__index__`, or it raises `TypeError`).
fn as_index<'py>(object: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = object.py();
    if !object.get_type().hasattr(intern!(py, "__index__"))? {
        return Ok(None);
    }
    match operator_index(py)?.call1((object,)) {
        Ok(index) => Ok(Some(index)),
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

fn operator_index(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static INDEX: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    INDEX
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py.import("operator")?.getattr("index")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// An `int` (or subclass, or `__index__` result) as an exact integer value.
fn integer(object: &Bound<'_, PyAny>) -> PyResult<Value<'static>> {
    if let Ok(n) = object.extract::<u64>() {
        return Ok(Value::UInt(n));
    }
    // Outside u64: the exact decimal text (a subclass's own `__str__` is not used).
    let py = object.py();
    let exact = operator_index(py)?.call1((object,))?;
    let negative = exact.lt(0)?;
    let text = match exact.str() {
        Ok(text) => text.to_string(),
        // Beyond Python's int-to-str digit limit: `decimal` converts without it.
        Err(_) => py
            .import("decimal")?
            .getattr("Decimal")?
            .call1((&exact,))?
            .str()?
            .to_string(),
    };
    Ok(if negative {
        Value::NegInt(Cow::Owned(text))
    } else {
        Value::BigUInt(Cow::Owned(text))
    })
}
