//! A fast decision whether a fragment set passes every rule of §8.2 and §8.3.
//!
//! The rules name the *first* failure in a fixed order, which needs per-fragment hash sets
//! and per-group lists. Valid manifests, the common case, need none of that: this module
//! only answers "does every rule pass?" with O(n log n) work, no per-fragment allocation
//! and few cache misses, and [`super::check_fragment_set`] runs the exact procedure only
//! when the answer is no. Each check here is implied by the rules (so a "yes" is never
//! wrong), and F2 (duplicate logical fragment) is implied by §8.3 once F3–F8 hold: two
//! fragments with the same tensor, rank, offset and shape are equal non-empty boxes on one
//! rank.

use crate::geometry::{first_intersection, BoxRef, Work};
use crate::rules::descriptor::shard_dims;
use crate::rules::fragment_set::fragment_box::{box_admissible, TensorFrame};
use crate::rules::logical::LogicalFragment;
use crate::util::fxhash::{hash_str, map_with_capacity, set_with_capacity};
use crate::util::order::ascending_by;
use crate::wire::TensorDescriptor;

/// The most axes the compact tensor table holds; a tensor with more sends the set to the
/// exact procedure.
const MAX_AXES: usize = 6;

/// What F4–F8 need of a tensor, packed so the table stays in cache.
#[derive(Clone, Copy)]
struct Geometry {
    shape: [u64; MAX_AXES],
    ndim: usize,
    itemsize: u64,
    /// Bit k set: axis k is a shard dim.
    sharded: u8,
}

impl Geometry {
    fn of(tensor: &TensorDescriptor) -> Option<Geometry> {
        let ndim = tensor.global_shape.len();
        let mut shape = [0; MAX_AXES];
        shape.get_mut(..ndim)?.copy_from_slice(&tensor.global_shape);
        let mut sharded = 0u8;
        for &dim in shard_dims(tensor) {
            sharded |= 1u8.checked_shl(u32::try_from(dim).ok()?)?;
        }
        Some(Geometry {
            shape,
            ndim,
            itemsize: tensor.itemsize,
            sharded,
        })
    }

    /// F4–F8 for one fragment of this tensor ([`box_admissible`]).
    #[inline]
    fn admits(&self, fragment: &FragmentBox<'_>) -> bool {
        let frame = TensorFrame {
            shape: &self.shape[..self.ndim],
            itemsize: self.itemsize,
            replicated: self.sharded == 0,
            is_shard_axis: |k: usize| self.sharded & (1 << k) != 0,
        };
        box_admissible(
            &frame,
            fragment.global_offset,
            fragment.local_shape,
            fragment.nbytes,
        )
    }
}

/// What the geometric rules (F4–F8 and §8.3) read of a fragment.
#[derive(Clone, Copy)]
pub(crate) struct FragmentBox<'a> {
    /// dp, ep, pp, tp.
    pub rank: [u64; 4],
    pub global_offset: &'a [u64],
    pub local_shape: &'a [u64],
    pub nbytes: u64,
}

impl<'a> LogicalFragment<'a> {
    fn as_box(&self) -> FragmentBox<'a> {
        FragmentBox {
            rank: [self.rank.dp, self.rank.ep, self.rank.pp, self.rank.tp],
            global_offset: self.global_offset,
            local_shape: self.local_shape,
            nbytes: self.nbytes,
        }
    }
}

/// Whether T1, F1–F8 and the same-rank overlap rule all pass for the `count` fragments
/// that `fragment(i)` describes, the overlap search at `per_box` units per box.
pub(crate) fn all_pass<'a>(
    tensors: &[TensorDescriptor],
    count: usize,
    fragment: &impl Fn(usize) -> LogicalFragment<'a>,
    per_box: u64,
) -> bool {
    let Some(geometry) = Geometries::of(tensors) else {
        return false;
    };
    let mut by_id = map_with_capacity(tensors.len());
    for (index, tensor) in tensors.iter().enumerate() {
        let Ok(index) = u32::try_from(index) else {
            return false;
        };
        if by_id.insert(tensor.tensor_id.as_str(), index).is_some() {
            return false;
        }
    }
    if !ids_distinct(count, fragment) {
        return false;
    }
    // Tensor lookups first, in a tight loop of their own, so that their cache misses
    // overlap; then the box checks against the compact table.
    let Some(tensor_of) = (0..count)
        .map(|i| by_id.get(fragment(i).tensor_id).copied())
        .collect::<Option<Vec<u32>>>()
    else {
        return false;
    };
    drop(by_id);
    boxes_pass(&geometry, &tensor_of, &|i| fragment(i).as_box(), per_box)
}

/// What F4–F8 need of every tensor, in a compact table.
pub(crate) struct Geometries(Vec<Geometry>);

impl Geometries {
    /// The table of `tensors`, or `None` when one has more axes than the table holds (the
    /// exact procedure then decides).
    pub(crate) fn of(tensors: &[TensorDescriptor]) -> Option<Geometries> {
        tensors
            .iter()
            .map(Geometry::of)
            .collect::<Option<_>>()
            .map(Geometries)
    }
}

/// Whether F4–F8 and the same-rank overlap rule pass for fragments of known tensors:
/// fragment i, described by `fragment(i)`, is a box of tensor `tensor_of[i]` of `geometry`;
/// the overlap search at `per_box` units per box.
pub(crate) fn boxes_pass<'a>(
    geometry: &Geometries,
    tensor_of: &[u32],
    fragment: &impl Fn(usize) -> FragmentBox<'a>,
    per_box: u64,
) -> bool {
    let admitted = tensor_of.iter().enumerate().all(|(i, &t)| {
        geometry
            .0
            .get(t as usize)
            .is_some_and(|g| g.admits(&fragment(i)))
    });
    admitted && no_same_rank_overlap(fragment, tensor_of, per_box)
}

/// F1 over the whole set: strictly ascending ids (a sorted placement) are distinct without
/// hashing. Otherwise a set of the ids' 64-bit hashes: distinct hashes mean distinct ids,
/// and probing it never touches the strings (a million ids spread over memory); two equal
/// hashes answer "no" and the exact procedure decides.
fn ids_distinct<'a>(count: usize, fragment: &impl Fn(usize) -> LogicalFragment<'a>) -> bool {
    if ascending_by(count, |i| fragment(i).id) {
        return true;
    }
    let mut seen = set_with_capacity(count);
    (0..count).all(|i| seen.insert(hash_str(fragment(i).id)))
}

/// Whether `keys` are pairwise distinct (sorts them): 8 bytes a key and a sequential sort,
/// where a hash set takes 34 bytes a key and a cache miss per insert.
pub(crate) fn all_distinct(keys: &mut [u64]) -> bool {
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

/// A fragment's group of §8.3: its tensor's index and its rank's coordinates.
type GroupKey = (u32, u64, u64, u64, u64);

/// Every fragment's (tensor, rank) packed into one u64, each part in as many bits as its
/// largest value needs, when they fit in 64 (they do for any real deployment: a million
/// tensors and ranks in the thousands take 20 + 4 x 12 bits).
fn packed_keys<'a>(
    fragment: &impl Fn(usize) -> FragmentBox<'a>,
    tensor_of: &[u32],
) -> Option<Vec<u64>> {
    let bits = |max: u64| 64 - max.leading_zeros();
    let mut max = [0u64; 5];
    for (i, &t) in tensor_of.iter().enumerate() {
        let [dp, ep, pp, tp] = fragment(i).rank;
        for (m, v) in max.iter_mut().zip([u64::from(t), dp, ep, pp, tp]) {
            *m = (*m).max(v);
        }
    }
    let widths = max.map(bits);
    if widths.iter().sum::<u32>() > 64 {
        return None;
    }
    let keys = tensor_of.iter().enumerate().map(|(i, &t)| {
        let [dp, ep, pp, tp] = fragment(i).rank;
        let parts = [u64::from(t), dp, ep, pp, tp];
        // A shift by the full width (64) only happens when every part is zero.
        parts.iter().zip(widths).fold(0u64, |key, (&part, width)| {
            key.checked_shl(width).unwrap_or(0) | part
        })
    });
    Some(keys.collect())
}

/// §8.3 as a yes/no question ("no" also when a group's search exceeds its budget: the
/// exact procedure then reports `limit_exceeded`). Fragments are keyed by (tensor, rank); only keys held by
/// two or more fragments form groups that need the sweep. Usually no key repeats, which
/// sorted packed keys tell quickly (8 bytes a fragment and a sequential sort, where a
/// hash set takes 34 bytes and a cache miss per fragment).
fn no_same_rank_overlap<'a>(
    fragment: &impl Fn(usize) -> FragmentBox<'a>,
    tensor_of: &[u32],
    per_box: u64,
) -> bool {
    let count = tensor_of.len();
    if packed_keys(fragment, tensor_of).is_some_and(|mut keys| all_distinct(&mut keys)) {
        return true;
    }
    let key = |i: usize| -> GroupKey {
        let [dp, ep, pp, tp] = fragment(i).rank;
        (tensor_of[i], dp, ep, pp, tp)
    };
    let mut keyed: Vec<(GroupKey, usize)> = (0..count).map(|i| (key(i), i)).collect();
    keyed.sort_unstable();
    let mut boxes: Vec<BoxRef<'a>> = Vec::new();
    for group in keyed.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < 2 {
            continue;
        }
        boxes.clear();
        boxes.extend(group.iter().map(|&(_, i)| {
            let f = fragment(i);
            BoxRef {
                offset: f.global_offset,
                extent: f.local_shape,
            }
        }));
        // An intersection, or a search over its budget: the exact procedure reports it.
        let mut work = Work::new(per_box, boxes.len());
        if !matches!(first_intersection(&boxes, &mut work), Ok(None)) {
            return false;
        }
    }
    true
}
