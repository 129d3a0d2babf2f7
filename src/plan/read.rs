//! A plan from its wire value: the plan_id recomputed from the contents (the document
//! kind that reads it is in `derived`).

use super::Plan;
use crate::canonical;
use crate::document::check_id;
use crate::error::{Code, Result};
use crate::wire::key;
use crate::wire::writers::reshard_plan_id;
use crate::wire::ReshardPlan;

impl Plan {
    /// A plan from its typed wire value, whose plan_id must be the id of its contents
    /// (`plan_id_mismatch`).
    pub fn from_wire(plan: &ReshardPlan) -> Result<Plan> {
        Plan::checked(plan.clone())
    }

    /// The plan of `plan` once its plan_id is checked.
    pub(crate) fn checked(plan: ReshardPlan) -> Result<Plan> {
        let computed = reshard_plan_id(
            &plan.model_id,
            &plan.regions,
            &plan.revision,
            &plan.source,
            &plan.target,
        );
        check_id(
            "plan",
            key::PLAN_ID,
            &plan.plan_id,
            &computed,
            Code::PlanIdMismatch,
        )?;
        let json = canonical::to_string(&plan)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"));
        Ok(Plan::read(json, plan))
    }
}
