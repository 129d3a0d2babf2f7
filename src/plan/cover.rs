//! Source cover selection: which source boxes a target fragment reads from.
//!
//! When the distinct source boxes of a tensor tile it, they are the one cover. Otherwise
//! each DP replica whose own distinct boxes tile the tensor is a candidate cover: a target
//! fragment reads from the replica with its own dp when that one tiles, else from the
//! tiling replicas in turn (round robin over the target fragments that need one, in
//! target fragment order). A tensor with no cover at all is `plan_uncovered_tensor`.
//!
//! The tiling analyses of one tensor share one [`Work`] budget (`max_geometry_work` per
//! box, twice over: once for all its boxes, once for each DP value's); running out is
//! `limit_exceeded`, naming the tensor. The fragments are grouped by DP value with one
//! sort, and a target finds its DP value's cover by binary search.

use crate::coverage::group::{box_refs, distinct_boxes, DistinctBox};
use crate::error::{Code, Error, Result};
use crate::geometry::{analyse, BoxIndex, Tiling, Work};
use crate::wire::{PlacementFragment, TensorDescriptor};

/// A set of source tiles that tile the tensor, with an intersection index over them.
pub(crate) struct Cover {
    /// The tiles in box order; each lists its replicas (source fragment indices).
    pub tiles: Vec<DistinctBox>,
    pub index: BoxIndex,
}

impl Cover {
    fn new(fragments: &[PlacementFragment], tiles: Vec<DistinctBox>) -> Cover {
        let index = BoxIndex::new(&box_refs(fragments, &tiles));
        Cover { tiles, index }
    }
}

/// The covers of one tensor.
pub(crate) enum Covers {
    /// The distinct source boxes tile the tensor.
    Global(Cover),
    /// Per DP value (strictly ascending), the replicas that tile the tensor on their own.
    PerDp(Vec<(u64, Cover)>),
}

impl Covers {
    /// The cover a target fragment of DP rank `dp` reads from; `turn` counts the target
    /// fragments of this tensor that had no same-dp replica so far.
    pub(crate) fn for_target(&self, dp: u64, turn: &mut usize) -> &Cover {
        match self {
            Covers::Global(cover) => cover,
            Covers::PerDp(replicas) => {
                if let Ok(at) = replicas.binary_search_by_key(&dp, |(d, _)| *d) {
                    return &replicas[at].1;
                }
                let cover = &replicas[*turn % replicas.len()].1;
                *turn += 1;
                cover
            }
        }
    }
}

/// Selects the covers of `tensor` from its source fragments `members`, the search
/// spending at most `per_box` units (`max_geometry_work`) per box.
pub(crate) fn select(
    tensor: &TensorDescriptor,
    fragments: &[PlacementFragment],
    members: &[usize],
    per_box: u64,
) -> Result<Covers> {
    let shape = &tensor.global_shape;
    let mut work = Work::new(per_box, members.len().saturating_mul(2));
    let exhausted =
        |e: crate::geometry::Exhausted| e.error("source cover search", &tensor.tensor_id);
    let tiles = distinct_boxes(fragments, members.iter().copied());
    let global = analyse(shape, &box_refs(fragments, &tiles), &mut work).map_err(exhausted)?;
    if global == Tiling::Complete {
        return Ok(Covers::Global(Cover::new(fragments, tiles)));
    }
    // Members by DP value, ascending (stable: fragment order within one).
    let mut by_dp = members.to_vec();
    by_dp.sort_by_key(|&i| fragments[i].rank.dp);
    let mut replicas = Vec::new();
    let mut first_gap: Option<(u64, Vec<u64>)> = None;
    for group in by_dp.chunk_by(|&a, &b| fragments[a].rank.dp == fragments[b].rank.dp) {
        let dp = fragments[group[0]].rank.dp;
        let own = distinct_boxes(fragments, group.iter().copied());
        match analyse(shape, &box_refs(fragments, &own), &mut work).map_err(exhausted)? {
            Tiling::Complete => replicas.push((dp, Cover::new(fragments, own))),
            Tiling::Gaps { first, .. } => {
                first_gap.get_or_insert((dp, first));
            }
            Tiling::Ambiguous { .. } => {}
        }
    }
    if !replicas.is_empty() {
        return Ok(Covers::PerDp(replicas));
    }
    let id = &tensor.tensor_id;
    let message = match (global, first_gap) {
        (Tiling::Gaps { first, .. }, _) => format!(
            "tensor {id} has no source cover: no source fragment holds coordinate {first:?}"
        ),
        (_, Some((dp, first))) => format!(
            "tensor {id} has no source cover: its source boxes overlap partially and no DP \
             replica tiles it alone (dp {dp} holds no fragment at coordinate {first:?})"
        ),
        (global, None) => {
            let show = |b: &DistinctBox| {
                let r = b.boxref(fragments);
                format!("offset {:?} shape {:?}", r.offset, r.extent)
            };
            let pair = match global {
                Tiling::Ambiguous { first, second } => format!(
                    ": source boxes {} and {} overlap partially",
                    show(&tiles[first]),
                    show(&tiles[second])
                ),
                _ => String::new(),
            };
            format!("tensor {id} has no source cover{pair} and no DP replica tiles it alone")
        }
    };
    Err(Error::new(Code::PlanUncoveredTensor, message))
}
