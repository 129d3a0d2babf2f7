//! Reading a reshard plan document: the contract's JSON rules (§4), the plan schema's
//! members and types, then the plan_id recomputed from the contents.

use serde::Serialize;

use crate::canonical;
use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::reader;
use crate::wire::{PlanPlacement, PlanRegion, ReshardPlan};

/// The literal schema tag of the plan_id payload (`schema/plan.schema.json`).
const PLAN_SCHEMA_TAG: &str = "weight-plan";

/// The hashed payload: the members of `ReshardPlan` but `plan_id`, plus `schema`, in
/// sorted order.
#[derive(Serialize)]
struct Payload<'a> {
    model_id: &'a str,
    regions: &'a [PlanRegion],
    revision: &'a str,
    schema: &'a str,
    source: &'a PlanPlacement,
    target: &'a PlanPlacement,
}

/// The plan_id of `plan`'s contents.
fn plan_id(plan: &ReshardPlan) -> String {
    let digest = canonical::hash(&Payload {
        model_id: &plan.model_id,
        regions: &plan.regions,
        revision: &plan.revision,
        schema: PLAN_SCHEMA_TAG,
        source: &plan.source,
        target: &plan.target,
    })
    .unwrap_or_else(|e| unreachable!("plan members are encodable: {e}"));
    format!("sha256:{}", canonical::hex(&digest))
}

/// Reads a reshard plan document (the output of `weight-manifest plan`) strictly.
///
/// # Errors
///
/// `invalid_json`, `non_finite_number` or `duplicate_key` (contract §4);
/// `plan_document_invalid` when the document is not an object with exactly the plan
/// schema's members and types; `plan_id_mismatch` when its plan_id is not the id of its
/// contents.
pub fn read_plan(text: &[u8]) -> Result<ReshardPlan> {
    read_plan_with_limits(text, &Limits::default())
}

/// [`read_plan`] with the document read under `limits` (size, depth, string length).
///
/// # Errors
///
/// As [`read_plan`], and `limit_exceeded`.
pub fn read_plan_with_limits(text: &[u8], limits: &Limits) -> Result<ReshardPlan> {
    let document = reader::read_with_limits(text, "reshard plan", limits)?;
    if document.as_object().is_none() {
        return Err(Error::new(
            Code::PlanDocumentInvalid,
            "a reshard plan must be a JSON object",
        ));
    }
    let plan: ReshardPlan = serde_json::from_slice(text).map_err(|e| {
        Error::new(
            Code::PlanDocumentInvalid,
            format!("not a reshard plan: {e}"),
        )
    })?;
    let computed = plan_id(&plan);
    if computed != plan.plan_id {
        return Err(Error::new(
            Code::PlanIdMismatch,
            format!(
                "the plan's plan_id is {}, its contents give {computed}",
                plan.plan_id
            ),
        ));
    }
    Ok(plan)
}
