//! The two rejections the geometry checks of every module share: an invalid shape or box
//! (`content_shape_invalid`) and a byte size past 2^64 − 1.

use weight_manifest::error::{Code, Error};

/// `content_shape_invalid` with `message`.
pub(crate) fn shape_error(message: impl Into<String>) -> Error {
    Error::new(Code::ContentShapeInvalid, message)
}

/// `content_shape_invalid` for an arithmetic overflow in `what`.
pub(crate) fn overflow(what: &str) -> Error {
    shape_error(format!("{what} must fit in an unsigned 64-bit integer"))
}
