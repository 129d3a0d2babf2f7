//! Strict parse of placement manifest JSON (contract §6.2).

use super::members::{fragment_rank, fragments, manifest_top, member, tensors};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::construct_placement;
use crate::model::fragment::{check_placement_fragment, PlacementFragmentFields};
use crate::model::Placement;
use crate::options::Options;
use crate::path::Path;
use crate::reader;
use crate::value::Value;
use crate::wire::PlacementManifest;
use crate::wire::{key, PlacementFragment};

const LABEL: &str = "placement manifest";

manifest_constructors!(
    Placement,
    PlacementManifest,
    placement,
    placement_from_value,
    "placement manifest",
    "§6.2",
    /// ```
    /// use weight_manifest::{Code, Options, Placement};
    ///
    /// let text = r#"{"fragments":[{"aliases":[],"global_offset":[0,0],"local_shape":[4,4],
    ///   "nbytes":32,"placement_fragment_id":"placement-0","rank":{"dp":0,"ep":1,"pp":1,"tp":0},
    ///   "tensor_id":"layers.2.experts.3.w1"}],"model_id":"model","placement_id":null,
    ///   "revision":"revision","tensors":[{"dtype":"bfloat16","expert_id":3,"global_shape":[8,4],
    ///   "itemsize":2,"layer_id":2,"layout_fingerprint":"test:qwen:bf16:v1","partition_dim":0,
    ///   "shard_dims":null,"tensor_id":"layers.2.experts.3.w1"}]}"#;
    /// let placement = Placement::from_json(text, &Options::default())?;
    /// assert_eq!(placement.digest(), "7320a5090dc88556c57e5d9e8cb316d05b3bf99b00f7a0c0da04198ca995e915");
    ///
    /// // A 4x4 box of 2-byte items is 32 bytes, not 30.
    /// let error = Placement::from_json(text.replace("\"nbytes\":32", "\"nbytes\":30"), &Options::default()).unwrap_err();
    /// assert_eq!(error.code(), Code::NbytesMismatch);
    /// assert_eq!(error.message(), "fragment byte size mismatch: placement-0: expected 32, got 30");
    /// # Ok::<(), weight_manifest::Error>(())
    /// ```
);

impl Placement {
    /// [`Placement::from_wire`] taking the manifest by value: the same result, rejection
    /// included, and whenever every value is one the text reader's fast path accepts (a
    /// manifest built in memory typically is) without writing the manifest as JSON and
    /// reading it back.
    pub fn from_wire_owned(manifest: PlacementManifest) -> Result<Placement> {
        super::placement_from_manifest(manifest)
    }
}

/// Reads and parses a placement manifest document: the fast path when it applies, else
/// the document tree.
pub(crate) fn placement(text: &[u8], limits: &Limits) -> Result<Placement> {
    limits.check_document_bytes(text.len())?;
    if let Some(result) = super::fast::placement(text, limits) {
        return result;
    }
    placement_from_value(&reader::read(text, LABEL, limits)?, limits)
}

/// §6.2 steps 1–5 on a read document.
pub(crate) fn placement_from_value(document: &Value<'_>, limits: &Limits) -> Result<Placement> {
    let root = Path::Root;
    let top = manifest_top(document, LABEL, PlacementManifest::FIELDS)?;
    let object = top;

    let tensors = tensors(top, "placement", &root, limits)?;

    let fragments = fragments(
        top,
        "placement",
        PlacementFragment::FIELDS,
        limits,
        |element, at, i| {
            let fields = PlacementFragmentFields::of(
                |key| member(element, key),
                |key| element.get(key),
                Some(fragment_rank(element, "placement", at, i)?),
            );
            check_placement_fragment(&fields, at)
        },
    )?;

    construct_placement(
        &root,
        &MANIFEST,
        member(object, key::MODEL_ID),
        member(object, key::REVISION),
        Some(member(object, key::PLACEMENT_ID)),
        tensors,
        fragments,
    )
}
