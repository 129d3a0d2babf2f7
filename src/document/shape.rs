//! The shape checks every strict reader starts with: the top level is an object
//! (§4.6, `not_an_object`), an object has exactly its schema's keys (`fields_mismatch`,
//! with the keys missing and unexpected and, for a whole document, the kind of document its
//! keys are instead), and a checked object's members.

use crate::error::{Code, Detail, Error, Result};
use crate::path::Path;
use crate::value::{Object, Value};

static NULL: Value<'static> = Value::Null;

/// Member `key` of an object whose key set was checked (absent cannot happen; `null`
/// would be returned).
pub fn member<'v, 'a>(object: &'v Object<'a>, key: &str) -> &'v Value<'a> {
    object.get(key).unwrap_or(&NULL)
}

/// The top level of a document: an object, else `not_an_object`.
pub fn top_object<'v, 'a>(document: &'v Value<'a>, label: &str) -> Result<&'v Object<'a>> {
    document.as_object().ok_or_else(|| {
        Error::at(
            Code::NotAnObject,
            format!("{label} must be a JSON object"),
            &Path::Root,
        )
    })
}

/// The top level of a manifest: an object (else `not_an_object`) with exactly `keys`
/// (else `fields_mismatch`).
pub fn manifest_top<'v, 'a>(
    document: &'v Value<'a>,
    label: &str,
    keys: &[&str],
) -> Result<&'v Object<'a>> {
    top_object(document, label)?;
    exact(document, keys, &|| label.to_owned(), &Path::Root)
}

/// An object with exactly `keys`, else `fields_mismatch` with "{label} schema fields do
/// not match contract", located at `path`.
pub fn exact<'v, 'a>(
    value: &'v Value<'a>,
    keys: &[&str],
    label: &dyn Fn() -> String,
    path: &Path<'_>,
) -> Result<&'v Object<'a>> {
    let error = || {
        Error::at(
            Code::FieldsMismatch,
            format!("{} schema fields do not match contract", label()),
            path,
        )
    };
    match value.as_object() {
        Some(object) if object.has_exact_keys(keys) => Ok(object),
        Some(object) => Err(error().with_detail(key_difference(object, keys, path))),
        None => Err(error()),
    }
}

/// How `object`'s keys differ from `keys`; at the document root, also the document kind
/// they are instead.
fn key_difference(object: &Object<'_>, keys: &[&str], path: &Path<'_>) -> Detail {
    let mut missing: Vec<String> = keys
        .iter()
        .filter(|key| object.get(key).is_none())
        .map(|key| (*key).to_owned())
        .collect();
    let mut unexpected: Vec<String> = object
        .iter()
        .map(|(key, _)| key)
        .filter(|key| !keys.contains(key))
        .map(str::to_owned)
        .collect();
    missing.sort();
    unexpected.sort();
    let root = matches!(path, Path::Root);
    Detail::FieldsMismatch {
        missing,
        unexpected,
        looks_like: root
            .then(|| super::kind::document_kind(object, keys))
            .flatten(),
    }
}
