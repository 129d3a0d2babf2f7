//! The text of a Python `str` without copying it.
//!
//! The wheel is built for the limited API of CPython 3.9 (abi3), where PyO3 reads a `str`
//! by encoding it into a new `bytes` object and copying that (`PyString::to_cow`): two
//! allocations and two copies for every id of every fragment. CPython's
//! `PyUnicode_AsUTF8AndSize` returns the string's own UTF-8 buffer instead (an ASCII
//! string's data, else a UTF-8 form cached in the object on first use). It is in the
//! limited API from 3.10 and part of CPython's public C API, with this signature, since
//! 3.3, so an extension module resolves it in any interpreter that loads it (Windows,
//! whose `python3.dll` exports it only from 3.10, would need an abi3-py310 build; see
//! `tensor.rs` for the same case).

use std::ffi::c_char;

use pyo3::ffi::{PyObject, Py_ssize_t};
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    fn PyUnicode_AsUTF8AndSize(unicode: *mut PyObject, size: *mut Py_ssize_t) -> *const c_char;
}

/// The text of `string`, borrowed from the string object; `None` (the error cleared) when
/// it is not a Unicode scalar sequence (a lone surrogate), which no contract value is.
#[allow(unsafe_code)]
pub(crate) fn text<'a>(string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    let mut size: Py_ssize_t = 0;
    // SAFETY: the GIL is held (`string` is bound) and `string` is a str. On success the
    // buffer holds `size` bytes of valid UTF-8 owned by the string object, which lives at
    // least as long as the borrow `'a`; on failure the pointer is NULL and an exception
    // is set, which is cleared here.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(string.as_ptr(), &raw mut size);
        if data.is_null() {
            drop(PyErr::take(string.py()));
            return None;
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), usize::try_from(size).ok()?);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}
