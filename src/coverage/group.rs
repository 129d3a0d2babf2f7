//! Grouping a placement's fragments: by tensor, then by distinct box (identical boxes on
//! several ranks are replicas of one box). Shared by coverage and the planner.

use std::cmp::Ordering;

use crate::geometry::BoxRef;
use crate::model::Placement;
use crate::util::fxhash::{hash_str, map_with_capacity, FxHashMap};
use crate::wire::{ParallelRank, PlacementFragment};

/// The rank order used for ties everywhere: dp, tp, pp, ep (the contract's coordinate
/// order, §2.1).
pub(crate) fn rank_key(rank: &ParallelRank) -> (u64, u64, u64, u64) {
    (rank.dp, rank.tp, rank.pp, rank.ep)
}

/// Numeric, element-wise order of two boxes: by offset, then by shape.
pub(crate) fn box_order(a: &PlacementFragment, b: &PlacementFragment) -> Ordering {
    a.global_offset
        .cmp(&b.global_offset)
        .then_with(|| a.local_shape.cmp(&b.local_shape))
}

/// The fragments of each tensor: for tensor `t` (in the placement's order, by
/// tensor_id), `items[starts[t]..starts[t + 1]]` are its fragment indices in fragment
/// order (by placement_fragment_id).
pub(crate) struct Groups {
    starts: Vec<usize>,
    items: Vec<usize>,
}

impl Groups {
    /// The fragment indices of tensor `t`.
    pub(crate) fn get(&self, t: usize) -> &[usize] {
        &self.items[self.starts[t]..self.starts[t + 1]]
    }
}

/// The tensor index of each fragment. A valid placement names only its own tensors
/// (§8.2 F3), so when the tensor ids have pairwise distinct hashes a fragment's tensor is
/// found by the hash of its tensor_id alone; otherwise by the id itself.
fn owners(placement: &Placement) -> Vec<Option<usize>> {
    let tensors = placement.tensors();
    let fragments = placement.fragments();
    let mut by_hash: FxHashMap<u64, usize> = map_with_capacity(tensors.len());
    let distinct = tensors
        .iter()
        .enumerate()
        .all(|(i, t)| by_hash.insert(hash_str(&t.tensor_id), i).is_none());
    if distinct {
        return fragments
            .iter()
            .map(|f| by_hash.get(&hash_str(&f.tensor_id)).copied())
            .collect();
    }
    owners_by_id(placement)
}

/// [`owners`] by comparing ids (the fallback when two tensor ids share a hash).
fn owners_by_id(placement: &Placement) -> Vec<Option<usize>> {
    let (tensors, fragments) = (placement.tensors(), placement.fragments());
    let by_id: FxHashMap<&str, usize> = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.tensor_id.as_str(), i))
        .collect();
    fragments
        .iter()
        .map(|f| by_id.get(f.tensor_id.as_str()).copied())
        .collect()
}

/// Groups the fragments of `placement` by tensor (a counting sort, so order is kept).
pub(crate) fn fragments_by_tensor(placement: &Placement) -> Groups {
    let tensors = placement.tensors();
    let owner = owners(placement);
    let mut starts = vec![0usize; tensors.len() + 1];
    for &t in owner.iter().flatten() {
        starts[t + 1] += 1;
    }
    for t in 0..tensors.len() {
        starts[t + 1] += starts[t];
    }
    let mut next = starts.clone();
    let mut items = vec![0usize; starts[tensors.len()]];
    for (i, t) in owner.iter().enumerate() {
        if let Some(t) = *t {
            items[next[t]] = i;
            next[t] += 1;
        }
    }
    Groups { starts, items }
}

/// One distinct box and the fragments that hold it.
#[derive(Clone, Debug)]
pub(crate) struct DistinctBox {
    /// Fragment indices (into the placement's fragments), in rank order (dp, tp, pp, ep);
    /// never empty, and all hold the same box.
    pub members: Vec<usize>,
}

impl DistinctBox {
    /// The box, as its first member holds it.
    pub(crate) fn boxref<'p>(&self, fragments: &'p [PlacementFragment]) -> BoxRef<'p> {
        let f = &fragments[self.members[0]];
        BoxRef {
            offset: &f.global_offset,
            extent: &f.local_shape,
        }
    }
}

/// The distinct boxes among `members` (fragment indices), sorted by [`box_order`].
pub(crate) fn distinct_boxes(
    fragments: &[PlacementFragment],
    members: impl IntoIterator<Item = usize>,
) -> Vec<DistinctBox> {
    let mut sorted: Vec<usize> = members.into_iter().collect();
    let same_box = sorted.split_first().is_none_or(|(&first, rest)| {
        rest.iter()
            .all(|&i| box_order(&fragments[first], &fragments[i]).is_eq())
    });
    if same_box {
        // One box held by every member (a replicated tensor, an expert): rank order only.
        sorted.sort_by_key(|&i| rank_key(&fragments[i].rank));
        return if sorted.is_empty() {
            Vec::new()
        } else {
            vec![DistinctBox { members: sorted }]
        };
    }
    sorted.sort_by(|&a, &b| {
        box_order(&fragments[a], &fragments[b])
            .then_with(|| rank_key(&fragments[a].rank).cmp(&rank_key(&fragments[b].rank)))
    });
    let mut boxes: Vec<DistinctBox> = Vec::new();
    for i in sorted {
        match boxes.last_mut() {
            Some(last) if box_order(&fragments[last.members[0]], &fragments[i]).is_eq() => {
                last.members.push(i);
            }
            _ => boxes.push(DistinctBox { members: vec![i] }),
        }
    }
    boxes
}

/// The box references of `boxes`, in order.
pub(crate) fn box_refs<'p>(
    fragments: &'p [PlacementFragment],
    boxes: &[DistinctBox],
) -> Vec<BoxRef<'p>> {
    boxes.iter().map(|b| b.boxref(fragments)).collect()
}

#[cfg(test)]
mod tests {
    use super::{distinct_boxes, owners, owners_by_id};
    use crate::model::Placement;
    use crate::options::Options;

    #[test]
    fn owners_by_hash_and_by_id_agree() {
        let text = r#"{"fragments":[
            {"aliases":[],"global_offset":[0],"local_shape":[2],"nbytes":2,"placement_fragment_id":"b0","rank":{"dp":1,"ep":0,"pp":0,"tp":0},"tensor_id":"b"},
            {"aliases":[],"global_offset":[0],"local_shape":[2],"nbytes":2,"placement_fragment_id":"a1","rank":{"dp":0,"ep":0,"pp":0,"tp":1},"tensor_id":"a"},
            {"aliases":[],"global_offset":[0],"local_shape":[2],"nbytes":2,"placement_fragment_id":"a0","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"a"},
            {"aliases":[],"global_offset":[2],"local_shape":[2],"nbytes":2,"placement_fragment_id":"b1","rank":{"dp":0,"ep":0,"pp":0,"tp":0},"tensor_id":"b"}],
            "model_id":"m","placement_id":null,"revision":"r","tensors":[
            {"dtype":"u8","expert_id":null,"global_shape":[2],"itemsize":1,"layer_id":null,"layout_fingerprint":"f","partition_dim":null,"shard_dims":null,"tensor_id":"a"},
            {"dtype":"u8","expert_id":null,"global_shape":[4],"itemsize":1,"layer_id":null,"layout_fingerprint":"f","partition_dim":0,"shard_dims":null,"tensor_id":"b"}]}"#;
        let placement = Placement::from_json(text, &Options::default()).unwrap();
        let by_hash = owners(&placement);
        assert_eq!(by_hash, owners_by_id(&placement));
        // Fragments sorted by id: a0, a1, b0, b1.
        assert_eq!(by_hash, vec![Some(0), Some(0), Some(1), Some(1)]);
        let fragments = placement.fragments();
        let one = distinct_boxes(fragments, [1, 0]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].members, vec![0, 1], "rank order: tp 0 before tp 1");
        let two = distinct_boxes(fragments, [3, 2]);
        assert_eq!(
            two.iter().map(|b| b.members.clone()).collect::<Vec<_>>(),
            vec![vec![2], vec![3]]
        );
    }
}
