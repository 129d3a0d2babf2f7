//! The N-D reshard planner: how to move a model's weights from one placement (say
//! training TP8/PP4) to another (inference TP4/PP8).
//!
//! [`plan`] checks that both placements describe the same model and tensors (only the
//! shard dims may differ), selects a source cover for every tensor the target holds,
//! intersects each target fragment with the source tiles through an index, and emits one
//! compact, strided [`PlanRegion`] per overlap. A region reads
//! from one replica of its tile: one with the target's DP rank when there is one, else the
//! least-loaded (bytes read so far) in rank order. Limits are checked by a counting pass
//! before any region is built. The same inputs give the same plan, byte for byte.
//!
//! ```
//! use weight_manifest::{plan, Placement, PlanLimits};
//! let placement = |frags: &str, dim: u64| {
//!     Placement::from_json(format!(r#"{{"fragments":[{frags}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{{"dtype":"u8","expert_id":null,"global_shape":[2,4],"itemsize":1,"layer_id":null,"layout_fingerprint":"fp","partition_dim":{dim},"shard_dims":null,"tensor_id":"w"}}]}}"#)).unwrap()
//! };
//! let fragment = |id: &str, offset: [u64; 2], shape: [u64; 2], tp: u64| {
//!     format!(r#"{{"aliases":[],"global_offset":{offset:?},"local_shape":{shape:?},"nbytes":4,"placement_fragment_id":"{id}","rank":{{"dp":0,"ep":0,"pp":0,"tp":{tp}}},"tensor_id":"w"}}"#)
//! };
//! // Source splits rows, target splits columns.
//! let source = placement(&[fragment("s0", [0, 0], [1, 4], 0), fragment("s1", [1, 0], [1, 4], 1)].join(","), 0);
//! let target = placement(&[fragment("t0", [0, 0], [2, 2], 0), fragment("t1", [0, 2], [2, 2], 1)].join(","), 1);
//! let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
//! assert_eq!(plan.regions().len(), 4);
//! let first = &plan.regions()[0];
//! assert_eq!((first.source_fragment_id.as_str(), first.target_fragment_id.as_str()), ("s0", "t0"));
//! assert_eq!((first.source_offset, first.target_offset, first.run_bytes), (0, 0, 2));
//! assert!(plan.plan_id().starts_with("sha256:"));
//! ```

mod check;
mod cover;
mod limits;
mod region;
mod replica;
mod walk;
mod wire;

use crate::error::Result;
use crate::model::Placement;
use crate::wire::{ParallelRank, PlanRegion, ReshardPlan};

pub use limits::{PlanLimits, DEFAULT_MAX_REGIONS, DEFAULT_MAX_SEGMENTS};

/// A reshard plan and its statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    wire: ReshardPlan,
    json: String,
    stats: PlanStats,
}

/// What a plan moves, in total and per source rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanStats {
    /// Number of regions.
    pub regions: u64,
    /// Number of contiguous runs over all regions.
    pub segments: u64,
    /// Bytes copied over all regions.
    pub bytes: u128,
    /// Per source rank read from, in rank order (dp, tp, pp, ep).
    pub sources: Vec<SourceRankStats>,
}

/// What a plan reads from one source rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRankStats {
    /// The source rank.
    pub rank: ParallelRank,
    /// Regions that read from it.
    pub regions: u64,
    /// Bytes read from it.
    pub bytes: u128,
}

/// Plans the move from `source` to `target` within `limits`.
///
/// Errors, in this order: `plan_model_mismatch`, `plan_tensor_mismatch`,
/// `plan_uncovered_tensor` (first tensor by tensor_id), `plan_limit_exceeded`.
pub fn plan(source: &Placement, target: &Placement, limits: &PlanLimits) -> Result<Plan> {
    let walk = walk::Walk::prepare(source, target)?;
    // Count first: the overlaps (bounded by the limits) are kept, and no region is built
    // until every limit has held.
    let mut budget = limits::Budget::new(*limits);
    let mut overlaps = Vec::new();
    walk.run(&mut |overlap| {
        budget.add(overlap.geometry.segments)?;
        overlaps.push(overlap);
        Ok(())
    })?;

    let (sources, targets) = (source.fragments(), target.fragments());
    let mut loads = replica::Loads::default();
    let mut bytes = 0u128;
    let regions: Vec<PlanRegion> = overlaps
        .into_iter()
        .map(|overlap| {
            let g = overlap.geometry;
            let target = &targets[overlap.target];
            let chosen = loads.choose(sources, overlap.replicas, target.rank.dp, g.nbytes);
            bytes += u128::from(g.nbytes);
            PlanRegion {
                global_offset: g.global_offset,
                loops: g.loops,
                nbytes: g.nbytes,
                run_bytes: g.run_bytes,
                shape: g.shape,
                source_fragment_id: sources[chosen].placement_fragment_id.clone(),
                source_offset: g.source_offset,
                target_fragment_id: target.placement_fragment_id.clone(),
                target_offset: g.target_offset,
                tensor_id: overlap.tensor.tensor_id.clone(),
            }
        })
        .collect();
    let stats = PlanStats {
        regions: budget.regions,
        segments: budget.segments,
        bytes,
        sources: loads
            .into_sorted()
            .into_iter()
            .map(|(rank, regions, bytes)| SourceRankStats {
                rank,
                regions,
                bytes,
            })
            .collect(),
    };
    let built = wire::build(source, target, regions);
    Ok(Plan {
        wire: built.wire,
        json: built.json,
        stats,
    })
}

impl Plan {
    /// `sha256:` + 64 hex digits over the canonical plan (see the schema).
    pub fn plan_id(&self) -> &str {
        &self.wire.plan_id
    }

    /// The regions, in plan order.
    pub fn regions(&self) -> &[PlanRegion] {
        &self.wire.regions
    }

    /// The wire value.
    pub fn as_wire(&self) -> &ReshardPlan {
        &self.wire
    }

    /// Totals and per-source-rank figures.
    pub fn stats(&self) -> &PlanStats {
        &self.stats
    }

    /// The plan in the canonical encoding (contract §5): pure ASCII, no whitespace.
    pub fn to_json(&self) -> String {
        self.json.clone()
    }

    /// The canonical text without a copy (see [`Plan::to_json`]).
    pub fn as_json(&self) -> &str {
        &self.json
    }
}
