//! A Store manifest ([`MooncakeStorageManifest`]) as this project's placement, so that the
//! planner can read stored weights as its source (upstream's
//! `plan_stored_transfer_to_target_placement`).
//!
//! A stored fragment has no rank: every fragment becomes one of rank (0, 0, 0, 0), keeping
//! its id, box, byte size and aliases, and each tensor's shard dims are the dims its stored
//! boxes cut. A Store manifest covers each tensor exactly once, so
//! each tile has one holder and any replica choice reads the same fragment, as upstream's.

use std::collections::{BTreeSet, HashMap};

use weight_manifest::error::Result;
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};
use weight_manifest::Placement;

use crate::convert::Imported;
use crate::storage::MooncakeStorageManifest;

/// Reads a Store manifest as our placement, every fragment on rank (0, 0, 0, 0); what ours
/// has no place for (namespace, group, keys, creation time, generation, object locations,
/// axes) is listed in [`Imported::dropped`].
///
/// # Errors
///
/// This project's placement codes, where our contract rejects what the Store accepts.
pub fn import_storage(m: &MooncakeStorageManifest) -> Result<Imported> {
    // The stored boxes are the layout of a one-rank placement: its shard dims are the dims
    // some box does not span (the writer's own shard dims describe its ranks, not these).
    let mut cut: HashMap<&str, BTreeSet<u64>> = HashMap::new();
    for f in &m.fragments {
        let dims = cut.entry(f.tensor_id.as_str()).or_default();
        let shape = m
            .tensors
            .iter()
            .find(|t| t.tensor_id == f.tensor_id)
            .map(|t| t.global_shape.as_slice());
        for (d, (&e, &s)) in f
            .local_shape
            .iter()
            .zip(shape.unwrap_or_default())
            .enumerate()
        {
            if e != s {
                dims.insert(d as u64);
            }
        }
    }
    let mut tensors: Vec<TensorDescriptor> = m
        .tensors
        .iter()
        .map(|t| {
            let shard_dims: Vec<u64> = cut
                .get(t.tensor_id.as_str())
                .map(|d| d.iter().copied().collect())
                .unwrap_or_default();
            TensorDescriptor {
                dtype: t.dtype.clone(),
                expert_id: t.expert_id,
                global_shape: t.global_shape.clone(),
                itemsize: t.itemsize,
                layer_id: t.layer_id,
                layout_fingerprint: t.layout_fingerprint.clone(),
                partition_dim: match shard_dims.as_slice() {
                    [only] => Some(*only),
                    _ => None,
                },
                shard_dims: Some(shard_dims),
                tensor_id: t.tensor_id.clone(),
            }
        })
        .collect();
    tensors.sort_by(|a, b| a.tensor_id.cmp(&b.tensor_id));
    let mut fragments: Vec<PlacementFragment> = m
        .fragments
        .iter()
        .map(|f| PlacementFragment {
            aliases: f.aliases.clone(),
            global_offset: f.global_offset.clone(),
            local_shape: f.local_shape.clone(),
            nbytes: f.nbytes,
            placement_fragment_id: f.fragment_id.clone(),
            rank: ParallelRank {
                dp: 0,
                ep: 0,
                pp: 0,
                tp: 0,
            },
            tensor_id: f.tensor_id.clone(),
        })
        .collect();
    fragments.sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
    let placement = Placement::from_wire(&PlacementManifest {
        fragments,
        model_id: m.resource_id.clone(),
        placement_id: None,
        revision: m.revision.clone(),
        tensors,
    })?;
    let dropped = vec![
        format!("namespace: {}", m.namespace),
        format!("group_id: {} (manifest_key {})", m.group_id, m.manifest_key),
        format!("weight_generation: {}", m.weight_generation),
        format!("created_at: {}", m.created_at),
        format!("manifest_digest: {}", m.digest()),
        format!(
            "object_key and object_offset of {} fragments",
            m.fragments.len()
        ),
        format!(
            "parallel_axes of {} tensors",
            m.tensors
                .iter()
                .filter(|t| !t.parallel_axes.is_empty())
                .count()
        ),
    ];
    Ok(Imported { placement, dropped })
}
