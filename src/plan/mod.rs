//! The N-D reshard planner: how to move a model's weights from one placement (say
//! training TP8/PP4) to another (inference TP4/PP8).
//!
//! [`plan`] checks that both placements describe the same model and tensors (only the
//! shard dims may differ), selects a source cover for every tensor the target holds,
//! intersects each target fragment with the source tiles through an index, and emits one
//! compact, strided [`PlanRegion`] per overlap. A region reads
//! from one replica of its tile: one with the target's DP rank when there is one, else the
//! least-loaded (bytes read so far) in rank order. Limits are checked by a counting pass
//! before any region is built; regions are then encoded straight into the canonical text,
//! without a per-region allocation. The same inputs give the same plan, byte for byte.
//!
//! ```
//! use weight_manifest::{plan, Options, Placement, PlanLimits};
//! let placement = |frags: &str, dim: u64| {
//!     Placement::from_json(format!(r#"{{"fragments":[{frags}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{{"dtype":"u8","expert_id":null,"global_shape":[2,4],"itemsize":1,"layer_id":null,"layout_fingerprint":"fp","partition_dim":{dim},"shard_dims":null,"tensor_id":"w"}}]}}"#), &Options::default()).unwrap()
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
mod pending;
mod quantize;
mod read;
mod region;
mod replica;
mod spread;
mod walk;
mod wire;

use std::sync::OnceLock;

use crate::error::Result;
use crate::model::Placement;
use crate::wire::{ParallelRank, PlanRegion, ReshardPlan};

pub use limits::{PlanLimits, DEFAULT_MAX_REGIONS, DEFAULT_MAX_SEGMENTS};
pub use quantize::{Quantization, BLOCK as QUANTIZATION_BLOCK};
pub use replica::{ReplicaChoice, ReplicaPolicy};
pub use spread::SourceHosts;

/// A reshard plan: its canonical text, its plan_id and its statistics. The typed wire
/// value is read from the text on first use ([`Plan::as_wire`], [`Plan::regions`]).
#[derive(Clone, Debug)]
pub struct Plan {
    json: String,
    id: String,
    stats: PlanStats,
    wire: OnceLock<ReshardPlan>,
}

impl PartialEq for Plan {
    /// Plans are equal when their canonical texts are.
    fn eq(&self, other: &Plan) -> bool {
        self.json == other.json
    }
}

impl Eq for Plan {}

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
    plan_with_progress(source, target, limits, |_, _| {})
}

/// [`plan`], reporting how far the search for overlaps has come: `walked(done, total)` is
/// called after each tensor the target holds, with the tensors searched so far and their
/// number (only once the pair has been checked and covered, so never for a pair rejected
/// before the search). For a progress display; the plan is the same as [`plan`]'s, which
/// passes a no-op `walked` that is inlined away.
pub fn plan_with_progress(
    source: &Placement,
    target: &Placement,
    limits: &PlanLimits,
    mut walked: impl FnMut(usize, usize),
) -> Result<Plan> {
    plan_within(
        source,
        target,
        limits,
        &mut walked,
        ReplicaChoice::Balanced,
        None,
    )
}

/// [`plan`] with the target quantizing in flight (contract §17.8): the tensors
/// `quantization` names are bfloat16 in the source and block FP8 in the target, and their
/// scale tensors the target's alone. Their regions carry a `transform`: the source sends
/// its fragment's FP8 values and block scales, which it computes. With no tensors named,
/// the plan is [`plan`]'s.
///
/// # Errors
///
/// `plan_model_mismatch`, then the quantization's (`quantization_tensor_missing`,
/// `quantization_unsupported`, `quantization_scale_missing`,
/// `quantization_scale_invalid`, `quantization_block_cut`, each pointing into the spec),
/// then as [`plan`].
pub fn plan_quantized(
    source: &Placement,
    target: &Placement,
    quantization: &Quantization,
    limits: &PlanLimits,
) -> Result<Plan> {
    plan_within(
        source,
        target,
        limits,
        &mut |_, _| {},
        ReplicaChoice::Balanced,
        Some(quantization),
    )
}

/// [`plan`] with the replica choice `choice` ([`ReplicaChoice::Balanced`] is [`plan`]).
///
/// # Errors
///
/// As [`plan`].
pub fn plan_with_choice(
    source: &Placement,
    target: &Placement,
    limits: &PlanLimits,
    choice: ReplicaChoice<'_>,
) -> Result<Plan> {
    plan_within(source, target, limits, &mut |_, _| {}, choice, None)
}

/// [`plan_with_progress`] with the replica choice `choice`.
fn plan_within(
    source: &Placement,
    target: &Placement,
    limits: &PlanLimits,
    walked: &mut impl FnMut(usize, usize),
    choice: ReplicaChoice<'_>,
    quantization: Option<&Quantization>,
) -> Result<Plan> {
    let walk = walk::Walk::prepare(source, target, limits.max_geometry_work, quantization)?;
    // A policy (Mooncake's) may read a target's tiles from one source DP replica, chosen
    // by the target's dp.
    let source_dp = |dp: u64| choice.source_dp(dp);
    // Count first, keeping the overlaps compactly (bounded by the limits): nothing is
    // built until every limit has held.
    let mut budget = limits::Budget::new(*limits);
    // Usually about one overlap per target fragment (a TP merge or split adds a few);
    // never more reserved than the limit admits.
    let expected = target
        .fragments()
        .len()
        .min(usize::try_from(limits.max_regions).unwrap_or(usize::MAX));
    let mut pending = pending::Pending::with_capacity(expected, 2);
    walk.run(
        &mut |overlap| {
            budget.add(overlap.geometry.segments)?;
            pending.push(overlap);
            Ok(())
        },
        walked,
        &source_dp,
    )?;

    let (sources, targets) = (source.fragments(), target.fragments());
    let mut loads = replica::Loads::default();
    let mut writer = wire::Writer::new(source, target, budget.regions);
    let mut bytes = 0u128;
    // The spread choice looks at every region before it chooses any.
    let spread = match choice {
        ReplicaChoice::Spread(hosts) => {
            let items: Vec<spread::Item<'_>> = pending
                .iter()
                .map(|o| spread::Item {
                    replicas: o.replicas,
                    nbytes: o.nbytes,
                })
                .collect();
            Some(spread::spread(sources, &items, hosts))
        }
        _ => None,
    };
    for (at, overlap) in pending.iter().enumerate() {
        let target = &targets[overlap.target];
        let policy = match &spread {
            Some(spread) => Some(spread[at]),
            None => choice.choose(sources, overlap.replicas, target.rank.dp),
        };
        let chosen = match policy {
            Some(chosen) => {
                loads.charge(sources, chosen, overlap.nbytes);
                chosen
            }
            None => loads.choose(sources, overlap.replicas, target.rank.dp, overlap.nbytes),
        };
        bytes += u128::from(overlap.nbytes);
        writer.region(&wire::RegionView {
            global_offset: overlap.global_offset,
            loops: overlap.loops,
            nbytes: overlap.nbytes,
            run_bytes: overlap.run_bytes,
            shape: overlap.shape,
            source_fragment_id: &sources[chosen].placement_fragment_id,
            source_offset: overlap.source_offset,
            target_fragment_id: &target.placement_fragment_id,
            target_offset: overlap.target_offset,
            tensor_id: &overlap.tensor.tensor_id,
            transform: overlap.transform,
        });
    }
    drop(pending);
    let (json, plan_id) = writer.finish();
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
    Ok(Plan {
        json,
        id: plan_id,
        stats,
        wire: OnceLock::new(),
    })
}

impl Plan {
    /// `sha256:` + 64 hex digits over the canonical plan (see the schema).
    pub fn plan_id(&self) -> &str {
        &self.id
    }

    /// The regions, in plan order (read from the text on first use).
    pub fn regions(&self) -> &[PlanRegion] {
        &self.as_wire().regions
    }

    /// The typed wire value (read from the text on first use).
    pub fn as_wire(&self) -> &ReshardPlan {
        self.wire.get_or_init(|| {
            serde_json::from_str(&self.json)
                .unwrap_or_else(|e| unreachable!("the plan text is a ReshardPlan: {e}"))
        })
    }

    /// Totals and per-source-rank figures.
    pub fn stats(&self) -> &PlanStats {
        &self.stats
    }

    /// The plan in the canonical encoding (contract §5): pure ASCII, no whitespace.
    pub fn to_json(&self) -> String {
        self.json.clone()
    }

    /// The canonical encoding, without a copy.
    pub fn into_json(self) -> String {
        self.json
    }

    /// A plan read from a document: its canonical text and wire value, with the totals
    /// the regions give (no per-source-rank figures: the document names no ranks).
    /// A hostile document's counts saturate here; binding checks each region exactly.
    fn read(json: String, wire: ReshardPlan) -> Plan {
        let mut stats = PlanStats::default();
        for region in &wire.regions {
            let runs = region
                .loops
                .iter()
                .fold(1u64, |n, l| n.saturating_mul(l.count));
            stats.regions += 1;
            stats.segments = stats.segments.saturating_add(runs);
            stats.bytes += u128::from(region.nbytes);
        }
        Plan {
            json,
            id: wire.plan_id.clone(),
            stats,
            wire: OnceLock::from(wire),
        }
    }
}
