//! Core rejections as Python exceptions: a `ValueError` whose message is the contract's
//! message, with the stable `code`, the JSON pointer `path` (or `None`) and, for
//! `invalid_json`, the `line`, `column` and `offset` where the text breaks (else `None`)
//! attached.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weight_manifest::Detail;

create_exception!(
    weight_manifest,
    ManifestError,
    PyValueError,
    "A contract rejection: a ValueError with the contract's message, its stable `code` \
     and, where the contract defines one, the JSON pointer `path` (else None). An \
     `invalid_json` rejection also has the `line` (1-based), `column` (1-based, in \
     characters) and byte `offset` (0-based) of the first offending byte (else None); \
     `detail` is a dict of the numbers behind the rejection where there are some (else \
     None): `expected` and `got` of a mismatch, the `axis`, `offset`, `extent` and `size` \
     of a box on one axis, the pointer `other` of the second element of a duplicate or \
     overlap, a `fields_mismatch`'s `missing` and `unexpected` keys and `looks_like`."
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
            ..
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

/// The numbers behind a rejection as a dict (the core's [`Detail::to_json`], read by
/// Python's `json`, so numbers past 2^64 − 1 stay exact), else None. `invalid_json`'s
/// location is in `line`, `column` and `offset` instead.
fn detail<'py>(py: Python<'py>, error: &weight_manifest::Error) -> PyResult<Bound<'py, PyAny>> {
    match error.detail() {
        None | Some(Detail::JsonLocation(_)) => Ok(py.None().into_bound(py)),
        Some(detail) => py
            .import("json")?
            .getattr("loads")?
            .call1((detail.to_json(),)),
    }
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
