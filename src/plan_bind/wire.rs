//! The bound plan's identity and encoding: `bound_plan_id` is `sha256:` + SHA-256 of the
//! canonical encoding (contract §5) of the bound plan without `bound_plan_id` and with
//! `"schema":"weight-bound-plan"`, as placement_id is built (§7.1).

use crate::canonical;
use crate::wire::writers;
use crate::wire::{BoundPair, BoundPlan, BoundSide};

/// The canonical text and wire value of the bound plan with these members.
pub(super) fn finish(
    plan_id: &str,
    source: BoundSide,
    target: BoundSide,
    pairs: Vec<BoundPair>,
) -> (String, BoundPlan) {
    let wire = BoundPlan {
        bound_plan_id: writers::bound_plan_id(&pairs, plan_id, &source, &target),
        pairs,
        plan_id: plan_id.to_owned(),
        source,
        target,
    };
    (encode(&wire), wire)
}

/// The canonical encoding of a bound plan.
pub(super) fn encode(wire: &BoundPlan) -> String {
    canonical::to_string(wire)
        .unwrap_or_else(|e| unreachable!("bound plan members are encodable: {e}"))
}
