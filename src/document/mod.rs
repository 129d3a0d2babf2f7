//! The reading pipeline: one path from bytes to a validated value for every document kind,
//! this crate's and those of the crates built on it (the content manifest, Mooncake's
//! formats).
//!
//! [`read`] checks the document's size, then that it is UTF-8, once each; offers the text
//! to the kind's one-pass reader ([`Document::fast`]), which only ever says "valid"
//! (anything it does not read, and every rejection, it leaves to the general path); and
//! otherwise reads the document tree ([`crate::reader`], contract §4) and runs the kind's
//! general rules ([`Document::from_tree`]), which name every rejection with its code,
//! message and pointer. The limits, the geometry budget of the box searches among them,
//! come with the [`Options`] as an argument all the way down.
//!
//! The shape checks every strict reader starts with (the top level is an object, an object
//! has exactly its schema's keys, and which document kind the keys are when they are
//! another's) are [`top_object`], [`manifest_top`] and [`exact`].
//!
//! ```
//! use weight_manifest::document::{self, Document};
//! use weight_manifest::value::Value;
//! use weight_manifest::{Options, Result};
//!
//! /// A document kind of one's own: an object with exactly the key "name".
//! struct Named;
//!
//! impl Document for Named {
//!     type Output = String;
//!     const LABEL: &'static str = "named document";
//!
//!     fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<String> {
//!         let top = document::manifest_top(tree, Self::LABEL, &["name"])?;
//!         Ok(weight_manifest::rules::values::string(
//!             document::member(top, "name"),
//!             "name",
//!             &weight_manifest::Path::Root.key("name"),
//!         )?
//!         .to_owned())
//!     }
//! }
//!
//! let options = Options::default();
//! assert_eq!(document::read::<Named>(br#"{"name":"x"}"#, &options)?, "x");
//! let error = document::read::<Named>(b"{\"name\":\xff}", &options).unwrap_err();
//! assert_eq!(error.message(), "named document is not valid JSON");
//! let error = document::read::<Named>(br#"{"nom":"x"}"#, &options).unwrap_err();
//! assert_eq!(error.code().as_str(), "fields_mismatch");
//! # Ok::<(), weight_manifest::Error>(())
//! ```

pub(crate) mod kind;
mod shape;
mod typed;

pub use kind::document_kind;
pub use shape::{exact, manifest_top, member, top_object};
pub(crate) use typed::check_id;
pub use typed::{typed_from_text, typed_from_tree};

use crate::error::Result;
use crate::options::Options;
use crate::reader;
use crate::value::Value;

/// One kind of document read from text: its label and its two readers. Implemented by a
/// marker type per kind (this crate's are private; a crate built on this one implements
/// it for its own kinds and reads them with [`read`]).
pub trait Document {
    /// What a document of this kind reads into.
    type Output;

    /// The kind's name in the reader's messages ("placement manifest is not valid JSON").
    const LABEL: &'static str;

    /// The one-pass reader: the value when every rule holds for `text` (already checked to
    /// be UTF-8 and within `options.limits.max_document_bytes`), `None` for anything else,
    /// so the general path decides. It never rejects; its result is always the general
    /// path's. The default reads nothing.
    fn fast(text: &str, options: &Options<'_>) -> Option<Self::Output> {
        let _ = (text, options);
        None
    }

    /// The general path: the kind's rules on a document tree, in the contract's order,
    /// naming every rejection. The tree's reader limits were applied when it was read;
    /// the count, dimension and geometry limits of `options.limits` apply here.
    ///
    /// # Errors
    ///
    /// The kind's rejections.
    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Self::Output>;

    /// The general path with the text at hand, as [`read`] runs it: `tree` is `text` as
    /// the strict reader read it, and the kind may consume it (to free it before its rules
    /// build a large value) or read the text itself (a kind read by serde once the strict
    /// reader has accepted the text, [`typed_from_text`]). The default is
    /// [`Document::from_tree`].
    ///
    /// # Errors
    ///
    /// As [`Document::from_tree`].
    fn from_text(text: &str, tree: Value<'_>, options: &Options<'_>) -> Result<Self::Output> {
        let _ = text;
        Self::from_tree(&tree, options)
    }
}

/// Reads a document of kind `D` from `text` under `options`: the size, then UTF-8, checked
/// once; the one-pass reader when it accepts; else the strict reader (§4) and the kind's
/// general rules.
///
/// # Errors
///
/// `limit_exceeded` for a document over `max_document_bytes` (pointer `""`), the reader's
/// errors (`invalid_json`, `non_finite_number`, `duplicate_key`, `limit_exceeded`), then the
/// kind's rejections.
pub fn read<D: Document + ?Sized>(text: &[u8], options: &Options<'_>) -> Result<D::Output> {
    options.limits.check_document_bytes(text.len())?;
    let text = reader::utf8(text, D::LABEL)?;
    if let Some(value) = D::fast(text, options) {
        return Ok(value);
    }
    let tree = reader::parse(text, D::LABEL, &options.limits)?;
    D::from_text(text, tree, options)
}
