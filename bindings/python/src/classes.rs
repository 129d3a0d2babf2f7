//! The manifest classes of the public API (frozen dataclasses defined in
//! `weight_manifest._manifests`), registered once at import, and their trusted
//! construction: a value the core has already validated is built without running its
//! checks again. (The value classes are native: `values`.)

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyString, PyType};

/// The registered dataclasses.
pub(crate) struct Classes {
    pub placement: Py<PyType>,
    pub runtime: Py<PyType>,
    pub binding: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();
static OBJECT_NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Registers the dataclasses (called once by `weight_manifest._manifests`).
#[pyfunction]
#[pyo3(signature = (*, placement, runtime, binding))]
pub(crate) fn register(
    py: Python<'_>,
    placement: Py<PyType>,
    runtime: Py<PyType>,
    binding: Py<PyType>,
) {
    let classes = Classes {
        placement,
        runtime,
        binding,
    };
    // A second registration (a reloaded module) keeps the first classes.
    let _ = CLASSES.set(py, classes);
}

/// The registered classes.
pub(crate) fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err("weight_manifest._manifests is not loaded")
    })
}

/// Whether `object` is an instance of `class`.
pub(crate) fn is_a(object: &Bound<'_, PyAny>, class: &Py<PyType>) -> PyResult<bool> {
    object.is_instance(class.bind(object.py()))
}

/// An instance of `class` holding `fields`, built without `__init__`: for values the core
/// produced and validated.
pub(crate) fn trusted<'py>(
    class: &Bound<'py, PyType>,
    fields: &[(&str, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let new = OBJECT_NEW.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("builtins")?
            .getattr("object")?
            .getattr("__new__")?
            .unbind())
    })?;
    let object = new.bind(py).call1((class,))?;
    let dict = object
        .getattr(pyo3::intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    for (name, value) in fields {
        dict.set_item(key(py, name), value)?;
    }
    Ok(object)
}

/// Stores `fields` into a manifest instance under construction (its `__post_init__`).
pub(crate) fn store<'py>(
    object: &Bound<'py, PyAny>,
    fields: &[(&str, Bound<'py, PyAny>)],
) -> PyResult<()> {
    let py = object.py();
    let dict = object
        .getattr(pyo3::intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    for (name, value) in fields {
        dict.set_item(key(py, name), value)?;
    }
    Ok(())
}

/// The interned Python string of a field name. Field names are few and fixed, so each is
/// interned once and then found by a cheap hash of its bytes (`PyString::intern` would
/// build and hash a new Python string every time).
fn key<'py>(py: Python<'py>, name: &str) -> Bound<'py, PyString> {
    type Table = std::sync::Mutex<HashMap<String, Py<PyString>, BuildHasherDefault<Fnv>>>;
    static KEYS: PyOnceLock<Table> = PyOnceLock::new();
    let table = KEYS.get_or_init(py, Table::default);
    let Ok(mut table) = table.lock() else {
        return PyString::intern(py, name);
    };
    if let Some(key) = table.get(name) {
        return key.bind(py).clone();
    }
    let key = PyString::intern(py, name);
    table.insert(name.to_owned(), key.clone().unbind());
    key
}

/// FNV-1a: a fast hash for the short, trusted field names of `key`.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Pauses Python's cyclic garbage collector while many acyclic objects are built: with the
/// collector running, building a manifest of n fragments rescans the growing heap again
/// and again. The previous state is restored when the guard is dropped.
pub(crate) struct GcPause<'py> {
    resume: Option<Bound<'py, PyModule>>,
}

impl<'py> GcPause<'py> {
    /// Disables the collector if it is enabled.
    pub(crate) fn new(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        if gc.call_method0("isenabled")?.is_truthy()? {
            gc.call_method0("disable")?;
            Ok(GcPause { resume: Some(gc) })
        } else {
            Ok(GcPause { resume: None })
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.resume {
            if let Err(e) = gc.call_method0("enable") {
                e.write_unraisable(gc.py(), None);
            }
        }
    }
}

/// A fixed list of attribute or member names, interned as Python strings on first use
/// (looking a name up by `&str` would build a new Python string every time).
pub(crate) struct Names {
    list: &'static [&'static str],
    except: &'static [&'static str],
    interned: PyOnceLock<Vec<Py<PyString>>>,
}

impl Names {
    /// The names of `list`.
    pub(crate) const fn new(list: &'static [&'static str]) -> Self {
        Self::without(list, &[])
    }

    /// The names of `list` but those of `except` (members read apart, such as a record
    /// list or a rank object).
    pub(crate) const fn without(
        list: &'static [&'static str],
        except: &'static [&'static str],
    ) -> Self {
        Names {
            list,
            except,
            interned: PyOnceLock::new(),
        }
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.list
            .iter()
            .copied()
            .filter(|name| !self.except.contains(name))
    }

    /// The interned Python strings of the names, in order (made on first use).
    pub(crate) fn keys(&self, py: Python<'_>) -> &[Py<PyString>] {
        self.interned.get_or_init(py, || {
            self.names()
                .map(|name| PyString::intern(py, name).unbind())
                .collect()
        })
    }

    /// Each name with its interned Python string.
    pub(crate) fn interned<'py>(
        &self,
        py: Python<'py>,
    ) -> Vec<(&'static str, Bound<'py, PyString>)> {
        let interned = self.interned.get_or_init(py, || {
            self.names()
                .map(|name| PyString::intern(py, name).unbind())
                .collect()
        });
        self.names()
            .zip(interned)
            .map(|(name, s)| (name, s.bind(py).clone()))
            .collect()
    }
}
