//! Strict parse of runtime manifest JSON (contract §9.1).

use super::members::{exact, fragment_rank, fragments, member, tensors, top_object};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::construct_runtime;
use crate::model::fragment::{check_runtime_fragment, RuntimeFragmentFields};
use crate::model::runtime::RuntimeHeader;
use crate::model::Runtime;
use crate::options::Options;
use crate::path::Path;
use crate::reader;
use crate::value::Value;
use crate::wire::RuntimeManifest;

const LABEL: &str = "runtime manifest";

impl Runtime {
    /// Parses runtime manifest JSON strictly (contract §9.1), under `options.limits`.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Runtime> {
        options.apply(|| runtime(text.as_ref(), &options.limits))
    }

    /// Parses a document already read into a [`Value`] (for bindings that build the tree
    /// from their own objects): the count and dimension limits of `options.limits` apply
    /// here, the reader's when the tree was read.
    pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        options.apply(|| runtime_from_value(document, &options.limits))
    }

    /// Validates a typed manifest exactly as if it were its JSON document (default
    /// limits); error paths point into that document.
    pub fn from_wire(manifest: &RuntimeManifest) -> Result<Runtime> {
        runtime(&super::encode_wire(manifest), &Limits::default())
    }
}
const MANIFEST_KEYS: [&str; 8] = [
    "fragments",
    "generation",
    "instance_id",
    "lease_id",
    "model_id",
    "placement_id",
    "revision",
    "tensors",
];
const FRAGMENT_KEYS: [&str; 13] = [
    "address",
    "aliases",
    "device",
    "endpoint",
    "fragment_id",
    "global_offset",
    "lease_generation",
    "local_shape",
    "nbytes",
    "placement_fragment_id",
    "rank",
    "tensor_id",
    "worker_id",
];

/// Reads and parses a runtime manifest document.
pub(crate) fn runtime(text: &[u8], limits: &Limits) -> Result<Runtime> {
    runtime_from_value(&reader::read(text, LABEL, limits)?, limits)
}

/// §9.1 parse steps 1–5 on a read document.
pub(crate) fn runtime_from_value(document: &Value<'_>, limits: &Limits) -> Result<Runtime> {
    let root = Path::Root;
    top_object(document, LABEL)?;
    let top = exact(document, &MANIFEST_KEYS, &|| LABEL.to_owned(), &root)?;

    let tensors = tensors(top, "runtime", &root, limits)?;

    let fragments = fragments(top, "runtime", &FRAGMENT_KEYS, limits, |element, at, i| {
        let fields = RuntimeFragmentFields {
            fragment_id: member(element, "fragment_id"),
            tensor_id: member(element, "tensor_id"),
            global_offset: member(element, "global_offset"),
            local_shape: member(element, "local_shape"),
            address: member(element, "address"),
            nbytes: member(element, "nbytes"),
            worker_id: member(element, "worker_id"),
            endpoint: member(element, "endpoint"),
            device: member(element, "device"),
            rank: Some(fragment_rank(element, "runtime", at, i)?),
            lease_generation: member(element, "lease_generation"),
            aliases: Some(member(element, "aliases")),
            placement_fragment_id: element.get("placement_fragment_id"),
        };
        check_runtime_fragment(&fields, at)
    })?;

    let header = RuntimeHeader {
        model_id: member(top, "model_id"),
        revision: member(top, "revision"),
        instance_id: member(top, "instance_id"),
        lease_id: top.get("lease_id"),
        placement_id: top.get("placement_id"),
        generation: top.get("generation"),
    };
    construct_runtime(&root, &header, tensors, fragments, Vec::new())
}
