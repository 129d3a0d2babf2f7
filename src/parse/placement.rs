//! Strict parse of placement manifest JSON (contract §6.2).

use super::members::{
    exact, member, rank, tensors, top_object, PLACEMENT_FRAGMENT_KEYS, PLACEMENT_KEYS, RANK_KEYS,
};
use crate::check;
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

    let fragments_at = root.key("fragments");
    let items = check::seq(
        member(top, "fragments"),
        "placement fragments",
        &fragments_at,
    )?;
    limits.check_fragments(items.len(), &fragments_at)?;
    let mut fragments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = fragments_at.index(i);
        let element = exact(
            item,
            &PLACEMENT_FRAGMENT_KEYS,
            &|| format!("placement fragment {i}"),
            &at,
        )?;
        let rank_at = at.key("rank");
        let rank_object = exact(
            member(element, "rank"),
            &RANK_KEYS,
            &|| format!("placement rank {i}"),
            &rank_at,
        )?;
        let fields = PlacementFragmentFields {
            placement_fragment_id: member(element, "placement_fragment_id"),
            tensor_id: member(element, "tensor_id"),
            global_offset: member(element, "global_offset"),
            local_shape: member(element, "local_shape"),
            nbytes: member(element, "nbytes"),
            rank: Some(rank(rank_object, &rank_at)?),
            aliases: Some(member(element, "aliases")),
        };
        fragments.push(check_placement_fragment(&fields, &at)?);
    }

    construct_placement(
        &root,
        member(object, "model_id"),
        member(object, "revision"),
        Some(member(object, "placement_id")),
        tensors,
        fragments,
    )
}
