//! Strict parse of runtime binding manifest JSON (contract §9.2).

use super::members::{exact, fragments, member, top_object};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::binding::BindingHeader;
use crate::model::construct_binding;
use crate::model::fragment::{check_binding_fragment, BindingFragmentFields};
use crate::model::Binding;
use crate::options::Options;
use crate::path::Path;
use crate::reader;
use crate::value::Value;
use crate::wire::RuntimeBindingManifest;

const LABEL: &str = "runtime binding manifest";

impl Binding {
    /// Parses runtime binding manifest JSON strictly (contract §9.2), under `options.limits`.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Binding> {
        options.apply(|| binding(text.as_ref(), &options.limits))
    }

    /// Parses a document already read into a [`Value`] (for bindings that build the tree
    /// from their own objects): the count and dimension limits of `options.limits` apply
    /// here, the reader's when the tree was read.
    pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        options.apply(|| binding_from_value(document, &options.limits))
    }

    /// Validates a typed manifest exactly as if it were its JSON document (default
    /// limits); error paths point into that document.
    pub fn from_wire(manifest: &RuntimeBindingManifest) -> Result<Binding> {
        binding(&super::encode_wire(manifest), &Limits::default())
    }
}
const MANIFEST_KEYS: [&str; 8] = [
    "fragments",
    "generation",
    "instance_id",
    "lease_id",
    "model_id",
    "placement_digest",
    "placement_id",
    "revision",
];
const FRAGMENT_KEYS: [&str; 7] = [
    "address",
    "device",
    "endpoint",
    "fragment_id",
    "nbytes",
    "placement_fragment_id",
    "worker_id",
];

/// Reads and parses a runtime binding manifest document.
pub(crate) fn binding(text: &[u8], limits: &Limits) -> Result<Binding> {
    binding_from_value(&reader::read(text, LABEL, limits)?, limits)
}

/// §9.2 parse steps 1–4 on a read document.
pub(crate) fn binding_from_value(document: &Value<'_>, limits: &Limits) -> Result<Binding> {
    let root = Path::Root;
    top_object(document, LABEL)?;
    let top = exact(document, &MANIFEST_KEYS, &|| LABEL.to_owned(), &root)?;

    let fragments = fragments(
        top,
        "runtime binding",
        &FRAGMENT_KEYS,
        limits,
        |element, at, _| {
            let fields = BindingFragmentFields {
                placement_fragment_id: member(element, "placement_fragment_id"),
                fragment_id: member(element, "fragment_id"),
                address: member(element, "address"),
                nbytes: member(element, "nbytes"),
                worker_id: member(element, "worker_id"),
                endpoint: member(element, "endpoint"),
                device: member(element, "device"),
            };
            check_binding_fragment(&fields, at)
        },
    )?;

    let header = BindingHeader {
        model_id: member(top, "model_id"),
        revision: member(top, "revision"),
        placement_id: member(top, "placement_id"),
        placement_digest: member(top, "placement_digest"),
        instance_id: member(top, "instance_id"),
        lease_id: member(top, "lease_id"),
        generation: member(top, "generation"),
    };
    construct_binding(&root, &header, fragments, Vec::new())
}
