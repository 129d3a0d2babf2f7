//! The behaviour `@dataclass(frozen=True)` gives a class, for the native value classes:
//! equality and hashing over the compared fields as tuples, the field-wise repr, the
//! frozen `__setattr__` / `__delattr__`, and pickling by the constructor's positional
//! arguments. Every field but `owner` is compared, hashed and shown (the declarations in
//! `weight_manifest._types` say so, and its `_native_dataclass` checks it).

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

/// The one field that is neither compared, hashed nor shown (`field(compare=False,
/// repr=False)` in the declarations).
pub(crate) const OWNER: &str = "owner";

/// The compared fields of `fields`, in order.
fn compared<'a, 'py>(
    py: Python<'py>,
    fields: &'a [Py<PyAny>],
    names: &'a [&'static str],
) -> impl Iterator<Item = (&'static str, &'a Bound<'py, PyAny>)> + 'a
where
    'py: 'a,
{
    names
        .iter()
        .zip(fields)
        .filter(|(name, _)| **name != OWNER)
        .map(move |(name, field)| (*name, field.bind(py)))
}

/// `(self.a, ...) == (other.a, ...)` over the compared fields.
pub(crate) fn eq(
    py: Python<'_>,
    fields: &[Py<PyAny>],
    other: &[Py<PyAny>],
    names: &[&'static str],
) -> PyResult<bool> {
    for ((_, a), (_, b)) in compared(py, fields, names).zip(compared(py, other, names)) {
        // A tuple compares its items by identity first, then by `==`.
        if !(a.is(b) || a.eq(b)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `hash((self.a, ...))` over the compared fields.
pub(crate) fn hash(
    py: Python<'_>,
    fields: &[Py<PyAny>],
    names: &[&'static str],
) -> PyResult<isize> {
    let items: Vec<_> = compared(py, fields, names).map(|(_, f)| f).collect();
    PyTuple::new(py, items)?.hash()
}

/// `Class(a=..., b=...)` with the class's qualified name and each shown field's repr.
pub(crate) fn repr(
    object: &Bound<'_, PyAny>,
    fields: &[Py<PyAny>],
    names: &[&'static str],
) -> PyResult<String> {
    let py = object.py();
    let mut text = object.get_type().qualname()?.to_string();
    text.push('(');
    for (i, (name, field)) in compared(py, fields, names).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(name);
        text.push('=');
        text.push_str(&field.repr()?.to_cow()?);
    }
    text.push(')');
    Ok(text)
}

/// `dataclasses.FrozenInstanceError`.
fn frozen_error(py: Python<'_>, message: String) -> PyErr {
    static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    match ERROR.import(py, "dataclasses", "FrozenInstanceError") {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

/// The frozen dataclass's `__setattr__` (`value`) and `__delattr__` (`None`): a field,
/// or any attribute of an instance of the class itself, cannot be assigned or deleted;
/// an attribute of a subclass instance that is not a field can.
#[allow(unsafe_code)]
pub(crate) fn set(
    object: &Bound<'_, PyAny>,
    class: &Bound<'_, PyType>,
    name: &Bound<'_, PyString>,
    value: Option<&Bound<'_, PyAny>>,
    names: &[&'static str],
) -> PyResult<()> {
    let py = object.py();
    let field = crate::utf8::text(name).is_some_and(|text| names.contains(&text));
    if object.get_type().is(class) || field {
        let message = match value {
            Some(_) => format!("cannot assign to field {}", name.repr()?),
            None => format!("cannot delete field {}", name.repr()?),
        };
        return Err(frozen_error(py, message));
    }
    let value = value.map_or(std::ptr::null_mut(), Bound::as_ptr);
    // SAFETY: the GIL is held; `object` and `name` are alive, `value` is alive or NULL
    // (NULL deletes), as `PyObject_GenericSetAttr` takes them.
    let status =
        unsafe { pyo3::ffi::PyObject_GenericSetAttr(object.as_ptr(), name.as_ptr(), value) };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::take(py)
            .unwrap_or_else(|| PyAttributeError::new_err("attribute could not be set")))
    }
}

/// `(type(self), (fields...))`, with the instance `__dict__` of a subclass instance as
/// the state when it holds anything.
pub(crate) fn reduce<'py>(
    object: &Bound<'py, PyAny>,
    fields: &[Py<PyAny>],
) -> PyResult<Bound<'py, PyTuple>> {
    let py = object.py();
    let arguments = PyTuple::new(py, fields.iter().map(|f| f.bind(py)))?;
    let class = object.get_type();
    if let Ok(state) = object.getattr(pyo3::intern!(py, "__dict__")) {
        if state.cast::<PyDict>().is_ok_and(|d| !d.is_empty()) {
            return PyTuple::new(py, [class.into_any(), arguments.into_any(), state]);
        }
    }
    PyTuple::new(py, [class.into_any(), arguments.into_any()])
}
