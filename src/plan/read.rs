//! Reading a reshard plan document: the contract's JSON rules (§4), the plan schema's
//! members and types, then the plan_id recomputed from the contents.

use super::Plan;
use crate::canonical;
use crate::document::{self, check_id, typed_from_text, typed_from_tree, Document};
use crate::error::{Code, Result};
use crate::options::Options;
use crate::value::Value;
use crate::wire::key;
use crate::wire::members::reshard_plan_id;
use crate::wire::ReshardPlan;

/// The reshard plan as a document kind of the reading pipeline.
struct PlanDocument;

impl Document for PlanDocument {
    type Output = Plan;
    const LABEL: &'static str = "reshard plan";

    fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<Plan> {
        Plan::checked(typed_from_tree(
            tree,
            Self::LABEL,
            Code::PlanDocumentInvalid,
        )?)
    }

    fn from_text(text: &str, tree: Value<'_>, _: &Options<'_>) -> Result<Plan> {
        Plan::checked(typed_from_text(
            text,
            &tree,
            Self::LABEL,
            Code::PlanDocumentInvalid,
        )?)
    }
}

impl Plan {
    /// Reads a reshard plan document (the output of `weight-manifest plan`) strictly,
    /// under `options.limits` (size, depth, string length), and recomputes its plan_id.
    /// The plan keeps the canonical encoding of what it read. A plan read from JSON has no
    /// per-source-rank figures (the document names fragments, not ranks):
    /// [`PlanStats::sources`](super::PlanStats::sources) is empty.
    ///
    /// # Errors
    ///
    /// `invalid_json`, `non_finite_number`, `duplicate_key` or `limit_exceeded` (contract
    /// §4); `plan_document_invalid` when the document is not an object with exactly the
    /// plan schema's members and types; `plan_id_mismatch` when its plan_id is not the id
    /// of its contents.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Plan> {
        document::read::<PlanDocument>(text.as_ref(), options)
    }

    /// A plan from its typed wire value, whose plan_id must be the id of its contents
    /// (`plan_id_mismatch`).
    pub fn from_wire(plan: &ReshardPlan) -> Result<Plan> {
        Plan::checked(plan.clone())
    }

    /// The plan of `plan` once its plan_id is checked.
    fn checked(plan: ReshardPlan) -> Result<Plan> {
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
