//! The plan in Mooncake's region form (contract §20.9): what upstream's
//! `plan_placement_transfer` (a placement as the source) and
//! `plan_stored_transfer_to_target_placement` (a Store manifest as the source) return, one
//! [`MooncakeRegion`] per overlap of a target fragment with the source tile it reads.
//!
//! The regions are this project's planner's (§17.3) with Mooncake's replica choice
//! ([`MooncakeReplicas`]); only their spelling is upstream's (`overlap_offset`,
//! `source_base_offset`, `inner_bytes`, `outer_loop_counts`, ...).

use serde::Serialize;
use weight_manifest::error::Result;
use weight_manifest::{plan_with_choice, Options, Placement, PlanLimits, ReplicaChoice};

use crate::choice::MooncakeReplicas;
use crate::convert::import;
use crate::format::is_mooncake_store;
use crate::generation::check_generations;
use crate::model::MooncakePlacement;
use crate::storage::MooncakeStorageManifest;
use crate::stored::import_storage;

/// One region of a Mooncake transfer plan, in upstream's `TransferRegion` terms: copy
/// `product(outer_loop_counts)` runs of `inner_bytes`, the k-th loop stepping the source by
/// `source_strides[k]` and the target by `target_strides[k]` bytes (outermost first), from
/// `source_base_offset` in the source fragment's buffer to `target_base_offset` in the
/// target fragment's.
/// Its fields are declared in sorted order, as the canonical encoder requires.
#[derive(Clone, Debug, Eq, PartialEq, Serialize)]
pub struct MooncakeRegion {
    /// Bytes of one contiguous run.
    pub inner_bytes: u64,
    /// The outer loops' iteration counts, outermost first.
    pub outer_loop_counts: Vec<u64>,
    /// The overlap's first element in the tensor's global coordinates.
    pub overlap_offset: Vec<u64>,
    /// The overlap's extent on each axis.
    pub overlap_shape: Vec<u64>,
    /// Byte offset of the overlap's first element in the source fragment's buffer.
    pub source_base_offset: u64,
    /// The source fragment read: its placement_fragment_id (a Store manifest's
    /// fragment_id for a stored source).
    pub source_fragment_id: String,
    /// The source position's step per iteration of each outer loop.
    pub source_strides: Vec<u64>,
    /// Byte offset of the overlap's first element in the target fragment's buffer.
    pub target_base_offset: u64,
    /// The target fragment written (its placement_fragment_id).
    pub target_fragment_id: String,
    /// The target position's step per iteration of each outer loop.
    pub target_strides: Vec<u64>,
    /// The tensor both fragments belong to.
    pub tensor_id: String,
}

/// The source of a Mooncake transfer: a placement of live workers or a Store manifest.
#[derive(Clone, Copy, Debug)]
pub enum MooncakeSource<'a> {
    /// A `WeightPlacementManifest` (upstream's `plan_placement_transfer`).
    Placement(&'a MooncakePlacement),
    /// A Store `WeightManifest` (upstream's `plan_stored_transfer_to_target_placement`).
    Store(&'a MooncakeStorageManifest),
}

/// Plans the transfer from `source` to `target` as upstream does and gives its regions in
/// Mooncake's form, ordered by target_fragment_id, then overlap_offset (element-wise,
/// numerically), which is the order upstream returns them in.
///
/// Steps, in order: both sides imported (§20.7, §20.9); when they name one model and
/// revision, their weight_generations compared (`mooncake_generation_mismatch` at the
/// target's `/weight_generation`); then this planner (§17.3) with Mooncake's replica
/// choice (a Store manifest holds each tile once, so any choice reads the same fragment).
///
/// # Errors
///
/// The import's codes (a placement this contract cannot hold), the generation check's, and
/// the planner's (`plan_model_mismatch`, `plan_tensor_mismatch`, `plan_uncovered_tensor`,
/// `plan_limit_exceeded`).
pub fn plan_transfer(
    source: MooncakeSource<'_>,
    target: &MooncakePlacement,
    limits: &PlanLimits,
) -> Result<Vec<MooncakeRegion>> {
    let (ours_source, replicas, generation): (Placement, Option<MooncakeReplicas>, u64) =
        match source {
            MooncakeSource::Placement(p) => (
                import(p)?.placement,
                Some(MooncakeReplicas::new(p)),
                p.weight_generation(),
            ),
            MooncakeSource::Store(s) => (import_storage(s)?.placement, None, s.weight_generation),
        };
    let ours_target = import(target)?.placement;
    if ours_source.model_id() == ours_target.model_id()
        && ours_source.revision() == ours_target.revision()
    {
        check_generations(Some(generation), Some(target.weight_generation()))?;
    }
    let choice = replicas
        .as_ref()
        .map_or(ReplicaChoice::Balanced, |r| ReplicaChoice::Policy(r));
    let plan = plan_with_choice(&ours_source, &ours_target, limits, choice)?;
    let mut regions: Vec<MooncakeRegion> = plan
        .regions()
        .iter()
        .map(|r| MooncakeRegion {
            tensor_id: r.tensor_id.clone(),
            source_fragment_id: r.source_fragment_id.clone(),
            target_fragment_id: r.target_fragment_id.clone(),
            overlap_offset: r.global_offset.clone(),
            overlap_shape: r.shape.clone(),
            source_base_offset: r.source_offset,
            target_base_offset: r.target_offset,
            inner_bytes: r.run_bytes,
            outer_loop_counts: r.loops.iter().map(|l| l.count).collect(),
            source_strides: r.loops.iter().map(|l| l.source_stride).collect(),
            target_strides: r.loops.iter().map(|l| l.target_stride).collect(),
        })
        .collect();
    regions.sort_by(|a, b| {
        (&a.target_fragment_id, &a.overlap_offset).cmp(&(&b.target_fragment_id, &b.overlap_offset))
    });
    Ok(regions)
}

/// [`plan_transfer`] on texts (the `mooncake.plan` conformance operation): `source` is a
/// Store manifest when it has a `manifest_key` member, else a placement; `target` is a
/// placement. The source is read first, then the target (§20.3, §20.6); the regions are
/// written as a canonical JSON array (§5).
///
/// # Errors
///
/// The readers' codes (pointers into the document read), then those of
/// [`plan_transfer`].
pub fn plan_transfer_json(
    source: &[u8],
    target: &[u8],
    options: &Options<'_>,
    limits: &PlanLimits,
) -> Result<String> {
    let regions = if is_mooncake_store(source) {
        let s = MooncakeStorageManifest::from_json(source, options)?;
        let t = MooncakePlacement::from_json(target, options)?;
        plan_transfer(MooncakeSource::Store(&s), &t, limits)?
    } else {
        let s = MooncakePlacement::from_json(source, options)?;
        let t = MooncakePlacement::from_json(target, options)?;
        plan_transfer(MooncakeSource::Placement(&s), &t, limits)?
    };
    Ok(regions_to_json(&regions))
}

/// The regions as a canonical JSON array (§5: sorted keys, no whitespace).
pub fn regions_to_json(regions: &[MooncakeRegion]) -> String {
    weight_manifest::canonical::to_string(regions).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{regions_to_json, MooncakeRegion};

    #[test]
    fn a_region_is_written_canonically_with_upstreams_names() {
        let region = MooncakeRegion {
            inner_bytes: 8,
            outer_loop_counts: vec![4],
            overlap_offset: vec![0, 4],
            overlap_shape: vec![4, 4],
            source_base_offset: 0,
            source_fragment_id: "s\u{e9}".to_owned(),
            source_strides: vec![8],
            target_base_offset: 8,
            target_fragment_id: "t".to_owned(),
            target_strides: vec![16],
            tensor_id: "w".to_owned(),
        };
        assert_eq!(
            regions_to_json(&[region]),
            "[{\"inner_bytes\":8,\"outer_loop_counts\":[4],\"overlap_offset\":[0,4],\
             \"overlap_shape\":[4,4],\"source_base_offset\":0,\"source_fragment_id\":\"s\\u00e9\",\
             \"source_strides\":[8],\"target_base_offset\":8,\"target_fragment_id\":\"t\",\
             \"target_strides\":[16],\"tensor_id\":\"w\"}]"
        );
    }
}
