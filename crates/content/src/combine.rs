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
/// Whether two partials are equal: the same sum and the same edges as sets (the replica
/// rule of §19.4 step 2, and how one holder's partial is checked against a manifest's).
pub fn same_partial(a: &Partial, b: &Partial) -> bool {
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

    /// The partials of the boxes `(offset, shape)` of the row-major `[rows, cols]` tensor
    /// `t` whose byte `i` is `i + 1` (any itemsize).
    fn parts_of(t: &Tensor, boxes: &[([usize; 2], [usize; 2])]) -> Parts {
        let s = usize::try_from(t.itemsize()).unwrap();
        let cols = usize::try_from(t.shape()[1]).unwrap();
        let rows = usize::try_from(t.shape()[0]).unwrap();
        let bytes: Vec<u8> = (0..rows * cols * s)
            .map(|i| u8::try_from(i % 251 + 1).unwrap())
            .collect();
        boxes
            .iter()
            .map(|&(o, l)| {
                let o64 = o.map(|v| v as u64).to_vec();
                let l64 = l.map(|v| v as u64).to_vec();
                let local = cut(&bytes, cols * s, [o[0], o[1] * s], [l[0], l[1] * s]);
                let p = partial(t, &o64, &l64, &local).unwrap();
                (o64, l64, p)
            })
            .collect()
    }

    fn message(t: &Tensor, parts: &Parts) -> String {
        let error = combine(t, &fragments(parts)).unwrap_err();
        assert_eq!(error.code(), Code::ContentPartitionInvalid);
        error.message().to_owned()
    }

    // Each check of a partition pinned alone: every other check passes on its input, so
    // without the check the combine would return a digest.

    #[test]
    fn overlapping_boxes_whose_volumes_add_up_are_rejected() {
        // Rows 0-1 and row 1 again: 20 + 10 elements = the tensor's 30, row 2 nowhere.
        let t = Tensor::new("w", &[3, 10], 1, 4).unwrap();
        let parts = parts_of(&t, &[([0, 0], [2, 10]), ([1, 0], [1, 10])]);
        assert!(parts.iter().all(|(_, _, p)| p.edges.is_empty()));
        assert_eq!(
            message(&t, &parts),
            "tensor w: the boxes at [0, 0] of shape [2, 10] and at [1, 0] of shape [1, 10] overlap"
        );
    }

    #[test]
    fn disjoint_boxes_that_leave_a_gap_are_rejected() {
        let t = Tensor::new("w", &[3, 10], 1, 4).unwrap();
        let parts = parts_of(&t, &[([0, 0], [2, 10])]);
        assert_eq!(
            message(&t, &parts),
            "tensor w: the distinct boxes hold 20 of its 30 elements"
        );
    }

    /// Row 0 of a [1, 10] tensor as columns 0-1 and 2-9: block 0 ([0, 4)) is two pieces,
    /// 0..2 of the first box and 2..4 of the second.
    fn split_row() -> (Tensor, Parts) {
        let t = Tensor::new("w", &[1, 10], 1, 4).unwrap();
        let parts = parts_of(&t, &[([0, 0], [1, 2]), ([0, 2], [1, 8])]);
        assert_eq!(parts[1].2.edges.len(), 1);
        assert_eq!(
            (parts[1].2.edges[0].start, parts[1].2.edges[0].bytes.len()),
            (2, 2)
        );
        (t, parts)
    }

    #[test]
    fn pieces_that_end_before_their_block_does_are_rejected() {
        let (t, mut parts) = split_row();
        parts[1].2.edges[0].bytes.pop();
        assert_eq!(
            message(&t, &parts),
            "tensor w: row 0 block 0: the pieces end at element 3, the block at 4"
        );
    }

    #[test]
    fn a_piece_that_does_not_start_where_the_last_ended_is_rejected() {
        // 0..2, then 3..4 twice: as many elements as the block, but element 2 is missing.
        let (t, mut parts) = split_row();
        let edge = parts[1].2.edges[0].clone();
        let shifted = Edge {
            start: 3,
            bytes: vec![edge.bytes[1]],
            ..edge
        };
        parts[1].2.edges = vec![shifted.clone(), shifted];
        assert_eq!(
            message(&t, &parts),
            "tensor w: row 0 block 0: a piece starts at element 3, expected 2 (a gap or an overlap)"
        );
    }

    #[test]
    fn an_edge_of_a_row_outside_its_box_is_rejected() {
        // The edges of rows 1 and 2 at column 3 swapped between the boxes holding them:
        // every block is still tiled, but each edge names a row its box does not hold.
        let (t, _, mut parts) = setup();
        let row1 = parts[1].2.edges.iter().position(|e| e.row == 1).unwrap();
        assert_eq!(parts[2].2.edges.len(), 1);
        parts[1].2.edges[row1].row = 2;
        parts[2].2.edges[0].row = 1;
        assert_eq!(
            message(&t, &parts),
            "tensor w: the edge at row 2 block 0 start 3 of the box at [0, 3]: the row is not in the box"
        );
    }

    #[test]
    fn an_edge_outside_the_tensor_is_rejected() {
        // A row past the last one, then a block past the last one of a row.
        for (row, block, start) in [(1, 0, 2), (0, 3, 2)] {
            let (t, mut parts) = split_row();
            let edge = &mut parts[1].2.edges[0];
            (edge.row, edge.block) = (row, block);
            assert_eq!(
                message(&t, &parts),
                format!(
                    "tensor w: the edge at row {row} block {block} start {start} of the box at [0, 2]: outside the tensor"
                )
            );
        }
    }

    #[test]
    fn an_edge_of_part_of_an_element_or_of_nothing_is_rejected() {
        // itemsize 2: the second box's piece of block 0 is elements 2..4, 4 bytes.
        let t = Tensor::new("w", &[1, 10], 2, 4).unwrap();
        for length in [3, 0] {
            let mut parts = parts_of(&t, &[([0, 0], [1, 2]), ([0, 2], [1, 8])]);
            assert_eq!(parts[1].2.edges[0].bytes.len(), 4);
            parts[1].2.edges[0].bytes.truncate(length);
            assert_eq!(
                message(&t, &parts),
                "tensor w: the edge at row 0 block 0 start 2 of the box at [0, 2]: the bytes are not whole elements"
            );
        }
    }

    #[test]
    fn a_piece_that_leaves_its_box_is_rejected_though_the_block_is_tiled() {
        // Block 0 is still 0..4 in two pieces, but the boundary moved off the boxes' one
        // at element 2: the first box's piece ends past its box, or the second's starts
        // before its box.
        for (first, at) in [(3, "[0, 0]"), (1, "[0, 2]")] {
            let (t, mut parts) = split_row();
            let whole: Vec<u8> = [
                &parts[0].2.edges[0].bytes[..],
                &parts[1].2.edges[0].bytes[..],
            ]
            .concat();
            parts[0].2.edges[0].bytes = whole[..first].to_vec();
            parts[1].2.edges[0].start = first as u64;
            parts[1].2.edges[0].bytes = whole[first..].to_vec();
            let start = if at == "[0, 0]" { 0 } else { first };
            assert_eq!(
                message(&t, &parts),
                format!(
                    "tensor w: the edge at row 0 block 0 start {start} of the box at {at}: the piece leaves the box or its block"
                )
            );
        }
    }
}
