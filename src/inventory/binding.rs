//! The binding inventory reader (contract §10.4).

use super::members::Members;
use super::offsets_require_view;
use crate::check;
use crate::error::{Code, Error, Result};
use crate::model::binding::BindingHeader;
use crate::model::fragment::{check_binding_fragment, BindingFragmentFields};
use crate::model::{construct_binding, Binding};
use crate::options::Options;
use crate::parse::top_object_of;
use crate::path::Path;
use crate::value::Value;

const LABEL: &str = super::BINDING_INVENTORY_LABEL;

/// Reads a binding inventory document into a validated [`Binding`]: `max_fragments` on
/// the records.
pub(crate) fn binding_from_inventory(
    document: &Value<'_>,
    options: &Options<'_>,
) -> Result<Binding> {
    let root = Path::Root;
    top_object_of(document, LABEL)?;
    let view = options.address_semantics.is_view();
    let limits = &options.limits;
    let top = Members::of(document, &root);

    let generation_value = top.req("generation")?;
    let generation = check::int(generation_value, "generation", 0, &top.at("generation"))?;
    let header = BindingHeader {
        model_id: top.req("model_id")?,
        revision: top.req("revision")?,
        placement_id: top.req("placement_id")?,
        placement_digest: top.req("placement_digest")?,
        instance_id: top.req("instance_id")?,
        lease_id: top.req("lease_id")?,
        generation: generation_value,
    };
    let fragments_at = top.at("fragments");
    let records = check::seq(
        top.req("fragments")?,
        "runtime binding fragments",
        &fragments_at,
    )?;
    limits.check_fragments(records.len(), &fragments_at)?;

    let mut fragments = Vec::with_capacity(records.len());
    let mut owners = Vec::with_capacity(records.len());
    for (i, value) in records.iter().enumerate() {
        let at = fragments_at.index(i);
        let record = Members::of(value, &at);
        if !matches!(record.req("is_contiguous")?, Value::Bool(true)) {
            return Err(Error::at(
                Code::NotContiguous,
                "runtime binding allocation must be contiguous",
                &record.at("is_contiguous"),
            ));
        }
        if let Some(lease) = record.opt("lease_generation") {
            let lease = check::int(lease, "lease_generation", 0, &record.at("lease_generation"))?;
            if lease != generation {
                return Err(Error::at(
                    Code::LeaseGenerationMismatch,
                    "runtime binding fragment lease generation mismatch",
                    &record.at("lease_generation"),
                ));
            }
        }
        let storage_offset = record.opt("storage_offset");
        let byte_offset = record.opt("byte_offset");
        let storage_offset = check::opt_int(
            storage_offset,
            "storage_offset",
            0,
            &record.at("storage_offset"),
        )?;
        let byte_offset = check::opt_int(byte_offset, "byte_offset", 0, &record.at("byte_offset"))?;
        let nonzero = storage_offset.unwrap_or(0) != 0 || byte_offset.unwrap_or(0) != 0;
        if nonzero && !view {
            return Err(offsets_require_view(&at));
        }
        let fields = BindingFragmentFields {
            placement_fragment_id: record.req("placement_fragment_id")?,
            fragment_id: record.req("fragment_id")?,
            address: record.req("address")?,
            nbytes: record.req("nbytes")?,
            worker_id: record.req("worker_id")?,
            endpoint: record.req("endpoint")?,
            device: record.req("device")?,
        };
        fragments.push(check_binding_fragment(&fields, &at)?);
        owners.push(options.owners.and_then(|resolve| resolve(value)));
    }
    construct_binding(&root, &header, fragments, owners)
}
