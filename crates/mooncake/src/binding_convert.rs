//! Conversion between this project's one runtime binding of a placement
//! ([`RuntimeBindingManifest`]) and Mooncake's per-participant bindings
//! ([`MooncakeBinding`]), through the Mooncake placement, whose parts name the
//! participants and whose fragment ids are ours (the export keeps them, §20.7).

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::wire::key;
use weight_manifest::wire::{RuntimeBindingFragment, RuntimeBindingManifest};
use weight_manifest::{Binding, Placement};

use crate::binding::{canonical_strides, MooncakeBinding, MooncakeBindingFragment};
use crate::binding_check::validate_bindings;
use crate::convert::import;
use crate::model::MooncakePlacement;
use weight_manifest::util::fxhash::FxHashMap as HashMap;

fn inexpressible(message: String, pointer: String) -> Error {
    Error::new(Code::MooncakeBindingInexpressible, message).with_pointer(Some(pointer))
}

/// Our placement of `m` (its import), which our binding must locate.
fn ours(m: &MooncakePlacement) -> Result<Placement> {
    Ok(import(m)?.placement)
}

/// Writes our binding as Mooncake's, one binding per participant with fragments, in
/// participant order. Each view is contiguous with canonical strides, and its storage is
/// the view itself (`storage_address = address`, `storage_nbytes = nbytes`, offset 0):
/// our binding manifest says nothing of the allocation around a view. The result is
/// validated by upstream's rules ([`validate_bindings`]).
///
/// # Errors
///
/// Our binding's own codes (it is read as a binding of `m`'s import, §12: model,
/// revision, placement_id, digest, exactly its fragments, byte sizes), then those of
/// [`validate_bindings`].
pub fn export_binding(binding: &Binding, m: &MooncakePlacement) -> Result<Vec<MooncakeBinding>> {
    let placement = ours(m)?;
    weight_manifest::bind(&placement, binding)?;
    let binding = binding.as_wire();
    let views: HashMap<&str, &RuntimeBindingFragment> = binding
        .fragments
        .iter()
        .map(|f| (f.placement_fragment_id.as_str(), f))
        .collect();
    let itemsize: HashMap<&str, u64> = m
        .tensors()
        .iter()
        .map(|t| (t.tensor_id.as_str(), t.itemsize))
        .collect();
    let digest = m.digest();
    let mut out = Vec::new();
    for part in m.parts().iter().filter(|p| !p.fragments.is_empty()) {
        let mut fragments = Vec::with_capacity(part.fragments.len());
        for f in &part.fragments {
            let Some(view) = views.get(f.placement_fragment_id.as_str()) else {
                continue;
            };
            let size = itemsize.get(f.tensor_id.as_str()).copied().unwrap_or(1);
            let strides = canonical_strides(&f.local_shape, size).ok_or_else(|| {
                inexpressible(
                    format!(
                        "the strides of {} do not fit in 64 bits",
                        f.placement_fragment_id
                    ),
                    "/fragments".to_owned(),
                )
            })?;
            fragments.push(MooncakeBindingFragment {
                address: view.address,
                device: view.device.clone(),
                endpoint: view.endpoint.clone(),
                fragment_id: view.fragment_id.clone(),
                itemsize: size,
                local_shape: f.local_shape.clone(),
                nbytes: view.nbytes,
                placement_fragment_id: f.placement_fragment_id.clone(),
                storage_address: view.address,
                storage_nbytes: view.nbytes,
                storage_offset_bytes: 0,
                strides_bytes: strides,
                worker_id: view.worker_id.clone(),
            });
        }
        out.push(MooncakeBinding {
            fragments,
            generation: binding.generation,
            instance_id: binding.instance_id.clone(),
            lease_id: binding.lease_id.clone(),
            participant_id: part.participant_id.clone(),
            placement_digest: digest.clone(),
            placement_id: m.placement_id().to_owned(),
            resource_id: m.resource_id().to_owned(),
            resource_kind: "model_weight".to_owned(),
            revision: m.revision().to_owned(),
        });
    }
    validate_bindings(m, &out)?;
    Ok(out)
}

/// Mooncake's bindings of `m` as ours, and what ours has no place for.
#[derive(Clone, Debug)]
pub struct ImportedBinding {
    /// Our binding of `m`'s import.
    pub binding: RuntimeBindingManifest,
    /// One line per member dropped (participant ids, strides, storage bounds).
    pub dropped: Vec<String>,
}

/// Reads Mooncake's per-participant bindings of `m` as our one binding of `m`'s import:
/// the union of their fragments, under the identity they share. They are validated by
/// upstream's rules first ([`validate_bindings`]).
///
/// # Errors
///
/// Those of [`validate_bindings`]; `mooncake_binding_inexpressible` when the bindings
/// differ in instance_id, generation or lease_id (ours has one of each) or when there
/// is none; our binding's codes.
pub fn import_binding(
    bindings: &[MooncakeBinding],
    m: &MooncakePlacement,
) -> Result<ImportedBinding> {
    validate_bindings(m, bindings)?;
    let Some(first) = bindings.first() else {
        return Err(inexpressible(
            "no runtime binding to import".to_owned(),
            String::new(),
        ));
    };
    for (i, b) in bindings.iter().enumerate() {
        for (key, same) in [
            (key::INSTANCE_ID, b.instance_id == first.instance_id),
            (key::GENERATION, b.generation == first.generation),
            (key::LEASE_ID, b.lease_id == first.lease_id),
        ] {
            if !same {
                return Err(inexpressible(
                    format!(
                        "runtime bindings differ in {key} ({} and {}): this project's binding has one",
                        first.participant_id, b.participant_id
                    ),
                    format!("/{i}/{key}"),
                ));
            }
        }
    }
    let placement = ours(m)?;
    let mut fragments: Vec<RuntimeBindingFragment> = bindings
        .iter()
        .flat_map(|b| &b.fragments)
        .map(|f| RuntimeBindingFragment {
            address: f.address,
            device: f.device.clone(),
            endpoint: f.endpoint.clone(),
            fragment_id: f.fragment_id.clone(),
            nbytes: f.nbytes,
            placement_fragment_id: f.placement_fragment_id.clone(),
            worker_id: f.worker_id.clone(),
        })
        .collect();
    fragments.sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
    let binding = RuntimeBindingManifest {
        fragments,
        generation: first.generation,
        instance_id: first.instance_id.clone(),
        lease_id: first.lease_id.clone(),
        model_id: placement.model_id().to_owned(),
        placement_digest: placement.digest().to_owned(),
        placement_id: placement.placement_id().to_owned(),
        revision: placement.revision().to_owned(),
    };
    weight_manifest::bind(&placement, &Binding::from_wire(&binding)?)?;
    let views = bindings.iter().map(|b| b.fragments.len()).sum::<usize>();
    let offset = bindings
        .iter()
        .flat_map(|b| &b.fragments)
        .filter(|f| f.storage_offset_bytes != 0 || f.storage_nbytes != f.nbytes)
        .count();
    let names: Vec<&str> = bindings.iter().map(|b| b.participant_id.as_str()).collect();
    let dropped = vec![
        format!("participant_id of {} bindings: {}", names.len(), names.join(", ")),
        format!(
            "placement_id {} and placement_digest {} (Mooncake's; ours are {} and {})",
            first.placement_id,
            first.placement_digest,
            placement.placement_id(),
            placement.digest()
        ),
        format!("itemsize, local_shape and strides_bytes of {views} views (canonical)"),
        format!(
            "storage_address, storage_nbytes and storage_offset_bytes of {views} views ({offset} inside a larger allocation)"
        ),
    ];
    Ok(ImportedBinding { binding, dropped })
}
