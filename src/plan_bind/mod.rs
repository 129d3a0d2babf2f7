//! Binding a reshard plan to live runtimes: from an address-free [`Plan`] and the
//! runtime bindings of its two placements to the copy list a transfer engine executes.
//!
//! [`bind_plan`] checks that each binding locates the placement the plan names for its
//! side (placement_id, then digest) under the generation the caller expects, then gives
//! every region the absolute addresses of its first source and target byte, after
//! checking with checked arithmetic that the region's bytes lie inside both bound
//! fragments. The copies are grouped by (source worker, target worker), the unit a
//! transfer engine batches on; the result has a canonical encoding and a
//! `bound_plan_id` (`schema/bound-plan.schema.json`).
//!
//! Plans read from documents come from [`Plan::from_json`](crate::Plan::from_json), which
//! checks the plan_id.

mod check;
pub mod segments;
mod wire;

use std::collections::BTreeMap;

use crate::document::check_id;
use crate::error::{Code, Error, Result};
use crate::model::Binding;
use crate::plan::Plan;
use crate::wire::{key, writers};
use crate::wire::{BoundCopy, BoundPair, BoundPlan as BoundPlanWire};

pub use segments::{segments, Segments};

/// The generations the caller expects each binding to have; `None` accepts any.
/// A binding whose generation differs is stale (`plan_binding_generation_mismatch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fences {
    /// The generation the source binding must have.
    pub source_generation: Option<u64>,
    /// The generation the target binding must have.
    pub target_generation: Option<u64>,
}

/// A plan bound to live runtimes: its canonical text and typed wire value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundPlan {
    json: String,
    wire: BoundPlanWire,
}

impl BoundPlan {
    /// The bound plan of `wire` once its bound_plan_id is checked.
    pub(crate) fn checked(wire: BoundPlanWire) -> Result<BoundPlan> {
        let computed =
            writers::bound_plan_id(&wire.pairs, &wire.plan_id, &wire.source, &wire.target);
        check_id(
            "bound plan",
            key::BOUND_PLAN_ID,
            &wire.bound_plan_id,
            &computed,
            Code::BoundPlanIdMismatch,
        )?;
        Ok(BoundPlan {
            json: wire::encode(&wire),
            wire,
        })
    }

    /// `sha256:` + 64 hex digits over the canonical bound plan (see the schema).
    pub fn bound_plan_id(&self) -> &str {
        &self.wire.bound_plan_id
    }

    /// The typed wire value.
    pub fn as_wire(&self) -> &BoundPlanWire {
        &self.wire
    }

    /// The copies grouped by (source worker, target worker), in that order.
    pub fn pairs(&self) -> &[BoundPair] {
        &self.wire.pairs
    }

    /// The canonical encoding (contract §5).
    pub fn to_json(&self) -> String {
        self.json.clone()
    }

    /// The canonical encoding, without a copy.
    pub fn into_json(self) -> String {
        self.json
    }
}

/// Binds `plan` to the `source` and `target` runtime bindings.
///
/// Errors, in this order: for the source binding then the target binding,
/// `plan_binding_placement_id_mismatch`, `plan_binding_digest_mismatch`,
/// `plan_binding_generation_mismatch` (against `fences`); then per region in plan order,
/// `plan_document_invalid` (nbytes is not run_bytes times the loop counts),
/// `plan_binding_fragment_missing` (source fragment, then target fragment),
/// `plan_binding_range_invalid` (the region leaves a fragment, or an address or a
/// byte total does not fit in a u64).
pub fn bind_plan(
    plan: &Plan,
    source: &Binding,
    target: &Binding,
    fences: &Fences,
) -> Result<BoundPlan> {
    let plan = plan.as_wire();
    let source_side = check::side("source", &plan.source, source, fences.source_generation)?;
    let target_side = check::side("target", &plan.target, target, fences.target_generation)?;
    let mut groups: BTreeMap<(&str, &str), (u64, Vec<BoundCopy>)> = BTreeMap::new();
    for (index, region) in plan.regions.iter().enumerate() {
        check::region_size(index, region)?;
        let from = check::fragment("source", source, &region.source_fragment_id)?;
        let to = check::fragment("target", target, &region.target_fragment_id)?;
        let source_at = match region.transform {
            None => check::located(index, region, from, region.source_offset, true)?,
            Some(transform) => check::located_transformed(index, region, from, transform)?,
        };
        let target_at = check::located(index, region, to, region.target_offset, false)?;
        let group = groups
            .entry((from.worker_id.as_str(), to.worker_id.as_str()))
            .or_default();
        group.0 = group.0.checked_add(region.nbytes).ok_or_else(|| {
            Error::new(
                Code::PlanBindingRangeInvalid,
                format!(
                    "the bytes from worker {} to worker {} exceed 2^64-1",
                    from.worker_id, to.worker_id
                ),
            )
        })?;
        group.1.push(BoundCopy {
            loops: region.loops.clone(),
            nbytes: region.nbytes,
            run_bytes: region.run_bytes,
            source: source_at,
            source_fragment_id: region.source_fragment_id.clone(),
            target: target_at,
            target_fragment_id: region.target_fragment_id.clone(),
            tensor_id: region.tensor_id.clone(),
            transform: region.transform,
        });
    }
    let pairs = groups
        .into_iter()
        .map(|((s, t), (bytes, copies))| BoundPair {
            bytes,
            copies,
            source_worker_id: s.to_owned(),
            target_worker_id: t.to_owned(),
        })
        .collect();
    let (json, wire) = wire::finish(&plan.plan_id, source_side, target_side, pairs);
    Ok(BoundPlan { json, wire })
}
