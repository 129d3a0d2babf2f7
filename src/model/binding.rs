//! RuntimeBindingManifest (contract §2.8) and its construction (§8.6).

use std::collections::HashMap;

use super::owner::Owner;
use crate::canonical;
use crate::error::{Code, Detail, Error, Result};
use crate::locate::{Orders, Origin, Site};
use crate::path::Path;
use crate::rules::values;
use crate::util::order::sort_by_str_key;
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

/// §8.6 steps 2–7 on checked fragments (`owners[i]` belongs to `fragments[i]`). `origin`
/// says where the fragments are in the document, in the order given.
pub(crate) fn construct_binding(
    root: &Path<'_>,
    origin: &Origin<'_>,
    header: &BindingHeader<'_, '_>,
    fragments: Vec<RuntimeBindingFragment>,
    owners: Vec<Option<Owner>>,
) -> Result<Binding> {
    let mut paired: Vec<(RuntimeBindingFragment, Option<Owner>)> = fragments
        .into_iter()
        .zip(owners.into_iter().chain(std::iter::repeat(None)))
        .collect();
    // The input position of each fragment in placement_fragment_id order (stable).
    let order = sort_by_str_key(&mut paired, |p| &p.0.placement_fragment_id);
    let (fragments, owners): (Vec<_>, Vec<_>) = paired.into_iter().unzip();

    let at = |key: &'static str| root.key(key);
    let model_id = values::string(header.model_id, key::MODEL_ID, &at(key::MODEL_ID))?;
    let revision = values::string(header.revision, key::REVISION, &at(key::REVISION))?;
    let placement_id = values::string(
        header.placement_id,
        key::PLACEMENT_ID,
        &at(key::PLACEMENT_ID),
    )?;
    let instance_id = values::string(header.instance_id, key::INSTANCE_ID, &at(key::INSTANCE_ID))?;
    let lease_id = values::string(header.lease_id, key::LEASE_ID, &at(key::LEASE_ID))?;
    let placement_digest = values::string(
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
    let generation = values::int(header.generation, key::GENERATION, 0, &at(key::GENERATION))?;

    let orders = Orders {
        tensors: None,
        fragments: order.as_deref(),
    };
    let duplicate = |code, message: &str, key: &'static str, id: &str, (first, second)| {
        let at = |i| Site::fragment(i).member(key);
        Error::at_site(code, message, at(second))
            .with_detail(Detail::Duplicate {
                key: id.to_owned(),
                other: None,
            })
            .with_other_site(at(first))
            .locate(origin, &orders)
    };
    if let Some(i) = (1..fragments.len())
        .find(|&i| fragments[i - 1].placement_fragment_id == fragments[i].placement_fragment_id)
    {
        return Err(duplicate(
            Code::DuplicateBindingFragment,
            "duplicate placement fragment in runtime binding",
            key::PLACEMENT_FRAGMENT_ID,
            &fragments[i].placement_fragment_id,
            (i - 1, i),
        ));
    }
    let mut runtime_ids: HashMap<&str, usize> = HashMap::with_capacity(fragments.len());
    for (i, fragment) in fragments.iter().enumerate() {
        if let Some(&first) = runtime_ids.get(fragment.fragment_id.as_str()) {
            return Err(duplicate(
                Code::DuplicateRuntimeFragmentId,
                "duplicate runtime fragment_id in runtime binding",
                key::FRAGMENT_ID,
                &fragment.fragment_id,
                (first, i),
            ));
        }
        runtime_ids.insert(&fragment.fragment_id, i);
    }
    drop(runtime_ids);
    drop(order);

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
