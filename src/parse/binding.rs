//! Strict parse of runtime binding manifest JSON (contract §9.2).

use super::elements::fragments;
use crate::document::{self, manifest_top, member, Document};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::binding::BindingHeader;
use crate::model::construct_binding;
use crate::model::Binding;
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::{check_binding_fragment, BindingFragmentFields};
use crate::value::Value;
use crate::wire::RuntimeBindingManifest;
use crate::wire::{key, RuntimeBindingFragment};

/// The runtime binding manifest (§9.2) as a document kind of the reading pipeline.
struct BindingDocument;

impl Document for BindingDocument {
    type Output = Binding;
    const LABEL: &'static str = "runtime binding manifest";

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        binding_from_value(document, &options.limits)
    }
}

impl Binding {
    /// Parses runtime binding manifest JSON strictly (contract §9.2), under `options.limits`.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Binding> {
        document::read::<BindingDocument>(text.as_ref(), options)
    }

    /// Parses a runtime binding manifest already read into a [`Value`] (for bindings that build the tree
    /// from their own objects): the count, dimension and geometry limits of
    /// `options.limits` apply here, the reader's when the tree was read.
    pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        BindingDocument::from_tree(document, options)
    }

    /// Validates a typed manifest exactly as if it were its JSON document (default limits);
    /// error paths point into that document.
    pub fn from_wire(manifest: &RuntimeBindingManifest) -> Result<Binding> {
        document::read::<BindingDocument>(&super::encode_wire(manifest), &Options::default())
    }
}

/// §9.2 parse steps 1–4 on a read document.
pub(crate) fn binding_from_value(document: &Value<'_>, limits: &Limits) -> Result<Binding> {
    let root = Path::Root;
    let top = manifest_top(
        document,
        BindingDocument::LABEL,
        RuntimeBindingManifest::FIELDS,
    )?;

    let fragments = fragments(
        top,
        "runtime binding",
        RuntimeBindingFragment::FIELDS,
        limits,
        |element, at, _| {
            let fields = BindingFragmentFields::of(|key| member(element, key));
            check_binding_fragment(&fields, at)
        },
    )?;

    let header = BindingHeader {
        model_id: member(top, key::MODEL_ID),
        revision: member(top, key::REVISION),
        placement_id: member(top, key::PLACEMENT_ID),
        placement_digest: member(top, key::PLACEMENT_DIGEST),
        instance_id: member(top, key::INSTANCE_ID),
        lease_id: member(top, key::LEASE_ID),
        generation: member(top, key::GENERATION),
    };
    construct_binding(&root, &MANIFEST, &header, fragments, Vec::new())
}
