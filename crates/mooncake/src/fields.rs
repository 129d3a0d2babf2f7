//! The value checks of Mooncake's strict reader, in its words: a JSON object with an
//! exact key set, a sequence, a non-empty string, an integer with a minimum.
//!
//! They raise this project's codes for the same rules (`not_an_object`, `fields_mismatch`,
//! `not_a_sequence`, `empty_string`, `not_an_integer`, `below_minimum`, `u64_overflow`),
//! located at the offending value. An object whose keys differ from the schema's names
//! the keys missing and unexpected (and, for a whole document, the kind of document its
//! keys are instead: the core's [`weight_manifest::document::exact`]). [`Members`] reads
//! the members of a checked object, and [`Members::boxed`] the box every fragment has.

use std::borrow::Cow;

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;
use weight_manifest::rules::values;
use weight_manifest::value::{Object, Value};

use crate::aliases::read_aliases;
use crate::wire::key;

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

/// An object whose keys are exactly `keys`, else `fields_mismatch` with the keys missing
/// and unexpected.
pub(crate) fn exact<'v, 'a>(
    value: &'v Value<'a>,
    keys: &[&str],
    label: &str,
    path: &Path<'_>,
) -> Result<&'v Object<'a>> {
    object(value, label, path)?;
    weight_manifest::document::exact(value, keys, &|| label.to_owned(), path)
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
    values::seq(value, label, path)
}

/// A non-empty string.
pub(crate) fn string(value: &Value<'_>, label: &str, path: &Path<'_>) -> Result<String> {
    values::string(value, label, path).map(str::to_owned)
}

/// An integer of at least `min` (held as u64: a larger one is `u64_overflow`).
pub(crate) fn int(value: &Value<'_>, label: &str, min: u64, path: &Path<'_>) -> Result<u64> {
    values::int(value, label, min, path)
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

/// The members of an object whose key set was checked, at `path`; a member's label in a
/// message is its key after `prefix` ("stored fragment " for a Store manifest's fragment,
/// nothing for a placement's).
pub(crate) struct Members<'v, 'a, 'p> {
    object: &'v Object<'a>,
    prefix: &'static str,
    path: &'p Path<'p>,
}

/// The box every fragment has, read in upstream's order.
pub(crate) struct Boxed {
    pub(crate) tensor_id: String,
    pub(crate) global_offset: Vec<u64>,
    pub(crate) local_shape: Vec<u64>,
}

impl<'v, 'a, 'p> Members<'v, 'a, 'p> {
    /// The members of `object` at `path`, labelled with `prefix`.
    pub(crate) fn new(object: &'v Object<'a>, prefix: &'static str, path: &'p Path<'p>) -> Self {
        Members {
            object,
            prefix,
            path,
        }
    }

    fn label(&self, key: &'static str) -> Cow<'static, str> {
        if self.prefix.is_empty() {
            Cow::Borrowed(key)
        } else {
            Cow::Owned(format!("{}{key}", self.prefix))
        }
    }

    /// Member `key`.
    pub(crate) fn get(&self, key: &str) -> &'v Value<'a> {
        member(self.object, key)
    }

    /// Member `key`: a non-empty string.
    pub(crate) fn string(&self, key: &'static str) -> Result<String> {
        string(self.get(key), &self.label(key), &self.path.key(key))
    }

    /// Member `key`: an integer of at least `min`.
    pub(crate) fn int(&self, key: &'static str, min: u64) -> Result<u64> {
        int(self.get(key), &self.label(key), min, &self.path.key(key))
    }

    /// Member `key`: `null` or an integer of at least `min`.
    pub(crate) fn opt_int(&self, key: &'static str, min: u64) -> Result<Option<u64>> {
        opt_int(self.get(key), &self.label(key), min, &self.path.key(key))
    }

    /// Member `key`: integers of at least `min`.
    pub(crate) fn ints(&self, key: &'static str, min: u64) -> Result<Vec<u64>> {
        ints(self.get(key), &self.label(key), min, &self.path.key(key))
    }

    /// The box: tensor_id, then global_offset (offsets of at least 0), then local_shape
    /// (extents of at least 1).
    pub(crate) fn boxed(&self) -> Result<Boxed> {
        Ok(Boxed {
            tensor_id: self.string(key::TENSOR_ID)?,
            global_offset: self.ints(key::GLOBAL_OFFSET, 0)?,
            local_shape: self.ints(key::LOCAL_SHAPE, 1)?,
        })
    }

    /// Member `aliases` of a fragment of `tensor_id`, held to the alias rules; `what`
    /// names an element in the message ("alias", "stored fragment alias").
    pub(crate) fn aliases(&self, what: &str, tensor_id: &str) -> Result<Vec<String>> {
        let at = self.path.key(key::ALIASES);
        let items = seq(self.get(key::ALIASES), &self.label(key::ALIASES), &at)?;
        read_aliases(items, what, tensor_id, &at)
    }
}
