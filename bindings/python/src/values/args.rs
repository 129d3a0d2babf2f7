//! A value class's call arguments bound to its fields, as the `__init__` of the dataclass
//! it replaces binds them: positional in field order, then by keyword; the same
//! `TypeError`s (missing, unexpected or repeated arguments, too many positional ones).
//!
//! Keywords are matched by identity with the interned field names first: a call site's
//! keyword names are the interned identifiers of its code object, so the usual call
//! compares pointers, not text (PyO3's own matching would encode every keyword name into
//! a new `bytes` object under the 3.9 limited API).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::classes::Names;

/// The parameters of one class's constructor, with `N` fields.
pub(crate) struct Signature<const N: usize> {
    /// The class name, as Python's messages name `Class.__init__()`.
    class: &'static str,
    /// The fields in order.
    names: &'static [&'static str; N],
    /// The same, interned.
    keys: Names,
    /// How many leading fields are required (the rest have defaults).
    required: usize,
}

/// The arguments given for each field, in field order (`None`: not given).
pub(crate) type Given<'py, const N: usize> = [Option<Bound<'py, PyAny>>; N];

impl<const N: usize> Signature<N> {
    /// The constructor of `class` with the fields `names`, the first `required` of them
    /// without a default.
    pub(crate) const fn new(
        class: &'static str,
        names: &'static [&'static str; N],
        required: usize,
    ) -> Self {
        Signature {
            class,
            names,
            keys: Names::new(names),
            required,
        }
    }

    /// Binds `args` and `kwargs` to the fields.
    pub(crate) fn bind<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Given<'py, N>> {
        let py = args.py();
        let names = self.names;
        let mut given: Given<'py, N> = std::array::from_fn(|_| None);
        if args.len() > N {
            return Err(self.too_many(args.len()));
        }
        for (slot, arg) in given.iter_mut().zip(args.iter()) {
            *slot = Some(arg);
        }
        if let Some(kwargs) = kwargs {
            let keys = self.keys.keys(py);
            for (key, value) in kwargs.iter() {
                let index = match keys.iter().position(|k| k.as_ptr() == key.as_ptr()) {
                    Some(i) => i,
                    None => self.by_text(&key)?,
                };
                if given[index].is_some() {
                    return Err(PyTypeError::new_err(format!(
                        "{}.__init__() got multiple values for argument '{}'",
                        self.class, names[index]
                    )));
                }
                given[index] = Some(value);
            }
        }
        let missing: Vec<&str> = names[..self.required]
            .iter()
            .zip(&given)
            .filter(|(_, g)| g.is_none())
            .map(|(name, _)| *name)
            .collect();
        if !missing.is_empty() {
            return Err(self.missing(&missing));
        }
        Ok(given)
    }

    /// The index of a keyword that is not one of the interned names (built at run time,
    /// or from `**mapping`), compared by text.
    fn by_text(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = key
            .cast::<PyString>()
            .ok()
            .and_then(|s| crate::utf8::text(s).map(str::to_owned));
        let Some(text) = text else {
            return Err(PyTypeError::new_err(format!(
                "{}.__init__() keywords must be strings",
                self.class
            )));
        };
        self.names
            .iter()
            .position(|name| *name == text)
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "{}.__init__() got an unexpected keyword argument '{text}'",
                    self.class
                ))
            })
    }

    /// Python's message for too many positional arguments (which counts `self`).
    fn too_many(&self, given: usize) -> PyErr {
        let total = self.names.len() + 1;
        let takes = if self.required + 1 == total {
            format!("{total}")
        } else {
            format!("from {} to {total}", self.required + 1)
        };
        PyTypeError::new_err(format!(
            "{}.__init__() takes {takes} positional arguments but {} were given",
            self.class,
            given + 1
        ))
    }

    /// Python's message for missing required arguments.
    fn missing(&self, names: &[&str]) -> PyErr {
        let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        let list = match quoted.as_slice() {
            [one] => one.clone(),
            [first, second] => format!("{first} and {second}"),
            [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
            [] => String::new(),
        };
        let plural = if names.len() == 1 { "" } else { "s" };
        PyTypeError::new_err(format!(
            "{}.__init__() missing {} required positional argument{plural}: {list}",
            self.class,
            names.len()
        ))
    }
}
