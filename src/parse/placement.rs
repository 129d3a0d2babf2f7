//! Strict parse of placement manifest JSON (contract §6.2).

use super::elements::{fragment_rank, fragments, tensors};
use crate::document::{self, manifest_top, member, Document};
use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::construct_placement;
use crate::model::placement::PlacementHeader;
use crate::model::Placement;
use crate::options::Options;
use crate::path::Path;
use crate::rules::fragment::{check_placement_fragment, PlacementFragmentFields};
use crate::value::Value;
use crate::wire::PlacementManifest;
use crate::wire::{key, PlacementFragment};

/// The placement manifest (§6.2) as a document kind of the reading pipeline.
struct PlacementDocument;

impl Document for PlacementDocument {
    type Output = Placement;
    const LABEL: &'static str = "placement manifest";

    fn fast(text: &str, options: &Options<'_>) -> Option<Placement> {
        super::fast::placement(text, &options.limits)
    }

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        placement_from_value(document, &options.limits)
    }
}

impl Placement {
    /// Parses placement manifest JSON strictly (contract §6.2), under `options.limits`.
    ///
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
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Placement> {
        document::read::<PlacementDocument>(text.as_ref(), options)
    }

    /// Parses a placement manifest already read into a [`Value`] (for bindings that build
    /// the tree from their own objects): the count, dimension and geometry limits of
    /// `options.limits` apply here, the reader's when the tree was read.
    pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        PlacementDocument::from_tree(document, options)
    }

    /// Validates a typed manifest exactly as if it were its JSON document (default limits);
    /// error paths point into that document.
    pub fn from_wire(manifest: &PlacementManifest) -> Result<Placement> {
        document::read::<PlacementDocument>(&super::encode_wire(manifest), &Options::default())
    }

    /// [`Placement::from_wire`] taking the manifest by value: the same result, rejection
    /// included, and whenever every value is one the text reader's fast path accepts (a
    /// manifest built in memory typically is) without writing the manifest as JSON and
    /// reading it back.
    pub fn from_wire_owned(manifest: PlacementManifest) -> Result<Placement> {
        super::fast::placement_from_manifest(manifest)
    }
}

/// §6.2 steps 1–5 on a read document.
pub(crate) fn placement_from_value(document: &Value<'_>, limits: &Limits) -> Result<Placement> {
    let root = Path::Root;
    let top = manifest_top(
        document,
        PlacementDocument::LABEL,
        PlacementManifest::FIELDS,
    )?;
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
        &PlacementHeader {
            model_id: member(object, key::MODEL_ID),
            revision: member(object, key::REVISION),
            placement_id: Some(member(object, key::PLACEMENT_ID)),
        },
        tensors,
        fragments,
        limits.max_geometry_work,
    )
}
