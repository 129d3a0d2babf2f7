//! Runtime bindings for test placements: each fragment on a chosen (worker, device),
//! laid out one after the other with a gap, from a per-device base address.

use std::collections::HashMap;

use weight_manifest::wire::{RuntimeBindingFragment, RuntimeBindingManifest};
use weight_manifest::{Binding, Placement};

/// Where a fragment lives: (worker_id, device).
pub type Site = (String, String);

/// The site `(worker, device)`.
pub fn site(worker: &str, device: &str) -> Site {
    (worker.to_owned(), device.to_owned())
}

/// The binding manifest of `placement` in instance `instance` under `generation`: each
/// fragment at the site `locate` gives it, after the previous fragments of that site,
/// 64-byte aligned with a 64-byte gap, from base 0x10_0000.
pub fn manifest(
    placement: &Placement,
    instance: &str,
    generation: u64,
    locate: &mut dyn FnMut(usize, &weight_manifest::wire::PlacementFragment) -> Site,
) -> RuntimeBindingManifest {
    let mut next: HashMap<Site, u64> = HashMap::new();
    let fragments = placement
        .fragments()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (worker, device) = locate(i, f);
            let at = next
                .entry((worker.clone(), device.clone()))
                .or_insert(0x10_0000);
            let address = *at;
            *at = (address + f.nbytes + 64).div_ceil(64) * 64;
            RuntimeBindingFragment {
                address,
                device,
                endpoint: format!("{worker}.{instance}:7000"),
                fragment_id: format!("rt/{}", f.placement_fragment_id),
                nbytes: f.nbytes,
                placement_fragment_id: f.placement_fragment_id.clone(),
                worker_id: worker,
            }
        })
        .collect();
    RuntimeBindingManifest {
        fragments,
        generation,
        instance_id: instance.to_owned(),
        lease_id: format!("lease-{instance}-{generation}"),
        model_id: placement.model_id().to_owned(),
        placement_digest: placement.digest().to_owned(),
        placement_id: placement.placement_id().to_owned(),
        revision: placement.revision().to_owned(),
    }
}

/// The validated binding of a manifest.
pub fn validated(manifest: &RuntimeBindingManifest) -> Binding {
    Binding::from_wire(manifest).unwrap_or_else(|e| panic!("{e}"))
}

/// The binding of `placement` with each fragment's site given by `locate`.
pub fn binding(
    placement: &Placement,
    instance: &str,
    locate: &mut dyn FnMut(usize, &weight_manifest::wire::PlacementFragment) -> Site,
) -> Binding {
    validated(&manifest(placement, instance, 1, locate))
}

/// The binding with one worker per rank (`{instance}-dp{dp}-tp{tp}-pp{pp}-ep{ep}`) on
/// `cuda:0`.
pub fn per_rank(placement: &Placement, instance: &str) -> Binding {
    binding(placement, instance, &mut |_, f| {
        let r = &f.rank;
        site(
            &format!("{instance}-dp{}-tp{}-pp{}-ep{}", r.dp, r.tp, r.pp, r.ep),
            "cuda:0",
        )
    })
}
