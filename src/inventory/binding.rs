//! The binding inventory reader (contract §10.4).

use super::labels::offsets_require_view;
use super::member_reader::Members;
use crate::document::top_object;
use crate::document::{self, Document};
use crate::error::{Code, Error, Result};
use crate::locate::MANIFEST;
use crate::model::binding::BindingHeader;
use crate::model::{construct_binding, Binding};
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::SiteFields;
use crate::rules::fragment::{check_binding_fragment, BindingFragmentFields};
use crate::rules::values;
use crate::value::Value;
use crate::wire::key;

const LABEL: &str = super::labels::BINDING_INVENTORY_LABEL;

/// Reads a binding inventory document into a validated [`Binding`]: `max_fragments` on
/// the records.
pub(crate) fn binding_from_inventory(
    document: &Value<'_>,
    options: &Options<'_>,
) -> Result<Binding> {
    let root = Path::Root;
    top_object(document, LABEL)?;
    let view = options.address_semantics.is_view();
    let limits = &options.limits;
    let top = Members::of(document, &root);

    let generation_value = top.req(key::GENERATION)?;
    let generation = values::int(
        generation_value,
        key::GENERATION,
        0,
        &top.at(key::GENERATION),
    )?;
    let header = BindingHeader {
        model_id: top.req(key::MODEL_ID)?,
        revision: top.req(key::REVISION)?,
        placement_id: top.req(key::PLACEMENT_ID)?,
        placement_digest: top.req(key::PLACEMENT_DIGEST)?,
        instance_id: top.req(key::INSTANCE_ID)?,
        lease_id: top.req(key::LEASE_ID)?,
        generation: generation_value,
    };
    let fragments_at = top.at(key::FRAGMENTS);
    let records = values::seq(
        top.req(key::FRAGMENTS)?,
        "runtime binding fragments",
        &fragments_at,
    )?;
    limits.check_fragments(records.len(), &fragments_at)?;

    let mut fragments = Vec::with_capacity(records.len());
    let mut owners = Vec::with_capacity(records.len());
    for (i, value) in records.iter().enumerate() {
        let at = fragments_at.index(i);
        let record = Members::of(value, &at);
        if !matches!(record.req(key::IS_CONTIGUOUS)?, Value::Bool(true)) {
            return Err(Error::at(
                Code::NotContiguous,
                "runtime binding allocation must be contiguous",
                &record.at(key::IS_CONTIGUOUS),
            ));
        }
        if let Some(lease) = record.opt_int(key::LEASE_GENERATION, 0)? {
            if lease != generation {
                return Err(Error::at(
                    Code::LeaseGenerationMismatch,
                    "runtime binding fragment lease generation mismatch",
                    &record.at(key::LEASE_GENERATION),
                ));
            }
        }
        let storage_offset = record.opt_int(key::STORAGE_OFFSET, 0)?;
        let byte_offset = record.opt_int(key::BYTE_OFFSET, 0)?;
        let nonzero = storage_offset.unwrap_or(0) != 0 || byte_offset.unwrap_or(0) != 0;
        if nonzero && !view {
            return Err(offsets_require_view(&at, storage_offset.unwrap_or(0)));
        }
        let fields = BindingFragmentFields {
            placement_fragment_id: record.req(key::PLACEMENT_FRAGMENT_ID)?,
            fragment_id: record.req(key::FRAGMENT_ID)?,
            site: SiteFields::read(|key| record.req(key))?,
        };
        fragments.push(check_binding_fragment(&fields, &at)?);
        owners.push(options.owners.and_then(|resolve| resolve(value)));
    }
    construct_binding(&root, &MANIFEST, &header, fragments, owners)
}

/// The binding inventory (§10.4) as a document kind of the reading pipeline.
pub(crate) struct BindingInventoryDocument;

impl Document for BindingInventoryDocument {
    type Output = Binding;
    const LABEL: &'static str = LABEL;

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        binding_from_inventory(document, options)
    }
}

impl Binding {
    /// Reads a binding inventory JSON document (§10.4) under `options` (limits, address
    /// semantics, owners); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Binding> {
        document::read::<BindingInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a binding inventory already read into a [`Value`], under `options` (limits,
    /// address semantics, owners).
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        BindingInventoryDocument::from_tree(document, options)
    }
}
