//! Core rejections as Python exceptions: a `ValueError` whose message is the contract's
//! message, with the stable `code` and the JSON pointer `path` (or `None`) attached.

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
     and, where the contract defines one, the JSON pointer `path` (else None)."
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
    if let Err(e) = value
        .setattr("code", error.code().as_str())
        .and_then(|()| value.setattr("path", error.path()))
    {
        return e;
    }
    exception
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
