//! The coverage of one tensor: its distinct boxes, how they cover it, and how each DP
//! replica alone covers it.

use crate::error::Result;
use crate::geometry::{analyse, Tiling, Work};
use crate::wire::{
    CoverageBox, CoverageDp, CoverageStatus, CoverageTensor, PlacementFragment, TensorDescriptor,
};

use super::group::{box_refs, distinct_boxes};

/// The status of a tiling analysis.
pub(crate) fn status(tiling: &Tiling) -> CoverageStatus {
    match tiling {
        Tiling::Complete => CoverageStatus::Complete,
        Tiling::Gaps { .. } => CoverageStatus::Gaps,
        Tiling::Ambiguous { .. } => CoverageStatus::Ambiguous,
    }
}

/// How the fragments `members` (indices into `fragments`, all of `tensor`) cover it, and
/// how the fragments of each DP value among them cover it alone. The analyses share one
/// budget: `per_box` units for each box of the tensor and each of its DP values
/// (`None`: unlimited); `limit_exceeded` naming the tensor when it runs out.
pub(crate) fn tensor_coverage(
    tensor: &TensorDescriptor,
    fragments: &[PlacementFragment],
    members: &[usize],
    per_box: u64,
) -> Result<CoverageTensor> {
    let mut work = Work::new(per_box, members.len().saturating_mul(2));
    let exhausted = |e: crate::geometry::Exhausted| e.error("coverage analysis", &tensor.tensor_id);
    let boxes = distinct_boxes(fragments, members.iter().copied());
    let refs = box_refs(fragments, &boxes);
    let tiling = analyse(&tensor.global_shape, &refs, &mut work).map_err(exhausted)?;
    let mut by_dp = members.to_vec();
    by_dp.sort_by_key(|&i| fragments[i].rank.dp);
    let dp = by_dp
        .chunk_by(|&a, &b| fragments[a].rank.dp == fragments[b].rank.dp)
        .map(|group| {
            let own = distinct_boxes(fragments, group.iter().copied());
            let tiling = analyse(&tensor.global_shape, &box_refs(fragments, &own), &mut work);
            Ok(CoverageDp {
                dp: fragments[group[0]].rank.dp,
                status: status(&tiling.map_err(exhausted)?),
            })
        })
        .collect::<Result<Vec<CoverageDp>>>()?;
    let (overlap, uncovered_coordinate, uncovered_elements) = match &tiling {
        Tiling::Complete => (None, None, None),
        Tiling::Gaps { uncovered, first } => {
            (None, Some(first.clone()), Some(uncovered.to_decimal()))
        }
        Tiling::Ambiguous { first, second } => (Some([*first as u64, *second as u64]), None, None),
    };
    Ok(CoverageTensor {
        boxes: boxes
            .iter()
            .zip(&refs)
            .map(|(b, r)| CoverageBox {
                global_offset: r.offset.to_vec(),
                local_shape: r.extent.to_vec(),
                replicas: b.members.len() as u64,
            })
            .collect(),
        dp,
        overlap,
        status: status(&tiling),
        tensor_id: tensor.tensor_id.clone(),
        uncovered_coordinate,
        uncovered_elements,
    })
}
