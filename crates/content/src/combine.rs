//! Partials of one tensor combined into its digest (contract §19.4).
//!
//! Fragments with identical boxes are replicas (DP copies, TP-replicated tensors) and count
//! once; their partials must be equal. The distinct boxes must partition the tensor: no two
//! intersect and their volumes add up to the tensor's. The sums add modulo 2^128; the edge
//! pieces are grouped by (row, block), must tile their block exactly, and the value of each
//! block so completed is added.

use std::collections::BTreeMap;

use weight_manifest::error::{Code, Error, Result};

use crate::hash::{self, Digest};
use crate::partial::{Edge, Partial};
use crate::tensor::{product, Tensor};

/// One fragment's box and partial.
#[derive(Clone, Copy, Debug)]
pub struct Fragment<'a> {
    /// The box's global offset.
    pub global_offset: &'a [u64],
    /// The box's shape.
    pub local_shape: &'a [u64],
    /// Its partial.
    pub partial: &'a Partial,
}

fn partition_error(message: String) -> Error {
    Error::new(Code::ContentPartitionInvalid, message)
}

/// The digest of `tensor` from the partials of fragments that hold all of it.
///
/// # Errors
///
/// `content_shape_invalid` for a box outside the tensor; `content_replica_mismatch` when
/// two fragments of one box have different partials; `content_partition_invalid` when the
/// distinct boxes overlap or leave a gap, or an edge lies outside its fragment's box or the
/// pieces of a block do not tile it.
pub fn combine(tensor: &Tensor, fragments: &[Fragment<'_>]) -> Result<Digest> {
    let id = tensor.tensor_id();
    let mut boxes: BTreeMap<(&[u64], &[u64]), &Partial> = BTreeMap::new();
    for f in fragments {
        tensor.check_box(f.global_offset, f.local_shape)?;
        match boxes.entry((f.global_offset, f.local_shape)) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(f.partial);
            }
            std::collections::btree_map::Entry::Occupied(seen) => {
                if !same_partial(seen.get(), f.partial) {
                    return Err(Error::new(
                        Code::ContentReplicaMismatch,
                        format!(
                            "tensor {id}: replicas of the box at {:?} of shape {:?} have different partials",
                            f.global_offset, f.local_shape
                        ),
                    ));
                }
            }
        }
    }
    check_partition(tensor, &boxes)?;
    let mut sum = Digest::default();
    let mut pieces: BTreeMap<(u64, u64), Vec<&Edge>> = BTreeMap::new();
    for (&(offset, shape), partial) in &boxes {
        sum.add(partial.sum.0);
        for edge in &partial.edges {
            check_edge_in_box(tensor, offset, shape, edge)?;
            pieces.entry((edge.row, edge.block)).or_default().push(edge);
        }
    }
    let mut block = Vec::new();
    for ((row, j), mut group) in pieces {
        group.sort_by_key(|e| e.start);
        let (start, end) = tensor.block_range(j);
        let mut at = start;
        block.clear();
        for edge in group {
            if edge.start != at {
                return Err(partition_error(format!(
                    "tensor {id}: row {row} block {j}: a piece starts at element {}, expected {at} (a gap or an overlap)",
                    edge.start
                )));
            }
            at += edge.bytes.len() as u64 / tensor.itemsize();
            block.extend_from_slice(&edge.bytes);
        }
        if at != end {
            return Err(partition_error(format!(
                "tensor {id}: row {row} block {j}: the pieces end at element {at}, the block at {end}"
            )));
        }
        sum.add(hash::value(tensor.key(), row, j, hash::content(&block)));
    }
    Ok(sum)
}

/// Whether two partials are equal, whatever the order of their edges.
fn same_partial(a: &Partial, b: &Partial) -> bool {
    if a.sum != b.sum || a.edges.len() != b.edges.len() {
        return false;
    }
    let mut x: Vec<&Edge> = a.edges.iter().collect();
    let mut y: Vec<&Edge> = b.edges.iter().collect();
    x.sort();
    y.sort();
    x == y
}

/// Distinct boxes are pairwise disjoint and their volumes add up to the tensor's.
fn check_partition(tensor: &Tensor, boxes: &BTreeMap<(&[u64], &[u64]), &Partial>) -> Result<()> {
    let id = tensor.tensor_id();
    let list: Vec<(&[u64], &[u64])> = boxes.keys().copied().collect();
    // Sorted by offset: a box can only intersect later boxes whose first-axis start is
    // below its first-axis end.
    for (i, &(ao, al)) in list.iter().enumerate() {
        let a_end0 = ao[0] + al[0];
        for &(bo, bl) in &list[i + 1..] {
            if bo[0] >= a_end0 {
                break;
            }
            let disjoint = (0..ao.len()).any(|k| ao[k] + al[k] <= bo[k] || bo[k] + bl[k] <= ao[k]);
            if !disjoint {
                return Err(partition_error(format!(
                    "tensor {id}: the boxes at {ao:?} of shape {al:?} and at {bo:?} of shape {bl:?} overlap"
                )));
            }
        }
    }
    // Each volume is at most the tensor's (the box is inside it), and there are fewer
    // boxes than 2^64, so the u128 sum cannot overflow.
    let covered: u128 = list
        .iter()
        .map(|&(_, l)| u128::from(product(l).unwrap_or(u64::MAX)))
        .sum();
    let volume = u128::from(product(tensor.shape()).unwrap_or(u64::MAX));
    if covered != volume {
        return Err(partition_error(format!(
            "tensor {id}: the distinct boxes hold {covered} of its {volume} elements"
        )));
    }
    Ok(())
}

/// An edge names a row of the box, a piece inside the box's inner range and inside its
/// block, whole elements, and not nothing.
fn check_edge_in_box(tensor: &Tensor, offset: &[u64], shape: &[u64], edge: &Edge) -> Result<()> {
    let id = tensor.tensor_id();
    let k = offset.len();
    let bad = |why: &str| {
        partition_error(format!(
            "tensor {id}: the edge at row {} block {} start {} of the box at {offset:?}: {why}",
            edge.row, edge.block, edge.start
        ))
    };
    if edge.row >= tensor.rows() || edge.block >= tensor.blocks_per_row() {
        return Err(bad("outside the tensor"));
    }
    let coordinates = tensor.row_coordinates(edge.row);
    if (0..k - 1).any(|a| coordinates[a] < offset[a] || coordinates[a] >= offset[a] + shape[a]) {
        return Err(bad("the row is not in the box"));
    }
    let s = tensor.itemsize();
    let len = edge.bytes.len() as u64;
    if len == 0 || !len.is_multiple_of(s) {
        return Err(bad("the bytes are not whole elements"));
    }
    let (block_start, block_end) = tensor.block_range(edge.block);
    let end = edge.start.checked_add(len / s);
    let inside = end.is_some_and(|end| {
        edge.start >= block_start.max(offset[k - 1])
            && end <= block_end.min(offset[k - 1] + shape[k - 1])
    });
    if !inside {
        return Err(bad("the piece leaves the box or its block"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partial::{digest, partial};

    /// The bytes of box (o, l) of a row-major [rows, cols] u8 tensor.
    fn cut(bytes: &[u8], cols: usize, o: [usize; 2], l: [usize; 2]) -> Vec<u8> {
        (o[0]..o[0] + l[0])
            .flat_map(|r| bytes[r * cols + o[1]..r * cols + o[1] + l[1]].to_vec())
            .collect()
    }

    type Parts = Vec<(Vec<u64>, Vec<u64>, Partial)>;

    fn setup() -> (Tensor, Vec<u8>, Parts) {
        let t = Tensor::new("w", &[3, 10], 1, 4).unwrap();
        let bytes: Vec<u8> = (0..30).map(|i| i * 7 + 1).collect();
        let boxes = [([0, 0], [3, 3]), ([0, 3], [2, 7]), ([2, 3], [1, 7])];
        let parts = boxes
            .iter()
            .map(|&(o, l)| {
                let local = cut(&bytes, 10, o, l);
                let o64 = o.map(|v| v as u64).to_vec();
                let l64 = l.map(|v| v as u64).to_vec();
                let p = partial(&t, &o64, &l64, &local).unwrap();
                (o64, l64, p)
            })
            .collect();
        (t, bytes, parts)
    }

    fn fragments(parts: &Parts) -> Vec<Fragment<'_>> {
        parts
            .iter()
            .map(|(o, l, p)| Fragment {
                global_offset: o,
                local_shape: l,
                partial: p,
            })
            .collect()
    }

    #[test]
    fn a_partition_gives_the_whole_digest_and_replicas_count_once() {
        let (t, bytes, parts) = setup();
        let whole = digest(&t, &bytes).unwrap();
        let mut f = fragments(&parts);
        assert_eq!(combine(&t, &f).unwrap(), whole);
        f.push(f[1]);
        f.reverse();
        assert_eq!(combine(&t, &f).unwrap(), whole);
    }

    #[test]
    fn gaps_overlaps_and_bad_edges_are_rejected() {
        let (t, _, mut parts) = setup();
        let f = fragments(&parts);
        let code = |f: &[Fragment<'_>]| combine(&t, f).unwrap_err().code();
        assert_eq!(code(&f[..2]), Code::ContentPartitionInvalid);
        let overlap = Fragment {
            global_offset: &[0, 2],
            local_shape: &[1, 2],
            partial: f[0].partial,
        };
        assert_eq!(
            code(&[f[0], f[1], f[2], overlap]),
            Code::ContentPartitionInvalid
        );
        // A replica that differs.
        let mut other = parts[1].2.clone();
        other.sum.add(1);
        let replica = Fragment {
            partial: &other,
            ..f[1]
        };
        assert_eq!(
            code(&[f[0], f[1], f[2], replica]),
            Code::ContentReplicaMismatch
        );
        // An edge dropped, shifted, or moved out of its box.
        let edits: [fn(&mut Partial); 4] = [
            |p| {
                p.edges.pop();
            },
            |p| p.edges[0].start += 1,
            |p| p.edges[0].row = 2,
            |p| p.edges[0].bytes.clear(),
        ];
        for edit in edits {
            let (_, _, fresh) = setup();
            parts = fresh;
            edit(&mut parts[0].2);
            let f = fragments(&parts);
            assert_eq!(code(&f), Code::ContentPartitionInvalid);
        }
    }
}
