//! A fragment's partial (contract §19.3), and the digest of a whole tensor.
//!
//! The partial of a fragment is the sum of the values of the blocks wholly inside its box,
//! plus an [`Edge`] for each row of the box and each block that the box holds only part
//! of: the piece's coordinate and bytes, so that the partials of a partition can complete
//! every block between them ([`mod@crate::combine`]).

use weight_manifest::error::Result;

use crate::hash::{self, Digest};
use crate::tensor::Tensor;
use crate::walk::{Buffer, Region};

/// A piece of a block that a fragment holds only part of.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The row r.
    pub row: u64,
    /// The block j in the row.
    pub block: u64,
    /// The global inner element index where the piece starts.
    pub start: u64,
    /// The piece's bytes, as stored.
    pub bytes: Vec<u8>,
}

/// A fragment's share of its tensor's digest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Partial {
    /// The sum of the values of the blocks wholly inside the box, modulo 2^128.
    pub sum: Digest,
    /// The pieces of the blocks the box holds only part of, by row, then block.
    pub edges: Vec<Edge>,
}

/// The partial of a fragment whose contiguous row-major bytes in `local_shape` are `bytes`.
///
/// # Errors
///
/// `content_shape_invalid` for a box outside the tensor; `content_buffer_invalid` when
/// `bytes` is not product(local_shape) × itemsize long.
pub fn partial(
    tensor: &Tensor,
    global_offset: &[u64],
    local_shape: &[u64],
    bytes: &[u8],
) -> Result<Partial> {
    let origin = vec![0; local_shape.len()];
    partial_in(
        tensor,
        global_offset,
        local_shape,
        Buffer::contiguous(bytes, local_shape, &origin),
    )
}

/// The partial of the fragment (`global_offset`, `local_shape`) whose bytes are a box of
/// the row-major `buffer` (for a mapped checkpoint tensor: buffer shape = global_shape,
/// offset = global_offset). Nothing is copied but the edge pieces.
pub fn partial_in(
    tensor: &Tensor,
    global_offset: &[u64],
    local_shape: &[u64],
    buffer: Buffer<'_>,
) -> Result<Partial> {
    partial_with(tensor, global_offset, local_shape, buffer, |_| {})
}

/// [`partial_in`], handing each whole block's value to `on_value` as it is added (by row,
/// then block): the one walk behind the partial and the block values of a delta.
pub(crate) fn partial_with(
    tensor: &Tensor,
    global_offset: &[u64],
    local_shape: &[u64],
    buffer: Buffer<'_>,
    mut on_value: impl FnMut(u128),
) -> Result<Partial> {
    let region = Region {
        tensor,
        global_offset,
        local_shape,
        buffer,
    };
    let key = tensor.key();
    let mut out = Partial::default();
    region.for_each_block(|row, p| {
        if p.whole {
            let value = hash::value(key, row, p.block, hash::content(p.bytes));
            out.sum.add(value);
            on_value(value);
        } else {
            out.edges.push(Edge {
                row,
                block: p.block,
                start: p.start,
                bytes: p.bytes.to_vec(),
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// The digest of a whole tensor from its contiguous row-major bytes.
///
/// # Errors
///
/// `content_buffer_invalid` when `bytes` is not the tensor's byte size long.
pub fn digest(tensor: &Tensor, bytes: &[u8]) -> Result<Digest> {
    let origin = vec![0; tensor.shape().len()];
    let whole = partial(tensor, &origin, tensor.shape(), bytes)?;
    debug_assert!(whole.edges.is_empty());
    Ok(whole.sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weight_manifest::error::Code;

    #[allow(clippy::cast_possible_truncation)]
    fn direct(tensor: &Tensor, bytes: &[u8]) -> Digest {
        // The definition written out: every row, every block, by index arithmetic.
        let (n, s, b) = (
            tensor.row_elements() as usize,
            tensor.itemsize() as usize,
            tensor.block_elements() as usize,
        );
        let mut sum = Digest::default();
        for r in 0..tensor.rows() as usize {
            for j in 0..n.div_ceil(b) {
                let lo = (r * n + j * b) * s;
                let hi = (r * n + ((j + 1) * b).min(n)) * s;
                let c = hash::content(&bytes[lo..hi]);
                sum.add(hash::value(tensor.key(), r as u64, j as u64, c));
            }
        }
        sum
    }

    #[test]
    fn whole_tensor_digest_is_the_definition() {
        let t = Tensor::new("layer.w", &[3, 2, 7], 2, 3).unwrap();
        let bytes: Vec<u8> = (0..84_u8).collect();
        assert_eq!(digest(&t, &bytes).unwrap(), direct(&t, &bytes));
    }

    #[test]
    fn edges_hold_the_cut_blocks() {
        let t = Tensor::new("w", &[2, 10], 1, 4).unwrap();
        let bytes: Vec<u8> = (0..20).collect();
        // Columns 3..9: block 0 cut (3), block 1 whole (4..8), block 2 cut (8).
        let buffer = Buffer {
            bytes: &bytes,
            shape: &[2, 10],
            offset: &[1, 3],
        };
        let p = partial_in(&t, &[1, 3], &[1, 6], buffer).unwrap();
        let key = t.key();
        assert_eq!(
            p.sum,
            Digest(hash::value(key, 1, 1, hash::content(&[14, 15, 16, 17])))
        );
        let edge = |block, start, bytes: &[u8]| Edge {
            row: 1,
            block,
            start,
            bytes: bytes.to_vec(),
        };
        assert_eq!(p.edges, vec![edge(0, 3, &[13]), edge(2, 8, &[18])]);
    }

    #[test]
    fn buffer_and_box_errors() {
        let t = Tensor::new("w", &[2, 4], 2, 4).unwrap();
        let e = partial(&t, &[0, 0], &[2, 4], &[0; 15]).unwrap_err();
        assert_eq!(e.code(), Code::ContentBufferInvalid);
        let e = partial(&t, &[1, 0], &[2, 4], &[0; 16]).unwrap_err();
        assert_eq!(e.code(), Code::ContentShapeInvalid);
        let bytes = [0_u8; 16];
        let outside = Buffer {
            bytes: &bytes,
            shape: &[2, 4],
            offset: &[1, 1],
        };
        let e = partial_in(&t, &[0, 0], &[1, 4], outside).unwrap_err();
        assert_eq!(e.code(), Code::ContentShapeInvalid);
        let huge = Buffer {
            bytes: &bytes,
            shape: &[u64::MAX, 4],
            offset: &[0, 0],
        };
        let e = partial_in(&t, &[0, 0], &[1, 4], huge).unwrap_err();
        assert_eq!(e.code(), Code::ContentShapeInvalid);
        assert_eq!(
            digest(&t, &[0; 17]).unwrap_err().code(),
            Code::ContentBufferInvalid
        );
    }
}
