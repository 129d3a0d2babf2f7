//! Core rejections as Python exceptions: a `ValueError` whose message is the contract's
//! message, with the stable `code` and the JSON pointer `path` (or `None`) attached.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    weight_manifest,
    ManifestError,
    PyValueError,
    "A contract rejection: a ValueError with the contract's message, its stable `code` \
     and, where the contract defines one, the JSON pointer `path` (else None)."
);

/// The Python exception for a core rejection.
pub(crate) fn to_py(py: Python<'_>, error: &weight_manifest::Error) -> PyErr {
    let exception = ManifestError::new_err(error.message().to_owned());
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
