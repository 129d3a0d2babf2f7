//! Coverage analysis: does a placement hold the whole model?
//!
//! For each tensor the fragments are grouped by distinct box (identical boxes on several
//! ranks are replicas). The tensor is `complete` when the distinct boxes tile it (pairwise
//! disjoint, volumes summing to the tensor's), has `gaps` when they are disjoint but leave
//! elements uncovered (the report gives the exact uncovered volume and the first uncovered
//! coordinate), and is `ambiguous` when two distinct boxes intersect. The same analysis
//! runs for the fragments of each DP value of the tensor alone (a DP value that holds no
//! fragment of a tensor is not listed: it covers nothing). Cost: O(ndim · n log n) over
//! all n fragments for grouping, volumes and gap search. A complete tensor is recognised
//! by its boxes' signed corners in time linear in its boxes whatever the number of split
//! axes (up to 12; `geometry::corners`). Only an incomplete tensor with more than 16
//! distinct boxes needs the shared §8.3 sweep to tell `gaps` from `ambiguous`; it runs on
//! the shared k-d index: O(n log n) on every real layout and on the slab layouts of
//! SECURITY.md, sub-quadratic in any dimension, and capped by `max_geometry_work`.
//!
//! Coverage is an analysis, not a validity rule (contract §17): every placement has a
//! report; [`Coverage::require_complete`] turns an incomplete one into an error.
//!
//! ```
//! let text = r#"{"fragments":[{"aliases":[],"global_offset":[0],"local_shape":[2],"nbytes":8,"placement_fragment_id":"a","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"w"}],"model_id":"m","placement_id":null,"revision":"r","tensors":[{"dtype":"f32","expert_id":null,"global_shape":[4],"itemsize":4,"layer_id":null,"layout_fingerprint":"fp","partition_dim":0,"shard_dims":[0],"tensor_id":"w"}]}"#;
//! let placement = weight_manifest::Placement::from_json(text, &weight_manifest::Options::default()).unwrap();
//! let coverage = weight_manifest::coverage(&placement, &weight_manifest::Limits::default()).unwrap();
//! assert!(!coverage.is_complete());
//! let tensor = &coverage.report().tensors[0];
//! assert_eq!(tensor.uncovered_coordinate, Some(vec![2]));
//! assert_eq!(tensor.uncovered_elements.as_deref(), Some("2"));
//! let error = coverage.require_complete().unwrap_err();
//! assert_eq!(error.code().as_str(), "coverage_incomplete");
//! ```

pub(crate) mod group;
mod report;

use std::fmt::Write as _;

use crate::canonical;
use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::model::Placement;
use crate::wire::{CoverageReport, CoverageStatus, CoverageTensor};

/// The coverage report of one placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    report: CoverageReport,
}

/// Analyses how the fragments of `placement` cover its tensors, its box searches within
/// `limits.max_geometry_work` (the other limits apply to reading).
///
/// # Errors
///
/// `limit_exceeded`, naming the first tensor (by tensor_id) whose analysis exceeds the
/// budget.
pub fn coverage(placement: &Placement, limits: &Limits) -> Result<Coverage> {
    analyse_all(placement, limits.max_geometry_work)
}

fn analyse_all(placement: &Placement, per_box: u64) -> Result<Coverage> {
    let fragments = placement.fragments();
    let groups = group::fragments_by_tensor(placement);
    let tensors: Vec<CoverageTensor> = placement
        .tensors()
        .iter()
        .enumerate()
        .map(|(t, tensor)| report::tensor_coverage(tensor, fragments, groups.get(t), per_box))
        .collect::<Result<_>>()?;
    let (complete, with_gaps, ambiguous) = status_counts(&tensors);
    Ok(Coverage {
        report: CoverageReport {
            digest: placement.digest().to_owned(),
            model_id: placement.model_id().to_owned(),
            placement_id: placement.placement_id().to_owned(),
            revision: placement.revision().to_owned(),
            tensors_ambiguous: ambiguous,
            tensors_complete: complete,
            tensors_with_gaps: with_gaps,
            tensors,
        },
    })
}

/// The numbers of complete, gapped and ambiguous tensors: what a report states in its
/// `tensors_*` members.
fn status_counts(tensors: &[CoverageTensor]) -> (u64, u64, u64) {
    let count = |s: CoverageStatus| tensors.iter().filter(|t| t.status == s).count() as u64;
    (
        count(CoverageStatus::Complete),
        count(CoverageStatus::Gaps),
        count(CoverageStatus::Ambiguous),
    )
}

impl Coverage {
    /// The coverage of a report read from a document, once its counts are checked.
    pub(crate) fn checked(report: CoverageReport) -> Result<Coverage> {
        let counted = status_counts(&report.tensors);
        let stated = (
            report.tensors_complete,
            report.tensors_with_gaps,
            report.tensors_ambiguous,
        );
        if counted != stated {
            return Err(Error::new(
                Code::CoverageDocumentInvalid,
                format!(
                    "the coverage report states {stated:?} complete, with gaps and ambiguous tensors; its tensors are {counted:?}"
                ),
            ));
        }
        Ok(Coverage { report })
    }

    /// The report (wire form).
    pub fn report(&self) -> &CoverageReport {
        &self.report
    }

    /// Whether every tensor is complete.
    pub fn is_complete(&self) -> bool {
        self.report
            .tensors
            .iter()
            .all(|t| t.status == CoverageStatus::Complete)
    }

    /// The report in the canonical encoding (contract §5): pure ASCII, no whitespace.
    pub fn to_json(&self) -> String {
        canonical::to_string(&self.report)
            .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
    }

    /// `Ok` when every tensor is complete; otherwise `coverage_incomplete`, naming the
    /// first incomplete tensor and what is wrong with it.
    pub fn require_complete(&self) -> Result<()> {
        let Some(first) = self
            .report
            .tensors
            .iter()
            .find(|t| t.status != CoverageStatus::Complete)
        else {
            return Ok(());
        };
        let incomplete = self.report.tensors_with_gaps + self.report.tensors_ambiguous;
        let message = format!(
            "placement coverage is incomplete: {incomplete} of {} tensors; first: {}",
            self.report.tensors.len(),
            describe(first)
        );
        Err(Error::new(Code::CoverageIncomplete, message))
    }
}

/// One line, for people, about how a tensor is covered: `tensor {id} has gaps: ...` or
/// `tensor {id} is ambiguous: ...` (`tensor {id} is complete` otherwise).
pub fn describe(tensor: &CoverageTensor) -> String {
    let mut text = format!("tensor {} ", tensor.tensor_id);
    match (
        &tensor.uncovered_coordinate,
        &tensor.uncovered_elements,
        tensor.overlap,
    ) {
        (Some(coordinate), Some(elements), _) => {
            let _ = write!(
                text,
                "has gaps: {elements} elements uncovered, the first at {coordinate:?}"
            );
        }
        (_, _, Some([a, b])) => {
            let show = |i: u64| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| tensor.boxes.get(i))
                    .map_or_else(String::new, |b| {
                        format!("offset {:?} shape {:?}", b.global_offset, b.local_shape)
                    })
            };
            let _ = write!(
                text,
                "is ambiguous: boxes {a} ({}) and {b} ({}) overlap",
                show(a),
                show(b)
            );
        }
        _ => {
            let _ = write!(text, "is {}", tensor.status);
        }
    }
    text
}
