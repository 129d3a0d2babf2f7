//! PlacementManifest (contract §2.6) and its construction (§8.1).

use crate::canonical;
use crate::check;
use crate::error::{Code, Error, Result};
use crate::identity;
use crate::model::order::sort_by_str_key;
use crate::path::Path;
use crate::validate::{check_fragment_set, LogicalFragment};
use crate::value::Value;
use crate::wire::{PlacementFragment, PlacementManifest, TensorDescriptor};

/// A validated placement manifest: serialisable, address-free, normalised (canonical
/// descriptors sorted by tensor_id, fragments sorted by placement_fragment_id, aliases
/// sorted) and carrying its canonical `placement_id` and `digest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    manifest: PlacementManifest,
    id: String,
    digest: String,
}

impl Placement {
    /// Parses placement manifest JSON strictly (contract §6.2).
    ///
    /// ```
    /// use weight_manifest::{Code, Placement};
    ///
    /// let text = r#"{"fragments":[{"aliases":[],"global_offset":[0,0],"local_shape":[4,4],
    ///   "nbytes":32,"placement_fragment_id":"placement-0","rank":{"dp":0,"ep":1,"pp":1,"tp":0},
    ///   "tensor_id":"layers.2.experts.3.w1"}],"model_id":"model","placement_id":null,
    ///   "revision":"revision","tensors":[{"dtype":"bfloat16","expert_id":3,"global_shape":[8,4],
    ///   "itemsize":2,"layer_id":2,"layout_fingerprint":"test:qwen:bf16:v1","partition_dim":0,
    ///   "shard_dims":null,"tensor_id":"layers.2.experts.3.w1"}]}"#;
    /// let placement = Placement::from_json(text)?;
    /// assert_eq!(placement.digest(), "7320a5090dc88556c57e5d9e8cb316d05b3bf99b00f7a0c0da04198ca995e915");
    ///
    /// // A 4x4 box of 2-byte items is 32 bytes, not 30.
    /// let error = Placement::from_json(text.replace("\"nbytes\":32", "\"nbytes\":30")).unwrap_err();
    /// assert_eq!(error.code(), Code::NbytesMismatch);
    /// assert_eq!(error.message(), "fragment byte size mismatch: placement-0: expected 32, got 30");
    /// # Ok::<(), weight_manifest::Error>(())
    /// ```
    pub fn from_json(text: impl AsRef<[u8]>) -> Result<Placement> {
        Placement::from_json_with_limits(text, &crate::Limits::default())
    }

    /// [`Placement::from_json`] under `limits` ([`Placement::from_json`] uses
    /// [`Limits::default()`](crate::Limits)).
    ///
    /// ```
    /// use weight_manifest::{Code, Limits, Placement};
    ///
    /// let text = r#"{"fragments":[],"model_id":"m","placement_id":null,"revision":"r","tensors":[]}"#;
    /// let limits = Limits { max_string_bytes: 0, ..Limits::default() };
    /// let error = Placement::from_json_with_limits(text, &limits).unwrap_err();
    /// assert_eq!(error.code(), Code::LimitExceeded);
    /// assert_eq!(error.message(), "string of 9 bytes exceeds max_string_bytes (0)");
    /// assert_eq!(error.path(), Some(""));
    /// ```
    pub fn from_json_with_limits(
        text: impl AsRef<[u8]>,
        limits: &crate::Limits,
    ) -> Result<Placement> {
        crate::parse::placement(text.as_ref(), limits)
    }

    /// Parses a document already read into a [`Value`](crate::Value) (for bindings that
    /// build the tree from their own objects), under [`Limits::default()`](crate::Limits).
    pub fn from_value(document: &crate::Value<'_>) -> Result<Placement> {
        Placement::from_value_with_limits(document, &crate::Limits::default())
    }

    /// [`Placement::from_value`] under `limits` (the count and dimension limits; the
    /// reader's limits apply when the tree is read).
    pub fn from_value_with_limits(
        document: &crate::Value<'_>,
        limits: &crate::Limits,
    ) -> Result<Placement> {
        crate::parse::placement_from_value(document, limits)
    }

    /// Validates a typed manifest exactly as if it were its JSON document; `placement_id:
    /// None` means "compute". Error paths point into that document.
    ///
    /// ```
    /// use weight_manifest::wire::PlacementManifest;
    /// use weight_manifest::Placement;
    ///
    /// let empty = PlacementManifest {
    ///     fragments: vec![],
    ///     model_id: "m".into(),
    ///     placement_id: None,
    ///     revision: "r".into(),
    ///     tensors: vec![],
    /// };
    /// let placement = Placement::from_wire(&empty)?;
    /// assert_eq!(placement.placement_id(), "sha256:65e60da33f39b251b1b47dfc71795c890e90c56bbab9c16ff7ab2414dcd15fd1");
    /// assert_eq!(placement.as_wire().placement_id.as_deref(), Some(placement.placement_id()));
    /// # Ok::<(), weight_manifest::Error>(())
    /// ```
    pub fn from_wire(manifest: &PlacementManifest) -> Result<Placement> {
        Placement::from_json(crate::parse::encode_wire(manifest))
    }

    /// The canonical wire JSON (§6.1): pure ASCII, no whitespace, no trailing newline.
    pub fn to_json(&self) -> String {
        canonical::to_string(&self.manifest)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
    }

    /// The model id.
    pub fn model_id(&self) -> &str {
        &self.manifest.model_id
    }

    /// The revision.
    pub fn revision(&self) -> &str {
        &self.manifest.revision
    }

    /// The canonical descriptors, sorted by tensor_id.
    pub fn tensors(&self) -> &[TensorDescriptor] {
        &self.manifest.tensors
    }

    /// The fragments, sorted by placement_fragment_id.
    pub fn fragments(&self) -> &[PlacementFragment] {
        &self.manifest.fragments
    }

    /// `sha256:` + 64 hex digits over the logical content (§7.1).
    pub fn placement_id(&self) -> &str {
        &self.id
    }

    /// SHA-256 of the wire JSON, 64 lowercase hex digits (§7.2).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The normalised wire value.
    pub fn as_wire(&self) -> &PlacementManifest {
        &self.manifest
    }
}

/// The §8.1 construction from checked parts. `model_id`, `revision` and `placement_id`
/// are the members as found (`root` locates their object); `placement_id` not set means
/// "compute".
pub(crate) fn construct_placement(
    root: &Path<'_>,
    model_id: &Value<'_>,
    revision: &Value<'_>,
    placement_id: Option<&Value<'_>>,
    mut tensors: Vec<TensorDescriptor>,
    mut fragments: Vec<PlacementFragment>,
) -> Result<Placement> {
    sort_by_str_key(&mut tensors, |t| &t.tensor_id);
    sort_by_str_key(&mut fragments, |f| &f.placement_fragment_id);
    let model_id = check::string(model_id, "model_id", &root.key("model_id"))?;
    let revision = check::string(revision, "revision", &root.key("revision"))?;

    check_fragment_set(&tensors, fragments.len(), |i| {
        let f = &fragments[i];
        LogicalFragment {
            id: &f.placement_fragment_id,
            tensor_id: &f.tensor_id,
            rank: &f.rank,
            global_offset: &f.global_offset,
            local_shape: &f.local_shape,
            nbytes: f.nbytes,
        }
    })?;

    let (canonical_id, digest) =
        identity::placement_identities(model_id, revision, &tensors, &fragments);
    let given = check::opt_string(placement_id, "placement_id", &root.key("placement_id"))?;
    if given.is_some_and(|id| id != canonical_id) {
        return Err(Error::new(
            Code::PlacementIdMismatch,
            "placement_id does not match canonical logical content",
        ));
    }
    let manifest = PlacementManifest {
        fragments,
        model_id: model_id.to_owned(),
        placement_id: Some(canonical_id.clone()),
        revision: revision.to_owned(),
        tensors,
    };
    Ok(Placement {
        manifest,
        id: canonical_id,
        digest,
    })
}
