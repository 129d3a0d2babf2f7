//! Strict parse of placement manifest JSON (contract §6.2).

use super::members::{
    exact, fragment_rank, fragments, member, tensors, top_object, PLACEMENT_FRAGMENT_KEYS,
    PLACEMENT_KEYS,
};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::construct_placement;
use crate::model::fragment::{check_placement_fragment, PlacementFragmentFields};
use crate::model::Placement;
use crate::path::Path;
use crate::reader;
use crate::value::Value;

const LABEL: &str = "placement manifest";

/// Reads and parses a placement manifest document: the fast path when it applies, else
/// the document tree.
pub(crate) fn placement(text: &[u8], limits: &Limits) -> Result<Placement> {
    limits.check_document_bytes(text.len())?;
    if let Some(result) = super::fast::placement(text, limits) {
        return result;
    }
    placement_from_value(&reader::read_with_limits(text, LABEL, limits)?, limits)
}

/// §6.2 steps 1–5 on a read document.
pub(crate) fn placement_from_value(document: &Value<'_>, limits: &Limits) -> Result<Placement> {
    let root = Path::Root;
    let object = top_object(document, LABEL)?;
    let top = exact(document, &PLACEMENT_KEYS, &|| LABEL.to_owned(), &root)?;

    let tensors = tensors(top, "placement", &root, limits)?;

    let fragments = fragments(
        top,
        "placement",
        &PLACEMENT_FRAGMENT_KEYS,
        limits,
        |element, at, i| {
            let fields = PlacementFragmentFields {
                placement_fragment_id: member(element, "placement_fragment_id"),
                tensor_id: member(element, "tensor_id"),
                global_offset: member(element, "global_offset"),
                local_shape: member(element, "local_shape"),
                nbytes: member(element, "nbytes"),
                rank: Some(fragment_rank(element, "placement", at, i)?),
                aliases: Some(member(element, "aliases")),
            };
            check_placement_fragment(&fields, at)
        },
    )?;

    construct_placement(
        &root,
        member(object, "model_id"),
        member(object, "revision"),
        Some(member(object, "placement_id")),
        tensors,
        fragments,
    )
}
