//! The runtime inventory reader (contract §10.3).

use super::descriptor::{read_descriptor, DescriptorSet};
use super::members::Members;
use super::offsets_require_view;
use crate::check;
use crate::error::{Code, Error, Result};
use crate::model::fragment::{check_runtime_fragment, RuntimeFragmentFields};
use crate::model::rank::{check_rank, RankFields};
use crate::model::runtime::RuntimeHeader;
use crate::model::{construct_runtime, Runtime};
use crate::options::Options;
use crate::parse::top_object_of;
use crate::path::Path;
use crate::rules::stride::is_canonical_stride;
use crate::rules::values::{MIN_EXTENT, MIN_STRIDE};
use crate::value::Value;
use crate::wire::{ParallelRank, TensorDescriptor};

const LABEL: &str = super::RUNTIME_INVENTORY_LABEL;

/// Reads a runtime inventory document (already read by the strict reader with label
/// `runtime inventory`) into a validated [`Runtime`]: `max_fragments` on the records,
/// `max_tensors` on their distinct tensor_ids and `max_dims` on each record's global_shape.
pub(crate) fn runtime_from_inventory(
    document: &Value<'_>,
    options: &Options<'_>,
) -> Result<Runtime> {
    let root = Path::Root;
    top_object_of(document, LABEL)?;
    let view = options.address_semantics.is_view();
    let limits = &options.limits;
    let top = Members::of(document, &root);

    let generation = check::int(
        top.req("generation")?,
        "generation",
        0,
        &top.at("generation"),
    )?;
    let tensors_at = top.at("tensors");
    let records = check::seq(
        top.req("tensors")?,
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

        let rank_value = record.req("rank")?;
        let lease_generation = record.req("lease_generation")?;
        let lease = check::int(
            lease_generation,
            "lease_generation",
            0,
            &record.at("lease_generation"),
        )?;
        if lease != generation {
            return Err(Error::at(
                Code::LeaseGenerationMismatch,
                format!("runtime inventory lease generation mismatch: {lease} != {generation}"),
                &record.at("lease_generation"),
            ));
        }

        let fragment_id = record.req("fragment_id")?;
        let global_offset = record.req("global_offset")?;
        let local_shape = record.req("local_shape")?;
        let address = record.req("address")?;
        let nbytes = record.req("nbytes")?;
        let worker_id = record.req("worker_id")?;
        let endpoint = record.req("endpoint")?;
        let device = record.req("device")?;
        let rank_at = record.at("rank");
        let rank = read_rank(&Members::of(rank_value, &rank_at))?;
        let aliases = read_aliases(&record)?;
        let tensor_id = Value::Str(descriptor.tensor_id.as_str().into());
        let fields = RuntimeFragmentFields {
            fragment_id,
            tensor_id: &tensor_id,
            global_offset,
            local_shape,
            address,
            nbytes,
            worker_id,
            endpoint,
            device,
            rank: Some(rank),
            lease_generation,
            aliases,
            placement_fragment_id: record.opt("placement_fragment_id"),
        };
        fragments.push(check_runtime_fragment(&fields, &at)?);
        owners.push(options.owners.and_then(|resolve| resolve(value)));
    }

    let header = RuntimeHeader {
        model_id: top.req("model_id")?,
        revision: top.req("revision")?,
        instance_id: top.req("instance_id")?,
        lease_id: top.opt("lease_id"),
        placement_id: top.opt("placement_id"),
        generation: Some(&Value::UInt(generation)),
    };
    construct_runtime(&root, &header, descriptors.into_sorted(), fragments, owners)
}

/// §10.3 step 4.3: the view must be contiguous with canonical strides, its byte offset
/// item-aligned, and offsets only with `view` semantics.
fn check_view(record: &Members<'_, '_>, descriptor: &TensorDescriptor, view: bool) -> Result<()> {
    if !matches!(record.req("is_contiguous")?, Value::Bool(true)) {
        return Err(Error::at(
            Code::NotContiguous,
            "runtime inventory tensor must be contiguous",
            &record.at("is_contiguous"),
        ));
    }
    let local_shape = check::ints(
        record.req("local_shape")?,
        "local_shape",
        MIN_EXTENT,
        &record.at("local_shape"),
    )?;
    let stride_at = record.at("stride");
    let stride = check::ints(record.req("stride")?, "stride", MIN_STRIDE, &stride_at)?;
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
    let storage_offset = record.req("storage_offset")?;
    let byte_offset = record.req("byte_offset")?;
    let storage_offset = check::int(
        storage_offset,
        "storage_offset",
        0,
        &record.at("storage_offset"),
    )?;
    let byte_offset = check::int(byte_offset, "byte_offset", 0, &record.at("byte_offset"))?;
    if byte_offset % descriptor.itemsize != 0 {
        return Err(Error::at(
            Code::ByteOffsetUnaligned,
            "runtime inventory byte_offset must be item-aligned",
            &record.at("byte_offset"),
        ));
    }
    if (storage_offset != 0 || byte_offset != 0) && !view {
        return Err(offsets_require_view(&record.at("byte_offset")));
    }
    Ok(())
}

/// Reads dp, tp, pp, ep (req, in this order) and runs the ParallelRank checks.
pub(crate) fn read_rank(rank: &Members<'_, '_>) -> Result<ParallelRank> {
    let fields = RankFields {
        dp: rank.req("dp")?,
        tp: rank.req("tp")?,
        pp: rank.req("pp")?,
        ep: rank.req("ep")?,
    };
    check_rank(&fields, rank.path())
}

/// Reads aliases (opt): a set value that is not an array is `aliases_invalid`.
pub(crate) fn read_aliases<'v, 'a>(record: &Members<'v, 'a>) -> Result<Option<&'v Value<'a>>> {
    match record.opt("aliases") {
        Some(value) if !matches!(value, Value::Array(_)) => Err(Error::at(
            Code::AliasesInvalid,
            "aliases must be a sequence of non-empty strings",
            &record.at("aliases"),
        )),
        other => Ok(other),
    }
}
