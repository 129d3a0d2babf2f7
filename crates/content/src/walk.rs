//! The rows of a fragment's box inside a row-major buffer, and the blocks of a row piece.
//!
//! The buffer is either the fragment's own contiguous bytes (buffer shape = local_shape,
//! box at the origin) or a larger row-major array holding the box, such as a mapped
//! checkpoint tensor (buffer shape = global_shape, box at global_offset). Each row of the
//! box is handed on as its global row index and the bytes of its piece of that row.

use weight_manifest::error::{Code, Error, Result};

use crate::errors::{overflow, shape_error};
use crate::tensor::{check_shape, volume_bytes, Tensor};

/// A row-major buffer and where a fragment's box sits in it.
#[derive(Clone, Copy, Debug)]
pub struct Buffer<'a> {
    /// The buffer's bytes: product(shape) × itemsize of them.
    pub bytes: &'a [u8],
    /// The buffer's shape, with the tensor's number of dimensions.
    pub shape: &'a [u64],
    /// The box's first element in the buffer's coordinates.
    pub offset: &'a [u64],
}

impl<'a> Buffer<'a> {
    /// A fragment's own contiguous bytes in its local_shape.
    pub fn contiguous(bytes: &'a [u8], local_shape: &'a [u64], origin: &'a [u64]) -> Self {
        Buffer {
            bytes,
            shape: local_shape,
            offset: origin,
        }
    }
}

/// A box of a tensor read from a buffer, checked.
#[derive(Clone, Copy, Debug)]
pub struct Region<'a> {
    /// The tensor.
    pub tensor: &'a Tensor,
    /// The box's global offset.
    pub global_offset: &'a [u64],
    /// The box's shape.
    pub local_shape: &'a [u64],
    /// Where its bytes are.
    pub buffer: Buffer<'a>,
}

fn to_usize(value: u64, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| overflow(what))
}

impl Region<'_> {
    /// Checks the box against the tensor (`content_shape_invalid`), the box against the
    /// buffer's shape (`content_shape_invalid`) and the buffer's length against its shape
    /// (`content_buffer_invalid`).
    pub fn check(&self) -> Result<()> {
        let t = self.tensor;
        t.check_box(self.global_offset, self.local_shape)?;
        let id = t.tensor_id();
        let b = &self.buffer;
        check_shape(id, "the buffer's shape", b.shape)?;
        if b.shape.len() != t.shape().len() || b.offset.len() != t.shape().len() {
            return Err(shape_error(format!(
                "tensor {id}: a buffer of shape {:?} holding a box at {:?} does not have the {} dimensions of the tensor",
                b.shape,
                b.offset,
                t.shape().len()
            )));
        }
        for ((&o, &l), &d) in b.offset.iter().zip(self.local_shape).zip(b.shape) {
            if o.checked_add(l).is_none_or(|end| end > d) {
                return Err(shape_error(format!(
                    "tensor {id}: a box of local_shape {:?} at {:?} leaves the buffer of shape {:?}",
                    self.local_shape, b.offset, b.shape
                )));
            }
        }
        let expected = volume_bytes(b.shape, t.itemsize())
            .ok_or_else(|| overflow("the buffer's byte size"))?;
        if expected != b.bytes.len() as u64 {
            return Err(Error::new(
                Code::ContentBufferInvalid,
                format!(
                    "tensor {id}: a buffer of shape {:?} and itemsize {} holds {expected} bytes, got {}",
                    b.shape,
                    t.itemsize(),
                    b.bytes.len()
                ),
            ));
        }
        Ok(())
    }

    /// Checks the region, then calls `f(row, piece)` for each row of the box in row-major
    /// order: `row` the global row index, `piece` the bytes of elements
    /// [global_offset[k−1], global_offset[k−1] + local_shape[k−1]) of that row.
    pub fn for_each_row(&self, mut f: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<()> {
        self.check()?;
        let t = self.tensor;
        let k = t.shape().len();
        let s = t.itemsize();
        let outer_local = &self.local_shape[..k - 1];
        let piece_bytes = to_usize(self.local_shape[k - 1] * s, "a row piece's byte size")?;
        let buffer_row_elements = self.buffer.shape[k - 1];
        let mut index = vec![0_u64; k - 1];
        loop {
            // Row indices: the box lies inside the tensor and the buffer, whose sizes were
            // checked, so these sums stay below R and the buffer's row count; checked anyway.
            let mut row = 0_u64;
            let mut buffer_row = 0_u64;
            for (axis, &i) in index.iter().enumerate() {
                row = row
                    .checked_mul(t.shape()[axis])
                    .and_then(|v| v.checked_add(self.global_offset[axis] + i))
                    .ok_or_else(|| overflow("a row index"))?;
                buffer_row = buffer_row
                    .checked_mul(self.buffer.shape[axis])
                    .and_then(|v| v.checked_add(self.buffer.offset[axis] + i))
                    .ok_or_else(|| overflow("a buffer row index"))?;
            }
            let start = buffer_row
                .checked_mul(buffer_row_elements)
                .and_then(|v| v.checked_add(self.buffer.offset[k - 1]))
                .and_then(|v| v.checked_mul(s))
                .ok_or_else(|| overflow("a buffer offset"))?;
            let start = to_usize(start, "a buffer offset")?;
            let piece = start
                .checked_add(piece_bytes)
                .and_then(|end| self.buffer.bytes.get(start..end))
                .ok_or_else(|| overflow("a buffer offset"))?;
            f(row, piece)?;
            // The next index of the box's outer dimensions, last axis fastest.
            let mut axis = k - 1;
            loop {
                if axis == 0 {
                    return Ok(());
                }
                axis -= 1;
                index[axis] += 1;
                if index[axis] < outer_local[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
    }
    /// Calls `f` with the row and each block piece of the box, row by row, then block by
    /// block: the one walk that partials and block values share.
    pub fn for_each_block(
        &self,
        mut f: impl FnMut(u64, BlockPiece<'_>) -> Result<()>,
    ) -> Result<()> {
        let start = self.global_offset.last().copied().unwrap_or(0);
        self.for_each_row(|row, piece| for_each_block(self.tensor, start, piece, |p| f(row, p)))
    }
}

/// One block's share of a row piece.
#[derive(Clone, Copy, Debug)]
pub struct BlockPiece<'a> {
    /// The block index j in its row.
    pub block: u64,
    /// The global inner element index where this piece starts.
    pub start: u64,
    /// The piece's bytes.
    pub bytes: &'a [u8],
    /// Whether the piece is the whole block.
    pub whole: bool,
}

/// Calls `f` for each block that the row piece starting at global inner element `start`
/// touches, in order. `piece` holds whole elements of `tensor` (its length a multiple of
/// the itemsize) inside the row.
pub fn for_each_block(
    tensor: &Tensor,
    start: u64,
    piece: &[u8],
    mut f: impl FnMut(BlockPiece<'_>) -> Result<()>,
) -> Result<()> {
    let s = tensor.itemsize();
    let b = tensor.block_elements();
    let end = start
        .checked_add(piece.len() as u64 / s)
        .ok_or_else(|| overflow("a row piece's end"))?;
    let mut at = start;
    let mut rest = piece;
    while at < end {
        let block = at / b;
        let (block_start, block_end) = tensor.block_range(block);
        let stop = block_end.min(end);
        let n = to_usize((stop - at) * s, "a block's byte size")?;
        let (bytes, tail) = rest
            .split_at_checked(n)
            .ok_or_else(|| overflow("a block piece"))?;
        f(BlockPiece {
            block,
            start: at,
            bytes,
            whole: at == block_start && stop == block_end,
        })?;
        rest = tail;
        at = stop;
    }
    Ok(())
}
