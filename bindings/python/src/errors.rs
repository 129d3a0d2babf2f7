//! Core rejections as Python exceptions: a `ValueError` whose message is the contract's
//! message, with the stable `code`, the JSON pointer `path` (or `None`) and, for
//! `invalid_json`, the `line`, `column` and `offset` where the text breaks (else `None`)
//! attached.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use weight_manifest::Detail;

create_exception!(
    weight_manifest,
    ManifestError,
    PyValueError,
    "A contract rejection: a ValueError with the contract's message, its stable `code` \
     and, where the contract defines one, the JSON pointer `path` (else None). An \
     `invalid_json` rejection also has the `line` (1-based), `column` (1-based, in \
     characters) and byte `offset` (0-based) of the first offending byte (else None); \
     `detail` holds the numbers behind the rejection where there are some (a \
     `fields_mismatch`: the `missing` and `unexpected` keys and `looks_like`, the document \
     kind they are instead), else None."
);

/// The message as the reference renders it: `address_overlap` embeds the Python repr of
/// the address-space tuple (contract §16 D8), so it is rendered here by Python itself.
fn message(py: Python<'_>, error: &weight_manifest::Error) -> PyResult<String> {
    match error.detail() {
        Some(Detail::AddressOverlap {
            first,
            second,
            instance_id,
            worker_id,
            device,
        }) => {
            let space = PyTuple::new(py, [instance_id, worker_id, device])?;
            Ok(format!(
                "runtime manifest address ranges overlap: {first} and {second} in {}",
                space.repr()?
            ))
        }
        _ => Ok(error.message().to_owned()),
    }
}

/// The Python exception for a core rejection.
pub(crate) fn to_py(py: Python<'_>, error: &weight_manifest::Error) -> PyErr {
    let text = match message(py, error) {
        Ok(text) => text,
        Err(e) => return e,
    };
    let exception = ManifestError::new_err(text);
    let value = exception.value(py);
    let at = error.json_location();
    if let Err(e) = value
        .setattr("code", error.code().as_str())
        .and_then(|()| value.setattr("path", error.path()))
        .and_then(|()| value.setattr("line", at.map(|at| at.line)))
        .and_then(|()| value.setattr("column", at.map(|at| at.column)))
        .and_then(|()| value.setattr("offset", at.map(|at| at.offset)))
        .and_then(|()| value.setattr("detail", detail(py, error)?))
    {
        return e;
    }
    exception
}

/// The numbers behind a rejection as a dict, for the details that have them (else None):
/// a `fields_mismatch` gives `missing` and `unexpected` (lists of keys) and `looks_like`
/// (`{"kind", "command"}` when the keys are another document's, else None).
fn detail<'py>(py: Python<'py>, error: &weight_manifest::Error) -> PyResult<Bound<'py, PyAny>> {
    let Some(Detail::FieldsMismatch {
        missing,
        unexpected,
        looks_like,
    }) = error.detail()
    else {
        return Ok(py.None().into_bound(py));
    };
    let dict = PyDict::new(py);
    dict.set_item("missing", missing)?;
    dict.set_item("unexpected", unexpected)?;
    let kind = match looks_like {
        Some(kind) => {
            let entry = PyDict::new(py);
            entry.set_item("kind", kind.name)?;
            entry.set_item("command", format!("weight-manifest {}", kind.command))?;
            entry.into_any()
        }
        None => py.None().into_bound(py),
    };
    dict.set_item("looks_like", kind)?;
    Ok(dict.into_any())
}

/// Converts a core result, raising its rejection.
pub(crate) trait OrRaise<T> {
    /// The value, or the rejection as a Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for weight_manifest::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
