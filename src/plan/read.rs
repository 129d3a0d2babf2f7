//! Reading a reshard plan document: the contract's JSON rules (§4), the plan schema's
//! members and types, then the plan_id recomputed from the contents.

use serde::Serialize;

use super::{wire, Plan};
use crate::canonical::{self, Sink};
use crate::error::{Code, Error, Result};
use crate::options::Options;
use crate::wire::read_typed;
use crate::wire::ReshardPlan;

/// Encodes a plan member canonically into `sink`.
fn encode<T: Serialize + ?Sized, S: Sink + ?Sized>(value: &T, sink: &mut S) {
    // Plan members hold only strings, u64s, arrays and structs with sorted fields.
    canonical::write(value, sink)
        .unwrap_or_else(|e| unreachable!("plan members are encodable: {e}"));
}

/// The plan_id of `plan`'s contents ([`wire::plan_id`], as the writer computes it).
fn plan_id(plan: &ReshardPlan) -> String {
    let mut parts: [Vec<u8>; 4] = Default::default();
    encode(&plan.model_id, &mut parts[0]);
    encode(&plan.revision, &mut parts[1]);
    encode(&plan.source, &mut parts[2]);
    encode(&plan.target, &mut parts[3]);
    let [model_id, revision, source, target] = &parts;
    let members = wire::EncodedMembers {
        model_id,
        revision,
        source,
        target,
    };
    wire::plan_id(&members, |sink| encode(&plan.regions, sink))
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
        let plan: ReshardPlan = read_typed(
            text.as_ref(),
            "reshard plan",
            &options.limits,
            Code::PlanDocumentInvalid,
        )?;
        Plan::checked(plan)
    }

    /// A plan from its typed wire value, whose plan_id must be the id of its contents
    /// (`plan_id_mismatch`).
    pub fn from_wire(plan: &ReshardPlan) -> Result<Plan> {
        Plan::checked(plan.clone())
    }

    /// The plan of `plan` once its plan_id is checked.
    fn checked(plan: ReshardPlan) -> Result<Plan> {
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
        let json = canonical::to_string(&plan)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"));
        Ok(Plan::read(json, plan))
    }
}
