//! A runtime inventory template (contract §10.3) for a placement: placeholder workers and
//! addresses, for tests and demos. Reading it back and projecting it gives the placement.

use std::collections::BTreeMap;

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::inventory::row_major_strides;
use weight_manifest::wire::{
    InventoryRank, ParallelRank, RuntimeInventory, RuntimeInventoryRecord,
};
use weight_manifest::Placement;

use super::fuse::{Fusion, RankKey};

/// The first placeholder address of every worker.
pub const BASE_ADDRESS: u64 = 0x1_0000;
/// Every placeholder address is a multiple of this.
pub const ALIGNMENT: u64 = 256;
/// The instance_id of a template.
pub const INSTANCE_ID: &str = "template";
/// The lease_id of a template.
pub const LEASE_ID: &str = "template-lease";

/// The placeholder worker of a rank: `worker-dp{d}-pp{p}-tp{t}-ep{e}`.
pub fn worker_id(rank: &ParallelRank) -> String {
    format!(
        "worker-dp{}-pp{}-tp{}-ep{}",
        rank.dp, rank.pp, rank.tp, rank.ep
    )
}

fn overflow() -> Error {
    Error::new(
        Code::AdaptGridInvalid,
        "the placeholder addresses of one worker do not fit in 64 bits",
    )
}

/// A runtime inventory holding `placement` at generation 0: one worker per rank, device
/// `cuda:0`, each worker's fragments packed from [`BASE_ADDRESS`] in placement order (each
/// start aligned to [`ALIGNMENT`]), fragment_id equal to the placement_fragment_id, every
/// view contiguous with offsets 0. The placement_id is included, so a projection checks it.
///
/// # Errors
///
/// `adapt_grid_invalid` when a worker's addresses or a stride overflow 64 bits.
pub fn runtime_inventory_template(placement: &Placement) -> Result<RuntimeInventory> {
    runtime_inventory_template_fused(placement, &Fusion::default())
}

/// [`runtime_inventory_template`] with the members of each fused buffer of `fusion` inside
/// one allocation: the buffer starts where its first fragment in placement order would
/// (aligned to [`ALIGNMENT`]) and is as long as its members together; each member's
/// address is its offset in the buffer past that start, which is its byte_offset
/// (storage_offset in elements), and its alias is the buffer's name. Reading it back needs
/// `address_semantics` "view" when some offset is not 0.
///
/// # Errors
///
/// `adapt_grid_invalid` when a worker's addresses or a stride overflow 64 bits;
/// `adapt_fused_invalid` when the fused buffers do not fit the placement's fragments.
pub fn runtime_inventory_template_fused(
    placement: &Placement,
    fusion: &Fusion,
) -> Result<RuntimeInventory> {
    let buffers = fusion.buffers(placement.fragments())?;
    // fragment position -> (buffer key, offset in the buffer)
    let mut in_buffer: BTreeMap<usize, ((RankKey, String), u64)> = BTreeMap::new();
    for (key, buffer) in &buffers {
        for &(position, offset) in &buffer.members {
            in_buffer.insert(position, (key.clone(), offset));
        }
    }
    let mut starts: BTreeMap<(RankKey, String), u64> = BTreeMap::new();
    let descriptors: BTreeMap<&str, _> = placement
        .tensors()
        .iter()
        .map(|t| (t.tensor_id.as_str(), t))
        .collect();
    let mut next: BTreeMap<String, u64> = BTreeMap::new();
    let mut records = Vec::with_capacity(placement.fragments().len());
    for (position, fragment) in placement.fragments().iter().enumerate() {
        let Some(descriptor) = descriptors.get(fragment.tensor_id.as_str()) else {
            continue; // unreachable: a valid placement names only its own tensors (§8.2 F3)
        };
        let worker = worker_id(&fragment.rank);
        let cursor = next.entry(worker.clone()).or_insert(BASE_ADDRESS);
        let (address, byte_offset, aliases) = match in_buffer.get(&position) {
            None => {
                let address = *cursor;
                *cursor = address
                    .checked_add(fragment.nbytes)
                    .and_then(|end| end.checked_next_multiple_of(ALIGNMENT))
                    .ok_or_else(overflow)?;
                (address, 0, None)
            }
            Some((key, offset)) => {
                let start = if let Some(&start) = starts.get(key) {
                    start
                } else {
                    let start = *cursor;
                    *cursor = start
                        .checked_add(buffers[key].bytes)
                        .and_then(|end| end.checked_next_multiple_of(ALIGNMENT))
                        .ok_or_else(overflow)?;
                    starts.insert(key.clone(), start);
                    start
                };
                let address = start.checked_add(*offset).ok_or_else(overflow)?;
                (address, *offset, Some(vec![key.1.clone()]))
            }
        };
        let rank = &fragment.rank;
        records.push(RuntimeInventoryRecord {
            address,
            aliases,
            byte_offset,
            device: "cuda:0".to_owned(),
            dtype: descriptor.dtype.clone(),
            endpoint: format!("placeholder://{worker}"),
            expert_id: descriptor.expert_id,
            fragment_id: fragment.placement_fragment_id.clone(),
            global_offset: fragment.global_offset.clone(),
            global_shape: descriptor.global_shape.clone(),
            is_contiguous: true,
            itemsize: descriptor.itemsize,
            layer_id: descriptor.layer_id,
            layout_fingerprint: descriptor.layout_fingerprint.clone(),
            lease_generation: 0,
            local_shape: fragment.local_shape.clone(),
            nbytes: fragment.nbytes,
            partition_dim: descriptor.partition_dim,
            placement_fragment_id: Some(fragment.placement_fragment_id.clone()),
            rank: InventoryRank {
                dp: rank.dp,
                ep: rank.ep,
                pp: rank.pp,
                tp: rank.tp,
            },
            shard_dims: descriptor.shard_dims.clone(),
            storage_offset: byte_offset / descriptor.itemsize.max(1),
            stride: row_major_strides(&fragment.local_shape).ok_or_else(overflow)?,
            tensor_id: fragment.tensor_id.clone(),
            worker_id: worker,
        });
    }
    Ok(RuntimeInventory {
        generation: 0,
        instance_id: INSTANCE_ID.to_owned(),
        lease_id: Some(LEASE_ID.to_owned()),
        model_id: placement.model_id().to_owned(),
        placement_id: Some(placement.placement_id().to_owned()),
        revision: placement.revision().to_owned(),
        tensors: records,
    })
}
