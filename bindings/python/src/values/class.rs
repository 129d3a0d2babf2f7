//! What makes a value class: the `value_class!` macro (struct, getters, constructor,
//! dataclass behaviour) and the garbage-collector untracking of acyclic instances.

use pyo3::prelude::*;

/// The number of items given.
macro_rules! count {
    () => { 0usize };
    ($head:ident $($tail:ident)*) => { 1usize + $crate::values::class::count!($($tail)*) };
}
pub(crate) use count;

/// A value class: the struct with its fields in the dataclass's order and its checked
/// value, the getters, the constructor `new` (a function of the call's `args` and
/// `kwargs`) and the dataclass behaviour of `dataclass`. `traverse` names the fields
/// that may hold an arbitrary object, shown to the garbage collector.
macro_rules! value_class {
    (
        $(#[$doc:meta])*
        $class:ident = $name:literal, checked: $checked:ty, new: $new:path, rank: $rank:ty,
        fields: [$($field:ident),+ $(,)?]
        $(, traverse: [$($held:ident),+])? $(,)?
    ) => {
        $(#[$doc])*
        #[pyo3::pyclass(frozen, subclass, weakref, module = "weight_manifest._types", name = $name)]
        pub(crate) struct $class {
            fields: [pyo3::Py<pyo3::PyAny>; $crate::values::class::count!($($field)+)],
            /// The core's checked value of the fields.
            pub(crate) checked: $checked,
        }

        impl $class {
            /// The class's Python name.
            pub(crate) const NAME: &'static str = $name;

            /// The fields in the dataclass's order.
            pub(crate) const FIELDS: [&'static str; $crate::values::class::count!($($field)+)] =
                [$(stringify!($field)),+];

            /// An instance holding `fields` and their checked value, taken out of the
            /// garbage collector when it can be.
            fn instance(
                py: pyo3::Python<'_>,
                fields: [pyo3::Py<pyo3::PyAny>; $crate::values::class::count!($($field)+)],
                checked: $checked,
            ) -> pyo3::PyResult<pyo3::Bound<'_, Self>> {
                let made = pyo3::Bound::new(py, Self { fields, checked })?;
                $crate::values::class::untrack_if_acyclic::<Self, $rank>(&made, &made.get().fields, &Self::FIELDS);
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
                $crate::values::class::untrack_if_acyclic::<Self, $rank>(slf, &slf.get().fields, &Self::FIELDS);
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
/// plain values, and a rank or owner that is None or a `Rank` itself (the ParallelRank
/// class, which each class names in its `value_class!`). A collector
/// that tracks them rescans every one of a model's 10^5 fragments again and again while
/// they are made (and with them the caller's heap, often the document they come from);
/// reference counting still frees them.
#[allow(unsafe_code)]
pub(crate) fn untrack_if_acyclic<T: pyo3::PyTypeInfo, Rank: pyo3::PyTypeInfo>(
    object: &Bound<'_, T>,
    fields: &[Py<PyAny>],
    names: &[&'static str],
) {
    let py = object.py();
    let rank = py.get_type::<Rank>();
    let acyclic = names.iter().zip(fields).all(|(name, field)| {
        let field = field.bind(py);
        !super::fields::OBJECTS.contains(name) || field.is_none() || field.get_type().is(&rank)
    });
    if object.as_any().get_type().is(py.get_type::<T>()) && acyclic {
        // SAFETY: the GIL is held and the object is alive and fully built; untracking a
        // GC object (or one already untracked) only removes it from the collector's lists.
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(object.as_ptr().cast()) };
    }
}
