//! Strict parse of runtime manifest JSON (contract §9.1).

use super::members::{fragment_rank, fragments, manifest_top, member, tensors};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::construct_runtime;
use crate::model::fragment::{check_runtime_fragment, RuntimeFragmentFields};
use crate::model::runtime::RuntimeHeader;
use crate::model::Runtime;
use crate::options::Options;
use crate::path::Path;
use crate::reader;
use crate::value::Value;
use crate::wire::RuntimeManifest;
use crate::wire::{key, RuntimeFragment};

const LABEL: &str = "runtime manifest";

#[rustfmt::skip]
manifest_constructors!(Runtime, RuntimeManifest, runtime, runtime_from_value, "runtime manifest", "§9.1",);

/// Reads and parses a runtime manifest document.
pub(crate) fn runtime(text: &[u8], limits: &Limits) -> Result<Runtime> {
    runtime_from_value(&reader::read(text, LABEL, limits)?, limits)
}

/// §9.1 parse steps 1–5 on a read document.
pub(crate) fn runtime_from_value(document: &Value<'_>, limits: &Limits) -> Result<Runtime> {
    let root = Path::Root;
    let top = manifest_top(document, LABEL, RuntimeManifest::FIELDS)?;

    let tensors = tensors(top, "runtime", &root, limits)?;

    let fragments = fragments(
        top,
        "runtime",
        RuntimeFragment::FIELDS,
        limits,
        |element, at, i| {
            let fields = RuntimeFragmentFields::of(
                |key| member(element, key),
                |key| element.get(key),
                Some(fragment_rank(element, "runtime", at, i)?),
            );
            check_runtime_fragment(&fields, at)
        },
    )?;

    let header = RuntimeHeader {
        model_id: member(top, key::MODEL_ID),
        revision: member(top, key::REVISION),
        instance_id: member(top, key::INSTANCE_ID),
        lease_id: top.get(key::LEASE_ID),
        placement_id: top.get(key::PLACEMENT_ID),
        generation: top.get(key::GENERATION),
    };
    construct_runtime(&root, MANIFEST, &header, tensors, fragments, Vec::new())
}
