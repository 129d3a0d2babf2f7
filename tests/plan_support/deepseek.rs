//! The DeepSeek-V3-like reshard workload: the performance workload's placement
//! (`weight_manifest_bench_data`, TP8/EP8/PP4/DP2) as the source, and the same model
//! laid out TP4/EP16/PP8/DP2 as the target.
//!
//! Target ranks: a non-expert fragment of TP rank g in stage p of replica d is on
//! (dp d, tp g, pp p, ep 0); routed expert e is whole on (dp d, tp 0, pp p, ep e / 16).

use weight_manifest::logical_fragment_id;
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest};
use weight_manifest_bench_data::{placement, tensors, Model, Split};

/// (tp, ep) and the box (offset, extent) a fragment holds.
type Held = ((u64, u64), (Vec<u64>, Vec<u64>));

/// The source: the performance workload, unchanged.
pub fn source() -> PlacementManifest {
    placement(&Model::deepseek_v3())
}

/// The target: TP4/EP16/PP8/DP2, with the descriptors of `source` (the shard dims of each
/// tensor are the same in both layouts).
pub fn target(source: &PlacementManifest) -> PlacementManifest {
    let (tp, ep, pp, dp) = (4u64, 16u64, 8u64, 2u64);
    let model = Model {
        tp,
        pp,
        dp,
        ..Model::deepseek_v3()
    };
    let experts_per_rank = model.experts / ep;
    let mut fragments = Vec::new();
    let layout = tensors(&model);
    for d in 0..dp {
        for t in &layout {
            let boxes: Vec<Held> = match t.split {
                Split::Expert(_) => vec![(
                    (0, t.expert.unwrap_or(0) / experts_per_rank),
                    (vec![0; t.shape.len()], t.shape.clone()),
                )],
                _ => (0..tp)
                    .filter_map(|g| t.box_on(g, tp).map(|b| ((g, 0), b)))
                    .collect(),
            };
            for ((g, e), (global_offset, local_shape)) in boxes {
                let nbytes = local_shape.iter().product::<u64>() * t.itemsize;
                let mut fragment = PlacementFragment {
                    aliases: Vec::new(),
                    global_offset,
                    local_shape,
                    nbytes,
                    placement_fragment_id: String::new(),
                    rank: ParallelRank {
                        dp: d,
                        ep: e,
                        pp: t.stage,
                        tp: g,
                    },
                    tensor_id: t.id.clone(),
                };
                fragment.placement_fragment_id = logical_fragment_id(&fragment);
                fragments.push(fragment);
            }
        }
    }
    PlacementManifest {
        fragments,
        model_id: source.model_id.clone(),
        placement_id: None,
        revision: source.revision.clone(),
        tensors: source.tensors.clone(),
    }
}
