//! PlacementManifest (contract §2.6) and its construction (§8.1).

use crate::canonical;
use crate::detail;
use crate::error::{Code, Detail, Error, Result};
use crate::identity;
use crate::locate::{Orders, Origin};
use crate::path::Path;
use crate::rules::fragment_set::check_fragment_set;
use crate::rules::values;
use crate::util::order::sort_by_str_key;
use crate::value::Value;
use crate::wire::key;
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

/// The header members of a placement as found (`placement_id` not set means "compute").
pub(crate) struct PlacementHeader<'v, 'a> {
    pub model_id: &'v Value<'a>,
    pub revision: &'v Value<'a>,
    pub placement_id: Option<&'v Value<'a>>,
}

/// The §8.1 construction from checked parts. The header's members are as found (`root`
/// locates their object). `origin` says where the tensors and fragments are in the document, in the
/// order given, so that a rule on the sorted lists points at the element as written. The
/// box searches spend at most `per_box` units per box (`max_geometry_work`).
pub(crate) fn construct_placement(
    root: &Path<'_>,
    origin: &Origin<'_>,
    header: &PlacementHeader<'_, '_>,
    mut tensors: Vec<TensorDescriptor>,
    mut fragments: Vec<PlacementFragment>,
    per_box: u64,
) -> Result<Placement> {
    let tensor_order = sort_by_str_key(&mut tensors, |t| &t.tensor_id);
    let fragment_order = sort_by_str_key(&mut fragments, |f| &f.placement_fragment_id);
    let model_id = values::string(header.model_id, key::MODEL_ID, &root.key(key::MODEL_ID))?;
    let revision = values::string(header.revision, key::REVISION, &root.key(key::REVISION))?;

    check_fragment_set(&tensors, fragments.len(), per_box, |i| {
        logical_fragment!(&fragments[i], placement_fragment_id)
    })
    .map_err(|e| {
        let orders = Orders {
            tensors: tensor_order.as_deref(),
            fragments: fragment_order.as_deref(),
        };
        e.locate(origin, &orders)
    })?;
    drop((tensor_order, fragment_order));

    let (canonical_id, digest) =
        identity::placement_identities(model_id, revision, &tensors, &fragments);
    let given = values::opt_string(
        header.placement_id,
        key::PLACEMENT_ID,
        &root.key(key::PLACEMENT_ID),
    )?;
    if let Some(given) = given.filter(|&id| id != canonical_id) {
        return Err(Error::at(
            Code::PlacementIdMismatch,
            "placement_id does not match canonical logical content",
            &root.key(key::PLACEMENT_ID),
        )
        .with_detail(Detail::Mismatch {
            expected: detail::text(&canonical_id),
            got: detail::text(given),
            other: None,
        }));
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
