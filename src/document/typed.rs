//! The documents read straight into their wire type (a reshard plan, a bound plan, a
//! coverage report, a content manifest): the contract's JSON rules (§4) first, by the
//! strict reader, then the schema's members and types by serde, each failure under the
//! kind's one code; and a derived document's id against its contents.

use serde::de::DeserializeOwned;

use super::pipeline::Document;
use crate::canonical;
use crate::error::{Code, Error, Result};
use crate::options::Options;
use crate::value::Value;

/// A document kind read straight into its wire type: the strict reader (§4), then serde
/// for the schema's members and types, then the kind's own checks ([`Typed::checked`]).
/// Every such kind is a [`Document`] (its general path reads the text once the strict
/// reader has accepted it; a tree a binding built is written canonically and read so).
pub trait Typed {
    /// What the document reads into.
    type Output;
    /// The wire type serde reads.
    type Wire: DeserializeOwned;
    /// The document's name in messages ("reshard plan").
    const LABEL: &'static str;
    /// The code of every rejection after the strict reader's.
    const INVALID: Code;

    /// The kind's checks on the wire value (an id against its contents, say).
    ///
    /// # Errors
    ///
    /// The kind's rejections.
    fn checked(wire: Self::Wire) -> Result<Self::Output>;

    /// The rejection of a document whose top level is not an object.
    fn not_an_object() -> Error {
        Error::new(
            Self::INVALID,
            format!("a {} must be a JSON object", Self::LABEL),
        )
    }
}

impl<T: Typed> Document for T {
    type Output = T::Output;
    const LABEL: &'static str = T::LABEL;

    fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<T::Output> {
        let mut text = Vec::new();
        canonical::encode_value(tree, &mut text).map_err(|e| not_a::<T>(&e))?;
        typed::<T>(&text, tree)
    }

    fn from_text(text: &str, tree: Value<'_>, _: &Options<'_>) -> Result<T::Output> {
        typed::<T>(text.as_bytes(), &tree)
    }
}

/// `text`, which the strict reader read into `tree`, as the kind's output.
fn typed<T: Typed>(text: &[u8], tree: &Value<'_>) -> Result<T::Output> {
    if tree.as_object().is_none() {
        return Err(T::not_an_object());
    }
    // The strict reader accepted the text, so serde sees valid, duplicate-free JSON.
    let wire = serde_json::from_slice(text).map_err(|e| not_a::<T>(&e))?;
    T::checked(wire)
}

/// The kind's rejection naming what serde (or the encoder) said.
fn not_a<T: Typed>(cause: &dyn std::fmt::Display) -> Error {
    Error::new(T::INVALID, format!("not a {}: {cause}", T::LABEL))
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
