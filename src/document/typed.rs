//! The documents read straight into their wire type (a reshard plan, a bound plan, a
//! coverage report, a content manifest): the contract's JSON rules (§4) first, by the
//! strict reader, then the schema's members and types by serde, each failure under the
//! kind's one code; and a derived document's id against its contents.

use serde::de::DeserializeOwned;

use crate::canonical;
use crate::error::{Code, Error, Result};
use crate::value::Value;

/// The document as `T`, read from its `text` once the strict reader has read it into
/// `tree`: `invalid` when it is not an object of exactly `T`'s members and types (the
/// message names the document by `label`, e.g. "reshard plan"). For
/// [`Document::from_text`](super::Document::from_text).
///
/// # Errors
///
/// `invalid`.
pub fn typed_from_text<T: DeserializeOwned>(
    text: &str,
    tree: &Value<'_>,
    label: &str,
    invalid: Code,
) -> Result<T> {
    if tree.as_object().is_none() {
        return Err(not_an_object(label, invalid));
    }
    // The strict reader accepted the text, so serde sees valid, duplicate-free JSON.
    serde_json::from_str(text).map_err(|e| Error::new(invalid, format!("not a {label}: {e}")))
}

/// The document as `T` from a tree alone (one a binding built): its canonical text read
/// as [`typed_from_text`] reads a text. For [`Document::from_tree`](super::Document::from_tree).
///
/// # Errors
///
/// `invalid`.
pub fn typed_from_tree<T: DeserializeOwned>(
    tree: &Value<'_>,
    label: &str,
    invalid: Code,
) -> Result<T> {
    if tree.as_object().is_none() {
        return Err(not_an_object(label, invalid));
    }
    let mut text = Vec::new();
    canonical::encode_value(tree, &mut text)
        .map_err(|e| Error::new(invalid, format!("not a {label}: {e}")))?;
    serde_json::from_slice(&text).map_err(|e| Error::new(invalid, format!("not a {label}: {e}")))
}

fn not_an_object(label: &str, invalid: Code) -> Error {
    Error::new(invalid, format!("a {label} must be a JSON object"))
}

/// A derived document's id against the id of its contents: `code` with "the {label}'s
/// {member} is {given}, its contents give {computed}" when they differ.
pub(crate) fn check_id(
    label: &str,
    member: &str,
    given: &str,
    computed: &str,
    code: Code,
) -> Result<()> {
    if given == computed {
        return Ok(());
    }
    Err(Error::new(
        code,
        format!("the {label}'s {member} is {given}, its contents give {computed}"),
    ))
}
