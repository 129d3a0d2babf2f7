//! Mooncake's rules for runtime bindings against their placement
//! (`validate_runtime_binding` and `validate_runtime_bindings`), in upstream's order,
//! under this project's codes.

use std::collections::BTreeMap;

use weight_manifest::error::{Code, Error, Result};

use crate::binding::{canonical_strides, MooncakeBinding, MooncakeBindingFragment};
use crate::model::MooncakePlacement;
use crate::model::{Fragment, Tensor};
use crate::wire::key;
use weight_manifest::util::fxhash::FxHashMap as HashMap;

fn at(code: Code, message: impl Into<String>, pointer: String) -> Error {
    Error::new(code, message).with_pointer(Some(pointer))
}

/// One binding against the placement (`validate_runtime_binding`); `b` its position in
/// the list.
fn check_one(m: &MooncakePlacement, binding: &MooncakeBinding, b: usize) -> Result<()> {
    let root = format!("/{b}");
    let same = [
        (
            binding.resource_id == m.resource_id(),
            Code::ModelIdMismatch,
            "placement and runtime binding resource_id differ",
            key::RESOURCE_ID,
        ),
        (
            binding.placement_id == m.placement_id(),
            Code::BindingPlacementIdMismatch,
            "placement_id and runtime binding placement_id differ",
            key::PLACEMENT_ID,
        ),
        (
            binding.placement_digest == m.digest(),
            Code::DigestMismatch,
            "placement digest and runtime binding placement digest differ",
            key::PLACEMENT_DIGEST,
        ),
        (
            binding.revision == m.revision(),
            Code::RevisionMismatch,
            "placement and runtime binding revision differ",
            key::REVISION,
        ),
    ];
    if let Some((_, code, message, key)) = same.into_iter().find(|s| !s.0) {
        return Err(at(code, message, format!("{root}/{key}")));
    }
    let Some(part) = m
        .parts()
        .iter()
        .find(|p| p.participant_id == binding.participant_id)
    else {
        return Err(at(
            Code::MooncakeBindingParticipant,
            format!(
                "unknown runtime binding participant: {}",
                binding.participant_id
            ),
            format!("{root}/participant_id"),
        ));
    };
    let placed: HashMap<&str, &Fragment> = part
        .fragments
        .iter()
        .map(|f| (f.placement_fragment_id.as_str(), f))
        .collect();
    let bound: HashMap<&str, usize> = binding
        .fragments
        .iter()
        .enumerate()
        .map(|(i, f)| (f.placement_fragment_id.as_str(), i))
        .collect();
    // Both lists are sorted by placement_fragment_id: the first unknown or missing id.
    if let Some((i, f)) = binding
        .fragments
        .iter()
        .enumerate()
        .find(|(_, f)| !placed.contains_key(f.placement_fragment_id.as_str()))
    {
        return Err(at(
            Code::UnknownBindingFragment,
            format!(
                "unknown placement fragment in runtime binding: {}",
                f.placement_fragment_id
            ),
            format!("{root}/fragments/{i}/placement_fragment_id"),
        ));
    }
    if let Some(f) = part
        .fragments
        .iter()
        .find(|f| !bound.contains_key(f.placement_fragment_id.as_str()))
    {
        return Err(at(
            Code::MissingBindingFragment,
            format!(
                "missing placement fragment in runtime binding: {}",
                f.placement_fragment_id
            ),
            format!("{root}/fragments"),
        ));
    }
    let tensors: HashMap<&str, &Tensor> = m
        .tensors()
        .iter()
        .map(|t| (t.tensor_id.as_str(), t))
        .collect();
    for p in &part.fragments {
        let i = bound[p.placement_fragment_id.as_str()];
        let r = &binding.fragments[i];
        let ptr = format!("{root}/fragments/{i}");
        let id = &p.placement_fragment_id;
        if r.nbytes != p.nbytes {
            return Err(at(
                Code::BindingNbytesMismatch,
                format!("runtime binding byte size does not match placement: {id}"),
                format!("{ptr}/nbytes"),
            ));
        }
        if r.local_shape != p.local_shape {
            return Err(at(
                Code::MooncakeBindingInvalid,
                format!("runtime binding local_shape does not match placement: {id}"),
                format!("{ptr}/local_shape"),
            ));
        }
        let itemsize = tensors.get(p.tensor_id.as_str()).map_or(0, |t| t.itemsize);
        if r.itemsize != itemsize {
            return Err(at(
                Code::MooncakeBindingInvalid,
                format!("runtime binding itemsize does not match placement: {id}"),
                format!("{ptr}/itemsize"),
            ));
        }
        if canonical_strides(&p.local_shape, itemsize).as_ref() != Some(&r.strides_bytes) {
            return Err(at(
                Code::NonCanonicalStride,
                format!(
                    "runtime binding stride does not describe a canonical contiguous view: {id}"
                ),
                format!("{ptr}/strides_bytes"),
            ));
        }
    }
    let pairs: Vec<(&Fragment, &MooncakeBindingFragment, String)> = binding
        .fragments
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let p = placed.get(r.placement_fragment_id.as_str())?;
            Some((*p, r, format!("{root}/fragments/{i}")))
        })
        .collect();
    check_ranges(&binding.instance_id, &tensors, &pairs)
}

/// Whether two views are one declared alias: the same bytes, one alias group naming both
/// tensors, the same box and equal descriptors but for the name.
fn exact_alias(
    (lp, lb): (&Fragment, &MooncakeBindingFragment),
    (rp, rb): (&Fragment, &MooncakeBindingFragment),
    tensors: &HashMap<&str, &Tensor>,
) -> bool {
    let key = |id: &str| tensors.get(id).map(|t| t.alias_descriptor());
    lb.address == rb.address
        && lb.nbytes == rb.nbytes
        && lp.aliases.len() >= 2
        && lp.aliases == rp.aliases
        && lp.aliases.contains(&lp.tensor_id)
        && lp.aliases.contains(&rp.tensor_id)
        && lp.global_offset == rp.global_offset
        && lp.local_shape == rp.local_shape
        && key(&lp.tensor_id) == key(&rp.tensor_id)
}

/// No two views of one address space (instance, worker, device) overlap, unless they are
/// one declared alias; views in address order.
fn check_ranges(
    instance: &str,
    tensors: &HashMap<&str, &Tensor>,
    pairs: &[(&Fragment, &MooncakeBindingFragment, String)],
) -> Result<()> {
    let mut spaces: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, (_, b, _)) in pairs.iter().enumerate() {
        spaces.entry((&b.worker_id, &b.device)).or_default().push(i);
    }
    for ((worker, device), mut members) in spaces {
        members.sort_by_key(|&i| pairs[i].1.address);
        let mut active: Vec<usize> = Vec::new();
        for &i in &members {
            let (p, b, ptr) = &pairs[i];
            active.retain(|&j| {
                let prev = pairs[j].1;
                u128::from(prev.address) + u128::from(prev.nbytes) > u128::from(b.address)
            });
            if let Some(&j) = active
                .iter()
                .find(|&&j| !exact_alias((pairs[j].0, pairs[j].1), (p, b), tensors))
            {
                return Err(at(
                    Code::AddressOverlap,
                    format!(
                        "runtime binding address ranges overlap: {} and {} in ({instance}, {worker}, {device})",
                        pairs[j].1.fragment_id, b.fragment_id
                    ),
                    ptr.clone(),
                ));
            }
            active.push(i);
        }
    }
    Ok(())
}

/// Validates the complete set of bindings of a placement as upstream's
/// `validate_runtime_bindings` does: no participant twice, each binding against the
/// placement (identity, revision, a known participant, exactly its fragments, their byte
/// sizes, shapes, item sizes and canonical strides, no overlapping views), no overlapping
/// views across the bindings of one instance, then every participant with fragments
/// bound and no other. Pointers index the list (`/i/...`).
///
/// # Errors
///
/// `mooncake_binding_participant`, `model_id_mismatch` (resource_id),
/// `binding_placement_id_mismatch`, `digest_mismatch`, `revision_mismatch`,
/// `unknown_binding_fragment`, `missing_binding_fragment`, `binding_nbytes_mismatch`,
/// `mooncake_binding_invalid` (shape, item size), `non_canonical_stride`,
/// `address_overlap`.
pub fn validate_bindings(m: &MooncakePlacement, bindings: &[MooncakeBinding]) -> Result<()> {
    let mut names: Vec<(&str, usize)> = bindings
        .iter()
        .enumerate()
        .map(|(i, b)| (b.participant_id.as_str(), i))
        .collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(at(
            Code::MooncakeBindingParticipant,
            "duplicate runtime binding participant",
            format!("/{}/participant_id", w[1].1),
        ));
    }
    for (b, binding) in bindings.iter().enumerate() {
        check_one(m, binding, b)?;
    }
    let tensors: HashMap<&str, &Tensor> = m
        .tensors()
        .iter()
        .map(|t| (t.tensor_id.as_str(), t))
        .collect();
    let placed: HashMap<&str, &Fragment> = m
        .fragments()
        .map(|f| (f.placement_fragment_id.as_str(), f))
        .collect();
    let mut by_instance: BTreeMap<&str, Vec<(&Fragment, &MooncakeBindingFragment, String)>> =
        BTreeMap::new();
    for (b, binding) in bindings.iter().enumerate() {
        for (i, r) in binding.fragments.iter().enumerate() {
            if let Some(p) = placed.get(r.placement_fragment_id.as_str()) {
                by_instance.entry(&binding.instance_id).or_default().push((
                    p,
                    r,
                    format!("/{b}/fragments/{i}"),
                ));
            }
        }
    }
    for (instance, pairs) in &by_instance {
        check_ranges(instance, &tensors, pairs)?;
    }
    let bound: Vec<&str> = names.iter().map(|n| n.0).collect();
    if let Some(p) = m.parts().iter().find(|p| {
        !p.fragments.is_empty() && bound.binary_search(&p.participant_id.as_str()).is_err()
    }) {
        return Err(Error::at(
            Code::MooncakeBindingParticipant,
            format!("missing runtime binding participant: {}", p.participant_id),
            &weight_manifest::path::Path::Root,
        ));
    }
    if let Some(&(name, i)) = names.iter().find(|(name, _)| {
        !m.parts()
            .iter()
            .any(|p| !p.fragments.is_empty() && p.participant_id == *name)
    }) {
        return Err(at(
            Code::MooncakeBindingParticipant,
            format!("unknown runtime binding participant: {name}"),
            format!("/{i}/participant_id"),
        ));
    }
    Ok(())
}
