//! Same-rank box overlap (contract §8.3): fragments of one tensor on one rank must not
//! intersect; replicas on different ranks may. Each group's sweep spends at most
//! `max_geometry_work` units per box ([`Work`]); a group that exhausts it is
//! `limit_exceeded`, naming its tensor.

use std::collections::HashMap;

use crate::error::{Code, Detail, Error, Result};
use crate::geometry::{first_intersection, BoxRef, Work};
use crate::locate::Site;
use crate::rules::logical::LogicalFragment;
use crate::wire::ParallelRank;

/// Groups by (tensor_id, rank) in order of first appearance and sweeps each group at
/// `per_box` units per box.
pub(crate) fn check_box_overlap(fragments: &[LogicalFragment<'_>], per_box: u64) -> Result<()> {
    let mut group_of: HashMap<(&str, &ParallelRank), usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, fragment) in fragments.iter().enumerate() {
        let next = groups.len();
        let group = *group_of
            .entry((fragment.tensor_id, fragment.rank))
            .or_insert(next);
        if group == next {
            groups.push(Vec::new());
        }
        groups[group].push(i);
    }
    for members in groups.iter().filter(|m| m.len() > 1) {
        let boxes: Vec<BoxRef<'_>> = members
            .iter()
            .map(|&i| BoxRef {
                offset: fragments[i].global_offset,
                extent: fragments[i].local_shape,
            })
            .collect();
        let mut work = Work::new(per_box, boxes.len());
        let found = first_intersection(&boxes, &mut work)
            .map_err(|e| e.error("same-rank overlap search", fragments[members[0]].tensor_id))?;
        if let Some((first, second)) = found {
            let (a, b) = (&fragments[members[first]], &fragments[members[second]]);
            return Err(Error::at_site(
                Code::FragmentOverlap,
                format!(
                    "logical fragment boxes overlap for tensor and parallel rank: {} and {}",
                    a.id, b.id
                ),
                Site::fragment(members[second]),
            )
            .with_detail(common_region(a, b))
            .with_other_site(Site::fragment(members[first])));
        }
    }
    Ok(())
}

/// The region two intersecting boxes both cover (each axis: the later start to the
/// earlier end; the ends fit in u64, F5 having passed).
fn common_region(a: &LogicalFragment<'_>, b: &LogicalFragment<'_>) -> Detail {
    let axes = a.global_offset.iter().zip(a.local_shape);
    let (offset, shape) = axes
        .zip(b.global_offset.iter().zip(b.local_shape))
        .map(|((&ao, &ae), (&bo, &be))| {
            let start = ao.max(bo);
            let end = ao.saturating_add(ae).min(bo.saturating_add(be));
            (start, end.saturating_sub(start))
        })
        .unzip();
    Detail::Overlap {
        other: None,
        boxes: [
            (b.global_offset.to_vec(), b.local_shape.to_vec()),
            (a.global_offset.to_vec(), a.local_shape.to_vec()),
        ],
        offset,
        shape,
    }
}
