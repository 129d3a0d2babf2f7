//! The placement inventory reader (contract §10.5).

use super::descriptor::{read_descriptor, DescriptorSet};
use super::member_reader::Members;
use super::member_reader::{read_aliases, read_rank};
use crate::document::top_object;
use crate::document::{self, Document};
use crate::error::Result;
use crate::locate::INVENTORY;
use crate::model::placement::PlacementHeader;
use crate::model::{construct_placement, Placement};
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::{check_placement_fragment, PlacementFragmentFields};
use crate::rules::values;
use crate::value::Value;
use crate::wire::key;

const LABEL: &str = super::labels::PLACEMENT_INVENTORY_LABEL;

/// Reads a placement inventory document into a validated [`Placement`]: `max_fragments`
/// on the records, `max_tensors` on their distinct tensor_ids and `max_dims` on each
/// record's global_shape.
pub(crate) fn placement_from_inventory(
    document: &Value<'_>,
    options: &Options<'_>,
) -> Result<Placement> {
    let limits = &options.limits;
    let root = Path::Root;
    top_object(document, LABEL)?;
    let top = Members::of(document, &root);

    let tensors_at = top.at(key::TENSORS);
    let records = values::seq(
        top.req(key::TENSORS)?,
        "placement inventory tensors",
        &tensors_at,
    )?;
    limits.check_fragments(records.len(), &tensors_at)?;
    let mut descriptors = DescriptorSet::default();
    let mut fragments = Vec::with_capacity(records.len());
    for (i, value) in records.iter().enumerate() {
        let at = tensors_at.index(i);
        let record = Members::of(value, &at);
        let descriptor = read_descriptor(&record, limits)?;
        let tensor_id = Value::Str(descriptor.tensor_id.clone().into());
        descriptors.merge(descriptor, "placement", &record, limits)?;

        let rank_value = record.req(key::RANK)?;
        let placement_fragment_id = record.req(key::PLACEMENT_FRAGMENT_ID)?;
        let global_offset = record.req(key::GLOBAL_OFFSET)?;
        let local_shape = record.req(key::LOCAL_SHAPE)?;
        let nbytes = record.req(key::NBYTES)?;
        let rank_at = record.at(key::RANK);
        let rank = read_rank(&Members::of(rank_value, &rank_at))?;
        let aliases = read_aliases(&record)?;
        let fields = PlacementFragmentFields {
            placement_fragment_id,
            tensor_id: &tensor_id,
            global_offset,
            local_shape,
            nbytes,
            rank: Some(rank),
            aliases,
        };
        fragments.push(check_placement_fragment(&fields, &at)?);
    }

    construct_placement(
        &root,
        &INVENTORY,
        &PlacementHeader {
            model_id: top.req(key::MODEL_ID)?,
            revision: top.req(key::REVISION)?,
            placement_id: top.opt(key::PLACEMENT_ID),
        },
        descriptors.into_sorted(),
        fragments,
        limits.max_geometry_work,
    )
}

/// The placement inventory (§10.5) as a document kind of the reading pipeline.
pub(crate) struct PlacementInventoryDocument;

impl Document for PlacementInventoryDocument {
    type Output = Placement;
    const LABEL: &'static str = LABEL;

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        placement_from_inventory(document, options)
    }
}

impl Placement {
    /// Reads a placement inventory JSON document (§10.5) under `options.limits` (the
    /// placement inventory has no other option); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Placement> {
        document::read::<PlacementInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a placement inventory already read into a [`Value`], under `options.limits`.
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        PlacementInventoryDocument::from_tree(document, options)
    }
}
