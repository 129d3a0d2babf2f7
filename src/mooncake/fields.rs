//! The value checks of Mooncake's strict reader, in its words: a JSON object with an
//! exact key set, a sequence, a non-empty string, an integer with a minimum.
//!
//! They raise this project's codes for the same rules (`not_an_object`, `fields_mismatch`,
//! `not_a_sequence`, `empty_string`, `not_an_integer`, `below_minimum`, `u64_overflow`),
//! located at the offending value.

use crate::check;
use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::value::{Object, Value};

/// The value as an object, else `not_an_object` naming `label`.
pub(crate) fn object<'v, 'a>(
    value: &'v Value<'a>,
    label: &str,
    path: &Path<'_>,
) -> Result<&'v Object<'a>> {
    value.as_object().ok_or_else(|| {
        Error::at(
            Code::NotAnObject,
            format!("{label} must be a JSON object"),
            path,
        )
    })
}

/// An object whose keys are exactly `keys`.
pub(crate) fn exact<'v, 'a>(
    value: &'v Value<'a>,
    keys: &[&str],
    label: &str,
    path: &Path<'_>,
) -> Result<&'v Object<'a>> {
    let obj = object(value, label, path)?;
    if obj.has_exact_keys(keys) {
        Ok(obj)
    } else {
        Err(fields_mismatch(label, path))
    }
}

/// `fields_mismatch` naming `label`.
pub(crate) fn fields_mismatch(label: &str, path: &Path<'_>) -> Error {
    Error::at(
        Code::FieldsMismatch,
        format!("{label} schema fields do not match contract"),
        path,
    )
}

/// Member `key` of an object whose key set was checked.
pub(crate) fn member<'v, 'a>(obj: &'v Object<'a>, key: &str) -> &'v Value<'a> {
    const NULL: Value<'static> = Value::Null;
    obj.get(key).unwrap_or(&NULL)
}

/// A sequence, else `not_a_sequence` naming `label`.
pub(crate) fn seq<'v, 'a>(
    value: &'v Value<'a>,
    label: &str,
    path: &Path<'_>,
) -> Result<&'v [Value<'a>]> {
    check::seq(value, label, path)
}

/// A non-empty string.
pub(crate) fn string(value: &Value<'_>, label: &str, path: &Path<'_>) -> Result<String> {
    check::string(value, label, path).map(str::to_owned)
}

/// An integer of at least `min` (held as u64: a larger one is `u64_overflow`).
pub(crate) fn int(value: &Value<'_>, label: &str, min: u64, path: &Path<'_>) -> Result<u64> {
    check::int(value, label, min, path)
}

/// `null` or an integer of at least `min`.
pub(crate) fn opt_int(
    value: &Value<'_>,
    label: &str,
    min: u64,
    path: &Path<'_>,
) -> Result<Option<u64>> {
    match value {
        Value::Null => Ok(None),
        v => int(v, label, min, path).map(Some),
    }
}

/// A sequence of integers of at least `min`, each located at itself.
pub(crate) fn ints(value: &Value<'_>, label: &str, min: u64, path: &Path<'_>) -> Result<Vec<u64>> {
    let items = seq(value, label, path)?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| int(v, label, min, &path.index(i)))
        .collect()
}
