//! The documents this implementation derives and reads back (§17.2–§17.4, §17.7): a
//! coverage report, a reshard plan, a bound plan, a held fence, a quantization spec. Each is a [`Typed`] document kind of the reading
//! pipeline (the strict reader, serde for the schema's members and types, then the id or
//! counts recomputed from the contents), with its type's `from_json`.

use crate::coverage::Coverage;
use crate::document::{self, Typed};
use crate::error::{Code, Result};
use crate::options::Options;
use crate::plan::Plan;
use crate::plan_bind::BoundPlan;
use crate::wire::{BoundPlan as BoundPlanWire, CoverageReport, HeldFence, ReshardPlan};

/// The reshard plan as a document kind of the reading pipeline.
struct PlanDocument;

impl Typed for PlanDocument {
    type Output = Plan;
    type Wire = ReshardPlan;
    const LABEL: &'static str = "reshard plan";
    const INVALID: Code = Code::PlanDocumentInvalid;

    fn checked(plan: ReshardPlan) -> Result<Plan> {
        Plan::checked(plan)
    }
}

impl Plan {
    /// Reads a reshard plan document (the output of `weight-manifest plan`) strictly,
    /// under `options.limits` (size, depth, string length), and recomputes its plan_id.
    /// The plan keeps the canonical encoding of what it read. A plan read from JSON has no
    /// per-source-rank figures (the document names fragments, not ranks):
    /// [`PlanStats::sources`](crate::plan::PlanStats::sources) is empty.
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
}

/// The bound plan as a document kind of the reading pipeline.
struct BoundPlanDocument;

impl Typed for BoundPlanDocument {
    type Output = BoundPlan;
    type Wire = BoundPlanWire;
    const LABEL: &'static str = "bound plan";
    const INVALID: Code = Code::BoundPlanDocumentInvalid;

    fn checked(wire: BoundPlanWire) -> Result<BoundPlan> {
        BoundPlan::checked(wire)
    }
}

impl BoundPlan {
    /// Reads a bound plan document (the output of `weight-manifest plan-bind`) strictly,
    /// under `options.limits`, and recomputes its bound_plan_id: what an executor that
    /// receives a copy list from a coordinator checks before it moves a byte. The bound
    /// plan keeps the canonical encoding of what it read.
    ///
    /// # Errors
    ///
    /// The reader's errors (contract §4) and `limit_exceeded`;
    /// `bound_plan_document_invalid` when the document is not an object with exactly the
    /// bound plan schema's members and types; `bound_plan_id_mismatch` when its
    /// bound_plan_id is not the id of its contents.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<BoundPlan> {
        document::read::<BoundPlanDocument>(text.as_ref(), options)
    }
}

/// The coverage report as a document kind of the reading pipeline.
struct CoverageDocument;

impl Typed for CoverageDocument {
    type Output = Coverage;
    type Wire = CoverageReport;
    const LABEL: &'static str = "coverage report";
    const INVALID: Code = Code::CoverageDocumentInvalid;

    fn checked(report: CoverageReport) -> Result<Coverage> {
        Coverage::checked(report)
    }
}

impl Coverage {
    /// Reads a coverage report document (the output of `weight-manifest coverage`)
    /// strictly, under `options.limits`.
    ///
    /// # Errors
    ///
    /// The reader's errors (contract §4) and `limit_exceeded`; `coverage_document_invalid`
    /// when the document is not an object with exactly the coverage schema's members and
    /// types, or when its three tensor counts are not the counts of its tensors by status.
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Coverage> {
        document::read::<CoverageDocument>(text.as_ref(), options)
    }
}

/// The held fence document (§17.7, `schema/fence.schema.json`) as a document kind of the
/// reading pipeline; [`crate::fence::read_held`] reads it.
pub(crate) struct HeldFenceDocument;

impl Typed for HeldFenceDocument {
    type Output = HeldFence;
    type Wire = HeldFence;
    const LABEL: &'static str = "held fence";
    const INVALID: Code = Code::FenceDocumentInvalid;

    fn checked(fence: HeldFence) -> Result<HeldFence> {
        Ok(fence)
    }
}

/// The quantization spec (§17.8, `schema/quantization.schema.json`) as a document kind of
/// the reading pipeline; [`crate::plan::Quantization::from_json`] reads it.
pub(crate) struct QuantizationDocument;

impl Typed for QuantizationDocument {
    type Output = crate::plan::Quantization;
    type Wire = crate::wire::QuantizationSpec;
    const LABEL: &'static str = "quantization spec";
    const INVALID: Code = Code::QuantizationDocumentInvalid;

    fn checked(spec: crate::wire::QuantizationSpec) -> Result<crate::plan::Quantization> {
        crate::plan::Quantization::from_wire(spec)
    }
}

impl crate::plan::Quantization {
    /// Reads a quantization spec (contract §17.8, `schema/quantization.schema.json`)
    /// strictly, under `options.limits`.
    ///
    /// # Errors
    ///
    /// The reader's errors (contract §4), `limit_exceeded`; `quantization_document_invalid`
    /// when it is not an object with exactly the schema's members and types, then the
    /// errors of [`crate::plan::Quantization::from_wire`].
    pub fn from_json(
        text: impl AsRef<[u8]>,
        options: &Options<'_>,
    ) -> Result<crate::plan::Quantization> {
        document::read::<QuantizationDocument>(text.as_ref(), options)
    }
}
