//! Strict parse of runtime manifest JSON (contract §9.1).

use super::elements::{fragment_rank, fragments, tensors};
use crate::document::{self, manifest_top, member, Document};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::construct_runtime;
use crate::model::runtime::RuntimeHeader;
use crate::model::Runtime;
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::{check_runtime_fragment, RuntimeFragmentFields};
use crate::value::Value;
use crate::wire::RuntimeManifest;
use crate::wire::{key, RuntimeFragment};

/// The runtime manifest (§9.1) as a document kind of the reading pipeline.
struct RuntimeDocument;

impl Document for RuntimeDocument {
    type Output = Runtime;
    const LABEL: &'static str = "runtime manifest";

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        runtime_from_value(document, &options.limits)
    }
}

impl Runtime {
    /// Parses runtime manifest JSON strictly (contract §9.1), under `options.limits`.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Runtime> {
        document::read::<RuntimeDocument>(text.as_ref(), options)
    }

    /// Parses a runtime manifest already read into a [`Value`] (for bindings that build the tree
    /// from their own objects): the count, dimension and geometry limits of
    /// `options.limits` apply here, the reader's when the tree was read.
    pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        RuntimeDocument::from_tree(document, options)
    }

    /// Validates a typed manifest exactly as if it were its JSON document (default limits);
    /// error paths point into that document.
    pub fn from_wire(manifest: &RuntimeManifest) -> Result<Runtime> {
        document::read::<RuntimeDocument>(&super::encode_wire(manifest), &Options::default())
    }
}

/// §9.1 parse steps 1–5 on a read document.
pub(crate) fn runtime_from_value(document: &Value<'_>, limits: &Limits) -> Result<Runtime> {
    let root = Path::Root;
    let top = manifest_top(document, RuntimeDocument::LABEL, RuntimeManifest::FIELDS)?;

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
    construct_runtime(
        &root,
        MANIFEST,
        &header,
        tensors,
        fragments,
        Vec::new(),
        limits.max_geometry_work,
    )
}
