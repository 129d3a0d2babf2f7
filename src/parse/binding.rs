//! Strict parse of runtime binding manifest JSON (contract §9.2).

use super::members::{fragments, manifest_top, member};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::binding::BindingHeader;
use crate::model::construct_binding;
use crate::model::fragment::{check_binding_fragment, BindingFragmentFields};
use crate::model::Binding;
use crate::options::Options;
use crate::path::Path;
use crate::reader;
use crate::value::Value;
use crate::wire::RuntimeBindingManifest;
use crate::wire::{key, RuntimeBindingFragment};

const LABEL: &str = "runtime binding manifest";

#[rustfmt::skip]
manifest_constructors!(Binding, RuntimeBindingManifest, binding, binding_from_value, "runtime binding manifest", "§9.2",);

/// Reads and parses a runtime binding manifest document.
pub(crate) fn binding(text: &[u8], limits: &Limits) -> Result<Binding> {
    binding_from_value(&reader::read(text, LABEL, limits)?, limits)
}

/// §9.2 parse steps 1–4 on a read document.
pub(crate) fn binding_from_value(document: &Value<'_>, limits: &Limits) -> Result<Binding> {
    let root = Path::Root;
    let top = manifest_top(document, LABEL, RuntimeBindingManifest::FIELDS)?;

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
