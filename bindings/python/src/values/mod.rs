//! The five value types of the contract (§2.1–§2.5) as native classes.
//!
//! Each instance holds its fields (the Python objects its getters return) and the core's
//! checked wire value of them, made once by the constructor: a manifest built from 10^5
//! fragments reads the checked values and no Python field. The instance is immutable for
//! real (no `__dict__`, no setter; `object.__setattr__` fails too), so the checked value
//! cannot go stale.
//!
//! They stay dataclasses for every purpose Python has: `weight_manifest._types` declares
//! each as a frozen dataclass (fields, types, defaults, docs) and its `_native_dataclass`
//! gives the native class that declaration's metadata (`__dataclass_fields__`,
//! `__annotations__`, `__match_args__`, ...) after checking the field lists agree, so
//! `dataclasses.fields`, `replace`, `asdict`, typing and pattern matching see a dataclass;
//! the class itself gives `__eq__`, `__hash__`, `__repr__`, the frozen `__setattr__` and
//! pickling the dataclass semantics (`dataclass`).
//!
//! An instance that can be in no reference cycle (plain fields; a rank or owner that is
//! None or a ParallelRank itself) is taken out of the cyclic garbage collector once made;
//! the fields that may hold an arbitrary object (a fragment's rank and owner) are shown
//! to the collector (`__traverse__`) for the others.

mod args;
mod dataclass;
mod descriptor;
mod fields;
mod fragments;
mod rank;

pub(crate) use descriptor::TensorDescriptor;
pub(crate) use fragments::{PlacementFragment, RuntimeBindingFragment, RuntimeFragment};
pub(crate) use rank::ParallelRank;

use pyo3::prelude::*;

/// The number of items given.
macro_rules! count {
    () => { 0usize };
    ($head:ident $($tail:ident)*) => { 1usize + $crate::values::count!($($tail)*) };
}
pub(crate) use count;

/// A value class: the struct with its fields in the dataclass's order and its checked
/// value, the getters, the constructor `new` (a function of the call's `args` and
/// `kwargs`) and the dataclass behaviour of `dataclass`. `traverse` names the fields
/// that may hold an arbitrary object, shown to the garbage collector.
macro_rules! value_class {
    (
        $(#[$doc:meta])*
        $class:ident = $name:literal, checked: $checked:ty, new: $new:path,
        fields: [$($field:ident),+ $(,)?]
        $(, traverse: [$($held:ident),+])? $(,)?
    ) => {
        $(#[$doc])*
        #[pyo3::pyclass(frozen, subclass, weakref, module = "weight_manifest._types", name = $name)]
        pub(crate) struct $class {
            fields: [pyo3::Py<pyo3::PyAny>; $crate::values::count!($($field)+)],
            /// The core's checked value of the fields.
            pub(crate) checked: $checked,
        }

        impl $class {
            /// The class's Python name.
            pub(crate) const NAME: &'static str = $name;

            /// The fields in the dataclass's order.
            pub(crate) const FIELDS: [&'static str; $crate::values::count!($($field)+)] =
                [$(stringify!($field)),+];

            /// An instance holding `fields` and their checked value, taken out of the
            /// garbage collector when it can be.
            fn instance(
                py: pyo3::Python<'_>,
                fields: [pyo3::Py<pyo3::PyAny>; $crate::values::count!($($field)+)],
                checked: $checked,
            ) -> pyo3::PyResult<pyo3::Bound<'_, Self>> {
                let made = pyo3::Bound::new(py, Self { fields, checked })?;
                $crate::values::untrack_if_acyclic(&made, &made.get().fields, &Self::FIELDS);
                Ok(made)
            }
        }

        #[pyo3::pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (*args, **kwargs))]
            fn __new__(
                args: &pyo3::Bound<'_, pyo3::types::PyTuple>,
                kwargs: Option<&pyo3::Bound<'_, pyo3::types::PyDict>>,
            ) -> pyo3::PyResult<Self> {
                $new(args, kwargs)
            }

            /// Takes the new instance out of the cyclic garbage collector when nothing it
            /// holds can be in a reference cycle (`untrack_if_acyclic`); a constructor
            /// cannot, as the instance does not exist yet.
            #[pyo3(signature = (*_args, **_kwargs))]
            fn __init__(
                slf: &pyo3::Bound<'_, Self>,
                _args: &pyo3::Bound<'_, pyo3::types::PyTuple>,
                _kwargs: Option<&pyo3::Bound<'_, pyo3::types::PyDict>>,
            ) {
                $crate::values::untrack_if_acyclic(slf, &slf.get().fields, &Self::FIELDS);
            }

            $(
                #[getter]
                fn $field(&self, py: pyo3::Python<'_>) -> pyo3::Py<pyo3::PyAny> {
                    self.fields[const { weight_manifest::wire::field_index(&Self::FIELDS, stringify!($field)) }]
                        .clone_ref(py)
                }
            )+

            /// The field names, in order (checked against the dataclass declaration).
            #[classattr]
            fn _fields() -> Vec<&'static str> {
                Self::FIELDS.to_vec()
            }

            fn __eq__(
                slf: &pyo3::Bound<'_, Self>,
                other: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                let py = slf.py();
                // As the dataclass: only an instance of the very same class is comparable.
                if !other.get_type().is(&slf.get_type()) {
                    return Ok(py.NotImplemented());
                }
                let other = other.cast::<Self>()?;
                let equal = $crate::values::dataclass::eq(py, &slf.get().fields, &other.get().fields, &Self::FIELDS)?;
                Ok(pyo3::types::PyBool::new(py, equal).to_owned().into_any().unbind())
            }

            fn __hash__(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<isize> {
                $crate::values::dataclass::hash(slf.py(), &slf.get().fields, &Self::FIELDS)
            }

            fn __repr__(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<String> {
                $crate::values::dataclass::repr(slf.as_any(), &slf.get().fields, &Self::FIELDS)
            }

            fn __setattr__(
                slf: &pyo3::Bound<'_, Self>,
                name: &pyo3::Bound<'_, pyo3::types::PyString>,
                value: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<()> {
                let class = slf.py().get_type::<Self>();
                $crate::values::dataclass::set(slf.as_any(), &class, name, Some(value), &Self::FIELDS)
            }

            fn __delattr__(
                slf: &pyo3::Bound<'_, Self>,
                name: &pyo3::Bound<'_, pyo3::types::PyString>,
            ) -> pyo3::PyResult<()> {
                let class = slf.py().get_type::<Self>();
                $crate::values::dataclass::set(slf.as_any(), &class, name, None, &Self::FIELDS)
            }

            fn __reduce__<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyTuple>> {
                $crate::values::dataclass::reduce(slf.as_any(), &slf.get().fields)
            }

            $(
                fn __traverse__(
                    &self,
                    visit: pyo3::PyVisit<'_>,
                ) -> Result<(), pyo3::PyTraverseError> {
                    $(
                        visit.call(
                            &self.fields[const { weight_manifest::wire::field_index(&Self::FIELDS, stringify!($held)) }],
                        )?;
                    )+
                    Ok(())
                }
            )?
        }
    };
}
pub(crate) use value_class;

/// Takes an instance of the value class `T` itself (not of a subclass, which may hold anything)
/// out of the cyclic garbage collector when its fields can be in no reference cycle:
/// plain values, and a rank or owner that is None or a ParallelRank itself. A collector
/// that tracks them rescans every one of a model's 10^5 fragments again and again while
/// they are made (and with them the caller's heap, often the document they come from);
/// reference counting still frees them.
#[allow(unsafe_code)]
pub(crate) fn untrack_if_acyclic<T: pyo3::PyTypeInfo>(
    object: &Bound<'_, T>,
    fields: &[Py<PyAny>],
    names: &[&'static str],
) {
    let py = object.py();
    let rank = py.get_type::<ParallelRank>();
    let acyclic = names.iter().zip(fields).all(|(name, field)| {
        let field = field.bind(py);
        !fields::OBJECTS.contains(name) || field.is_none() || field.get_type().is(&rank)
    });
    if object.as_any().get_type().is(py.get_type::<T>()) && acyclic {
        // SAFETY: the GIL is held and the object is alive and fully built; untracking a
        // GC object (or one already untracked) only removes it from the collector's lists.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(object.as_ptr().cast()) };
    }
}

/// Registers the value classes and their helper functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ParallelRank>()?;
    m.add_class::<TensorDescriptor>()?;
    m.add_class::<PlacementFragment>()?;
    m.add_class::<RuntimeFragment>()?;
    m.add_class::<RuntimeBindingFragment>()?;
    m.add_function(wrap_pyfunction!(descriptor::effective_shard_dims, m)?)?;
    Ok(())
}
