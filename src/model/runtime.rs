//! RuntimeManifest (contract §2.7) and its construction (§8.4).

use super::owner::Owner;
use crate::canonical;
use crate::error::{Code, Detail, Error, Result};
use crate::locate::{Orders, Origin, Site};
use crate::path::Path;
use crate::rules::fragment_set::check_fragment_set;
use crate::rules::physical::check_physical;
use crate::rules::values;
use crate::util::fxhash::{map_with_capacity, FxHashMap};
use crate::value::Value;
use crate::wire::key;
use crate::wire::{RuntimeFragment, RuntimeManifest, TensorDescriptor};

/// A validated runtime snapshot: logical boxes and where each lives now. Tensors and
/// fragments keep manifest order. Owners are carried beside the fragments and excluded
/// from equality.
#[derive(Clone, Debug)]
pub struct Runtime {
    manifest: RuntimeManifest,
    owners: Vec<Option<Owner>>,
    /// Where its lists were in the document it was read from, to locate the rejections
    /// of what is derived from it (a projection).
    origin: Origin<'static>,
}

impl PartialEq for Runtime {
    fn eq(&self, other: &Self) -> bool {
        self.manifest == other.manifest
    }
}

impl Eq for Runtime {}

impl Runtime {
    /// The same manifest with `owners[i]` attached to fragment `i` (missing entries: none).
    #[must_use]
    pub fn with_owners(mut self, owners: Vec<Option<Owner>>) -> Runtime {
        self.owners = owners;
        self.owners.resize(self.manifest.fragments.len(), None);
        self
    }

    /// The canonical JSON (§9.1).
    pub fn to_json(&self) -> String {
        canonical::to_string(&self.manifest)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
    }

    /// The validated wire value.
    pub fn as_wire(&self) -> &RuntimeManifest {
        &self.manifest
    }

    /// The fragments, in manifest order.
    pub fn fragments(&self) -> &[RuntimeFragment] {
        &self.manifest.fragments
    }

    /// The canonical descriptors, in manifest order.
    pub fn tensors(&self) -> &[TensorDescriptor] {
        &self.manifest.tensors
    }

    /// The owner of fragment `index`, if one was attached.
    pub fn owner(&self, index: usize) -> Option<&Owner> {
        self.owners.get(index).and_then(Option::as_ref)
    }

    /// The generation: as given, or derived from the fragments' common lease_generation.
    pub fn generation(&self) -> Option<u64> {
        self.manifest.generation
    }

    /// Where its lists were in the document it was read from (none for one built in
    /// memory).
    pub(crate) fn origin(&self) -> &Origin<'static> {
        &self.origin
    }
}

/// The top-level members of a runtime manifest as found (`root` locates their object).
pub(crate) struct RuntimeHeader<'v, 'a> {
    pub model_id: &'v Value<'a>,
    pub revision: &'v Value<'a>,
    pub instance_id: &'v Value<'a>,
    pub lease_id: Option<&'v Value<'a>>,
    pub placement_id: Option<&'v Value<'a>>,
    pub generation: Option<&'v Value<'a>>,
}

/// The header members of a runtime manifest, checked (§8.4 step 2).
#[derive(Clone, Copy)]
pub(crate) struct CheckedHeader<'v> {
    pub model_id: &'v str,
    pub revision: &'v str,
    pub instance_id: &'v str,
    pub lease_id: Option<&'v str>,
    pub placement_id: Option<&'v str>,
    pub generation: Option<u64>,
}

/// Checks the header members (§8.4 step 2).
pub(crate) fn check_header<'v>(
    root: &Path<'_>,
    header: &RuntimeHeader<'v, '_>,
) -> Result<CheckedHeader<'v>> {
    Ok(CheckedHeader {
        model_id: values::string(header.model_id, key::MODEL_ID, &root.key(key::MODEL_ID))?,
        revision: values::string(header.revision, key::REVISION, &root.key(key::REVISION))?,
        instance_id: values::string(
            header.instance_id,
            key::INSTANCE_ID,
            &root.key(key::INSTANCE_ID),
        )?,
        lease_id: values::opt_string(header.lease_id, key::LEASE_ID, &root.key(key::LEASE_ID))?,
        placement_id: values::opt_string(
            header.placement_id,
            "placement_id",
            &root.key(key::PLACEMENT_ID),
        )?,
        generation: values::opt_int(
            header.generation,
            key::GENERATION,
            0,
            &root.key(key::GENERATION),
        )?,
    })
}

/// §8.4 steps 2–9 on checked, canonical descriptors and checked fragments. `origin` says
/// where the tensors and fragments are in the document, in the order given; the box
/// searches spend at most `per_box` units per box (`max_geometry_work`).
pub(crate) fn construct_runtime(
    root: &Path<'_>,
    origin: Origin<'static>,
    header: &RuntimeHeader<'_, '_>,
    tensors: Vec<TensorDescriptor>,
    fragments: Vec<RuntimeFragment>,
    owners: Vec<Option<Owner>>,
    per_box: u64,
) -> Result<Runtime> {
    let header = check_header(root, header)?;
    let locate = |e: Error| e.locate(&origin, &Orders::default());
    let generation = derived_generation(root, header.generation, &fragments).map_err(locate)?;

    check_fragment_set(&tensors, fragments.len(), per_box, |i| {
        logical_fragment!(&fragments[i], fragment_id)
    })
    .map_err(locate)?;
    let mut by_id: FxHashMap<&str, &TensorDescriptor> = map_with_capacity(tensors.len());
    by_id.extend(tensors.iter().map(|t| (t.tensor_id.as_str(), t)));
    check_physical(header.instance_id, &fragments, &|id| by_id.get(id).copied()).map_err(locate)?;
    drop(by_id);

    Ok(assemble(
        &CheckedHeader {
            generation,
            ..header
        },
        origin,
        tensors,
        fragments,
        owners,
    ))
}

/// §8.4's generation: the fragments' one lease generation (none when there are no
/// fragments), which a given `generation` must equal.
fn derived_generation(
    root: &Path<'_>,
    generation: Option<u64>,
    fragments: &[RuntimeFragment],
) -> Result<Option<u64>> {
    let Some(first) = fragments.first().map(|f| f.lease_generation) else {
        return Ok(generation);
    };
    let lease = Site::fragment(0).member(key::LEASE_GENERATION);
    let mismatch = |expected: u64, got: u64| Detail::Mismatch {
        expected: expected.to_string(),
        got: got.to_string(),
        other: None,
    };
    if let Some(i) = fragments.iter().position(|f| f.lease_generation != first) {
        return Err(Error::at_site(
            Code::InconsistentLeaseGenerations,
            "runtime manifest has inconsistent lease generations",
            Site::fragment(i).member(key::LEASE_GENERATION),
        )
        .with_detail(mismatch(first, fragments[i].lease_generation))
        .with_other_site(lease));
    }
    match generation {
        Some(g) if g != first => Err(Error::at(
            Code::GenerationMismatch,
            "runtime manifest generation does not match fragment generation",
            &root.key(key::GENERATION),
        )
        .with_detail(mismatch(first, g))
        .with_other_site(lease)),
        _ => Ok(Some(first)),
    }
}

/// The runtime manifest of parts that passed every check of §8.4 (`header.generation` is
/// the manifest's: as given, or derived from the fragments' lease generation).
pub(crate) fn assemble(
    header: &CheckedHeader<'_>,
    origin: Origin<'static>,
    tensors: Vec<TensorDescriptor>,
    fragments: Vec<RuntimeFragment>,
    owners: Vec<Option<Owner>>,
) -> Runtime {
    let mut owners = owners;
    owners.resize(fragments.len(), None);
    Runtime {
        manifest: RuntimeManifest {
            fragments,
            generation: header.generation,
            instance_id: header.instance_id.to_owned(),
            lease_id: header.lease_id.map(str::to_owned),
            model_id: header.model_id.to_owned(),
            placement_id: header.placement_id.map(str::to_owned),
            revision: header.revision.to_owned(),
            tensors,
        },
        owners,
        origin,
    }
}
