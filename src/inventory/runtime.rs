//! The runtime inventory reader (contract §10.3).

use super::descriptor::{read_descriptor, DescriptorSet};
use super::labels::offsets_require_view;
use super::member_reader::{read_aliases, read_rank, Members};
use crate::document::top_object;
use crate::document::{self, Document};
use crate::error::{Code, Error, Result};
use crate::locate::INVENTORY;
use crate::model::runtime::RuntimeHeader;
use crate::model::{construct_runtime, Runtime};
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::SiteFields;
use crate::rules::fragment::{check_runtime_fragment, RuntimeFragmentFields};
use crate::rules::stride::is_canonical_stride;
use crate::rules::values;
use crate::rules::values::{MIN_EXTENT, MIN_OFFSET, MIN_STRIDE};
use crate::value::Value;
use crate::wire::key;
use crate::wire::TensorDescriptor;

const LABEL: &str = super::labels::RUNTIME_INVENTORY_LABEL;

/// Reads a runtime inventory document (already read by the strict reader with label
/// `runtime inventory`) into a validated [`Runtime`]: `max_fragments` on the records,
/// `max_tensors` on their distinct tensor_ids and `max_dims` on each record's global_shape.
pub(crate) fn runtime_from_inventory(
    document: &Value<'_>,
    options: &Options<'_>,
) -> Result<Runtime> {
    let root = Path::Root;
    top_object(document, LABEL)?;
    let view = options.address_semantics.is_view();
    let limits = &options.limits;
    let top = Members::of(document, &root);

    let generation = top.int(key::GENERATION, 0)?;
    let tensors_at = top.at(key::TENSORS);
    let records = values::seq(
        top.req(key::TENSORS)?,
        "runtime inventory tensors",
        &tensors_at,
    )?;
    limits.check_fragments(records.len(), &tensors_at)?;

    let mut descriptors = DescriptorSet::default();
    let mut fragments = Vec::with_capacity(records.len());
    let mut owners = Vec::with_capacity(records.len());
    for (i, value) in records.iter().enumerate() {
        let at = tensors_at.index(i);
        let record = Members::of(value, &at);
        let descriptor = read_descriptor(&record, limits)?;
        descriptors.merge(descriptor.clone(), LABEL, &record, limits)?;
        check_view(&record, &descriptor, view)?;

        let rank_value = record.req(key::RANK)?;
        let lease_generation = record.req(key::LEASE_GENERATION)?;
        let lease = values::int(
            lease_generation,
            "lease_generation",
            0,
            &record.at(key::LEASE_GENERATION),
        )?;
        if lease != generation {
            return Err(Error::at(
                Code::LeaseGenerationMismatch,
                format!("runtime inventory lease generation mismatch: {lease} != {generation}"),
                &record.at(key::LEASE_GENERATION),
            ));
        }

        let fragment_id = record.req(key::FRAGMENT_ID)?;
        let global_offset = record.req(key::GLOBAL_OFFSET)?;
        let local_shape = record.req(key::LOCAL_SHAPE)?;
        let site = SiteFields::read(|key| record.req(key))?;
        let rank_at = record.at(key::RANK);
        let rank = read_rank(&Members::of(rank_value, &rank_at))?;
        let aliases = read_aliases(&record)?;
        let tensor_id = Value::Str(descriptor.tensor_id.as_str().into());
        let fields = RuntimeFragmentFields {
            fragment_id,
            tensor_id: &tensor_id,
            global_offset,
            local_shape,
            site,
            rank: Some(rank),
            lease_generation,
            aliases,
            placement_fragment_id: record.opt(key::PLACEMENT_FRAGMENT_ID),
        };
        fragments.push(check_runtime_fragment(&fields, &at)?);
        owners.push(options.owners.and_then(|resolve| resolve(value)));
    }

    let header = RuntimeHeader {
        model_id: top.req(key::MODEL_ID)?,
        revision: top.req(key::REVISION)?,
        instance_id: top.req(key::INSTANCE_ID)?,
        lease_id: top.opt(key::LEASE_ID),
        placement_id: top.opt(key::PLACEMENT_ID),
        generation: Some(&Value::UInt(generation)),
    };
    let tensors = descriptors.into_sorted();
    construct_runtime(
        &root,
        INVENTORY,
        &header,
        tensors,
        fragments,
        owners,
        limits.max_geometry_work,
    )
}

/// §10.3 step 4.3: the view must be contiguous with canonical strides, its byte offset
/// item-aligned, and offsets only with `view` semantics.
fn check_view(record: &Members<'_, '_>, descriptor: &TensorDescriptor, view: bool) -> Result<()> {
    if !matches!(record.req(key::IS_CONTIGUOUS)?, Value::Bool(true)) {
        return Err(Error::at(
            Code::NotContiguous,
            "runtime inventory tensor must be contiguous",
            &record.at(key::IS_CONTIGUOUS),
        ));
    }
    let local_shape = values::ints(
        record.req(key::LOCAL_SHAPE)?,
        "local_shape",
        MIN_EXTENT,
        &record.at(key::LOCAL_SHAPE),
    )?;
    let stride_at = record.at(key::STRIDE);
    let stride = values::ints(
        record.req(key::STRIDE)?,
        key::STRIDE,
        MIN_STRIDE,
        &stride_at,
    )?;
    if stride.len() != local_shape.len() {
        return Err(Error::at(
            Code::StrideRankMismatch,
            "runtime inventory stride rank mismatch",
            &stride_at,
        ));
    }
    if !is_canonical_stride(&local_shape, &stride) {
        return Err(Error::at(
            Code::NonCanonicalStride,
            "runtime inventory tensor must use canonical stride",
            &stride_at,
        ));
    }
    // Both are read before either is checked (§10.3 step 4.3).
    let storage_offset = record.req(key::STORAGE_OFFSET)?;
    let byte_offset = record.req(key::BYTE_OFFSET)?;
    let offset = |value, key| values::int(value, key, MIN_OFFSET, &record.at(key));
    let storage_offset = offset(storage_offset, key::STORAGE_OFFSET)?;
    let byte_offset = offset(byte_offset, key::BYTE_OFFSET)?;
    if byte_offset % descriptor.itemsize != 0 {
        return Err(Error::at(
            Code::ByteOffsetUnaligned,
            "runtime inventory byte_offset must be item-aligned",
            &record.at(key::BYTE_OFFSET),
        ));
    }
    if (storage_offset != 0 || byte_offset != 0) && !view {
        return Err(offsets_require_view(record.path(), storage_offset));
    }
    Ok(())
}

/// The runtime inventory (§10.3) as a document kind of the reading pipeline.
pub(crate) struct RuntimeInventoryDocument;

impl Document for RuntimeInventoryDocument {
    type Output = Runtime;
    const LABEL: &'static str = LABEL;

    fn fast(text: &str, options: &Options<'_>) -> Option<Runtime> {
        super::fast::runtime_inventory(text, options)
    }

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        runtime_from_inventory(document, options)
    }
}

impl Runtime {
    /// Reads a runtime inventory JSON document (§10.3) under `options` (limits, address
    /// semantics, owners); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Runtime> {
        document::read::<RuntimeInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a runtime inventory already read into a [`Value`], under `options` (limits,
    /// address semantics, owners).
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        RuntimeInventoryDocument::from_tree(document, options)
    }
}
