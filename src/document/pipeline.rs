//! The pipeline itself: the [`Document`] trait a kind implements and [`read`].

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
    /// reader has accepted the text, [`Typed`](super::Typed)). The default is
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
