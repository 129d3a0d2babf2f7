//! What a constructor stores: each field as given when it is already in its normal form
//! (an exact `str`, `int` or `None`, or an exact tuple of exact `str`s and `int`s), else
//! as the core normalised it (plain `int`s, tuples, sorted aliases); a field not given
//! takes its default, which the core's checked value holds too. Building 10^5 fragments
//! from normal arguments therefore allocates no Python object beyond the instances.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};
use weight_manifest::wire::key;
use weight_manifest::{Object, Value};

use crate::convert::value;

/// Fields kept as given whatever they are: a fragment's rank (an object, checked apart)
/// and owner (never checked).
pub(crate) const OBJECTS: [&str; 2] = [key::RANK, super::dataclass::OWNER];

/// Whether `object` is stored as given.
fn normal(object: &Bound<'_, PyAny>) -> bool {
    let scalar = |o: &Bound<'_, PyAny>| {
        o.is_exact_instance_of::<PyString>() || o.is_exact_instance_of::<PyInt>()
    };
    object.is_none()
        || scalar(object)
        || object
            .cast_exact::<PyTuple>()
            .is_ok_and(|t| t.iter().all(|item| scalar(&item)))
}

/// The given arguments as the core's keyword object, but the members of `OBJECTS`.
pub(crate) fn arguments<'a>(
    names: &[&'static str],
    given: &'a [Option<Bound<'_, PyAny>>],
) -> PyResult<Object<'a>> {
    let members = names
        .iter()
        .zip(given)
        .filter(|(name, _)| !OBJECTS.contains(name))
        .filter_map(|(name, object)| object.as_ref().map(|o| (*name, o)))
        .map(|(name, object)| Ok((Cow::Borrowed(name), argument(object)?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Object::from_members(members))
}

/// The document value of an argument: exact `str`s (borrowed, not copied), `int`s in
/// u64 and tuples of them directly, anything else through the general conversion
/// (`convert::value`), which decides the same for these.
fn argument<'a>(object: &'a Bound<'_, PyAny>) -> PyResult<Value<'a>> {
    if let Some(scalar) = scalar(object) {
        return Ok(scalar);
    }
    if let Ok(tuple) = object.cast_exact::<PyTuple>() {
        let mut items = Vec::with_capacity(tuple.len());
        for item in tuple.iter() {
            match scalar(&item) {
                // An item's text outlives this call only through the tuple, which the
                // caller holds; copy it (ids in tuples are aliases, a few per fragment).
                Some(Value::Str(text)) => items.push(Value::Str(Cow::Owned(text.into_owned()))),
                Some(Value::UInt(n)) => items.push(Value::UInt(n)),
                _ => return value(object),
            }
        }
        return Ok(Value::Array(items));
    }
    value(object)
}

/// An exact `str` (borrowed) or an exact `int` within u64.
fn scalar<'a>(object: &'a Bound<'_, PyAny>) -> Option<Value<'a>> {
    if let Ok(string) = object.cast_exact::<PyString>() {
        return crate::utf8::text(string).map(|text| Value::Str(Cow::Borrowed(text)));
    }
    if object.is_exact_instance_of::<PyInt>() {
        return object.extract::<u64>().ok().map(Value::UInt);
    }
    None
}

/// The fields to store: each given one as given when it is normal (or one of `OBJECTS`)
/// and `keep` agrees; the rest from `made` (the core's normal form and defaults), built
/// only when some field needs it.
pub(crate) fn stored<const N: usize>(
    py: Python<'_>,
    names: &[&'static str; N],
    given: &[Option<Bound<'_, PyAny>>; N],
    keep: impl Fn(&str, &Bound<'_, PyAny>) -> bool,
    made: impl FnOnce() -> PyResult<[Py<PyAny>; N]>,
) -> PyResult<[Py<PyAny>; N]> {
    let kept: [Option<&Bound<'_, PyAny>>; N] = std::array::from_fn(|i| {
        given[i]
            .as_ref()
            .filter(|o| (OBJECTS.contains(&names[i]) || normal(o)) && keep(names[i], o))
    });
    // Every field kept needs no normal form: placeholders, each overwritten below.
    let mut fields = if kept.iter().all(Option::is_some) {
        std::array::from_fn(|_| py.None())
    } else {
        made()?
    };
    for (field, kept) in fields.iter_mut().zip(kept) {
        if let Some(object) = kept {
            *field = object.clone().unbind();
        }
    }
    Ok(fields)
}
