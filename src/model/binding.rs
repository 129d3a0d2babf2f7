//! RuntimeBindingManifest (contract §2.8) and its construction (§8.6).

use std::collections::HashSet;

use super::owner::Owner;
use crate::canonical;
use crate::check;
use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::value::Value;
use crate::wire::key;
use crate::wire::{RuntimeBindingFragment, RuntimeBindingManifest};

/// A validated runtime binding: where each fragment of one placement lives now, fenced
/// by a lease and a generation. Fragments are sorted by placement_fragment_id; owners are
/// carried beside them and excluded from equality.
#[derive(Clone, Debug)]
pub struct Binding {
    manifest: RuntimeBindingManifest,
    owners: Vec<Option<Owner>>,
}

impl PartialEq for Binding {
    fn eq(&self, other: &Self) -> bool {
        self.manifest == other.manifest
    }
}

impl Eq for Binding {}

impl Binding {
    /// The canonical JSON (§9.2).
    pub fn to_json(&self) -> String {
        canonical::to_string(&self.manifest)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
    }

    /// The validated wire value.
    pub fn as_wire(&self) -> &RuntimeBindingManifest {
        &self.manifest
    }

    /// The fragments, sorted by placement_fragment_id.
    pub fn fragments(&self) -> &[RuntimeBindingFragment] {
        &self.manifest.fragments
    }

    /// The owner of fragment `index` (in sorted order), if one was attached.
    pub fn owner(&self, index: usize) -> Option<&Owner> {
        self.owners.get(index).and_then(Option::as_ref)
    }
}

/// The top-level members of a binding as found (`root` locates their object).
pub(crate) struct BindingHeader<'v, 'a> {
    pub model_id: &'v Value<'a>,
    pub revision: &'v Value<'a>,
    pub placement_id: &'v Value<'a>,
    pub placement_digest: &'v Value<'a>,
    pub instance_id: &'v Value<'a>,
    pub lease_id: &'v Value<'a>,
    pub generation: &'v Value<'a>,
}

/// §8.6 steps 2–7 on checked fragments (`owners[i]` belongs to `fragments[i]`).
pub(crate) fn construct_binding(
    root: &Path<'_>,
    header: &BindingHeader<'_, '_>,
    fragments: Vec<RuntimeBindingFragment>,
    owners: Vec<Option<Owner>>,
) -> Result<Binding> {
    let mut paired: Vec<(RuntimeBindingFragment, Option<Owner>)> = fragments
        .into_iter()
        .zip(owners.into_iter().chain(std::iter::repeat(None)))
        .collect();
    paired.sort_by(|a, b| a.0.placement_fragment_id.cmp(&b.0.placement_fragment_id));
    let (fragments, owners): (Vec<_>, Vec<_>) = paired.into_iter().unzip();

    let at = |key: &'static str| root.key(key);
    let model_id = check::string(header.model_id, key::MODEL_ID, &at(key::MODEL_ID))?;
    let revision = check::string(header.revision, key::REVISION, &at(key::REVISION))?;
    let placement_id = check::string(
        header.placement_id,
        key::PLACEMENT_ID,
        &at(key::PLACEMENT_ID),
    )?;
    let instance_id = check::string(header.instance_id, key::INSTANCE_ID, &at(key::INSTANCE_ID))?;
    let lease_id = check::string(header.lease_id, key::LEASE_ID, &at(key::LEASE_ID))?;
    let placement_digest = check::string(
        header.placement_digest,
        "placement_digest",
        &at(key::PLACEMENT_DIGEST),
    )?;
    if !is_sha256_hex(placement_digest) {
        return Err(Error::at(
            Code::DigestFormat,
            "placement_digest must be a lowercase SHA-256 digest",
            &at(key::PLACEMENT_DIGEST),
        ));
    }
    let generation = check::int(header.generation, key::GENERATION, 0, &at(key::GENERATION))?;

    if fragments
        .windows(2)
        .any(|w| w[0].placement_fragment_id == w[1].placement_fragment_id)
    {
        return Err(Error::new(
            Code::DuplicateBindingFragment,
            "duplicate placement fragment in runtime binding",
        ));
    }
    let mut runtime_ids = HashSet::with_capacity(fragments.len());
    if !fragments
        .iter()
        .all(|f| runtime_ids.insert(f.fragment_id.as_str()))
    {
        return Err(Error::new(
            Code::DuplicateRuntimeFragmentId,
            "duplicate runtime fragment_id in runtime binding",
        ));
    }
    drop(runtime_ids);

    Ok(Binding {
        manifest: RuntimeBindingManifest {
            fragments,
            generation,
            instance_id: instance_id.to_owned(),
            lease_id: lease_id.to_owned(),
            model_id: model_id.to_owned(),
            placement_digest: placement_digest.to_owned(),
            placement_id: placement_id.to_owned(),
            revision: revision.to_owned(),
        },
        owners,
    })
}

/// Exactly 64 characters from `0-9a-f`.
fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
