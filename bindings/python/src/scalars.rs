//! Core values to Python scalars: integers, strings, optional ones, owners and the reader's
//! document values.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple};
use weight_manifest::{Owner, Value};

/// Named fields of a dataclass instance.
pub(crate) type Fields<'py> = Vec<(&'static str, Bound<'py, PyAny>)>;

/// A tuple of ints.
pub(crate) fn ints<'py>(py: Python<'py>, values: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, values)?.into_any())
}

/// A tuple of strs.
pub(crate) fn strs<'py>(py: Python<'py>, values: &[String]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(py, values)?.into_any())
}

/// A str.
pub(crate) fn string<'py>(py: Python<'py>, value: &str) -> PyResult<Bound<'py, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// An int.
pub(crate) fn int(py: Python<'_>, value: u64) -> PyResult<Bound<'_, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// An int or None.
pub(crate) fn opt_int(py: Python<'_>, value: Option<u64>) -> PyResult<Bound<'_, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// A str or None.
pub(crate) fn opt_str<'py>(py: Python<'py>, value: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    Ok(value.into_pyobject(py)?.into_any())
}

/// The Python object held as an owner, or None.
pub(crate) fn owner<'py>(py: Python<'py>, owner: Option<&Owner>) -> Bound<'py, PyAny> {
    owner
        .and_then(|o| o.downcast_ref::<Py<PyAny>>())
        .map_or_else(|| py.None().into_bound(py), |o| o.bind(py).clone())
}

/// A document value as Python data: null, booleans, exact ints, floats, strs; arrays as
/// tuples (`tuples`) or lists; objects as dicts.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    value: &Value<'_>,
    tuples: bool,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::UInt(n) => int(py, *n)?,
        Value::NegInt(text) | Value::BigUInt(text) => big_int(py, text)?,
        Value::Float(text) => PyFloat::new(py, text.parse::<f64>().unwrap_or(f64::NAN)).into_any(),
        Value::Str(s) => string(py, s)?,
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| to_py(py, item, tuples))
                .collect::<PyResult<Vec<_>>>()?;
            if tuples {
                PyTuple::new(py, items)?.into_any()
            } else {
                PyList::new(py, items)?.into_any()
            }
        }
        Value::Object(object) => {
            let dict = PyDict::new(py);
            for (key, item) in object.iter() {
                dict.set_item(key, to_py(py, item, tuples)?)?;
            }
            dict.into_any()
        }
    })
}

/// An integer written in decimal, of any size (Python's int-to-str digit limit does not
/// apply to `decimal`).
fn big_int<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let int = py.import("builtins")?.getattr("int")?;
    match int.call1((text,)) {
        Ok(n) => Ok(n),
        Err(_) => int.call1((py.import("decimal")?.getattr("Decimal")?.call1((text,))?,)),
    }
}
