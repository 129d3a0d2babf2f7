//! The bound plan's identity and encoding: `bound_plan_id` is `sha256:` + SHA-256 of the
//! canonical encoding (contract §5) of the bound plan without `bound_plan_id` and with
//! `"schema":"weight-bound-plan"`, as placement_id is built (§7.1).

use serde::Serialize;

use crate::canonical;
use crate::wire::{BoundPair, BoundPlan, BoundSide};

/// The literal schema tag of the bound_plan_id payload.
const BOUND_PLAN_SCHEMA_TAG: &str = "weight-bound-plan";

/// The hashed payload: the members of `BoundPlan` but `bound_plan_id`, plus `schema`,
/// in sorted order.
#[derive(Serialize)]
struct Payload<'a> {
    pairs: &'a [BoundPair],
    plan_id: &'a str,
    schema: &'a str,
    source: &'a BoundSide,
    target: &'a BoundSide,
}

/// The bound_plan_id of a bound plan with these members.
pub(super) fn bound_plan_id(
    plan_id: &str,
    source: &BoundSide,
    target: &BoundSide,
    pairs: &[BoundPair],
) -> String {
    // Only strings, u64s, arrays and structs with sorted fields: always encodable.
    let digest = canonical::hash(&Payload {
        pairs,
        plan_id,
        schema: BOUND_PLAN_SCHEMA_TAG,
        source,
        target,
    })
    .unwrap_or_else(|e| unreachable!("bound plan members are encodable: {e}"));
    format!("sha256:{}", canonical::hex(&digest))
}

/// The canonical text and wire value of the bound plan with these members.
pub(super) fn finish(
    plan_id: &str,
    source: BoundSide,
    target: BoundSide,
    pairs: Vec<BoundPair>,
) -> (String, BoundPlan) {
    let wire = BoundPlan {
        bound_plan_id: bound_plan_id(plan_id, &source, &target, &pairs),
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
