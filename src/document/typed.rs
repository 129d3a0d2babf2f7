//! Reading a document straight into its wire type, for the documents this implementation
//! derives (a reshard plan, a bound plan, a coverage report): the contract's JSON rules
//! (§4) first, then the schema's members and types, each failure under one code.

use serde::de::DeserializeOwned;

use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::reader;

/// Reads `text` (a document labelled `label`, e.g. "reshard plan") under `limits`: the
/// reader's errors as they are, then `invalid` when the document is not an object of
/// exactly `T`'s members and types.
pub(crate) fn read_typed<T: DeserializeOwned>(
    text: &[u8],
    label: &str,
    limits: &Limits,
    invalid: Code,
) -> Result<T> {
    let document = reader::read(text, label, limits)?;
    if document.as_object().is_none() {
        return Err(Error::new(
            invalid,
            format!("a {label} must be a JSON object"),
        ));
    }
    // The strict reader accepted the text, so serde sees valid, duplicate-free JSON.
    serde_json::from_slice(text).map_err(|e| Error::new(invalid, format!("not a {label}: {e}")))
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
