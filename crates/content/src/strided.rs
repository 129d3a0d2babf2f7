//! A strided view of a fragment in a caller's memory (a C++ engine's tensor, bytes landed
//! in a larger buffer), gathered into the fragment's contiguous row-major bytes, which
//! [`crate::partial::partial`] and [`crate::blocks::block_values`] read.
//!
//! Every byte the view names is checked to lie inside the memory before any is read: an
//! element at index (i0, …, i(k−1)) starts at Σ i_d · stride_d (the strides in bytes) and spans itemsize
//! bytes, and the largest such end must be at most the memory's length.

use weight_manifest::error::{Code, Error, Result};

use crate::errors::{overflow, shape_error};

fn buffer_error(message: String) -> Error {
    Error::new(Code::ContentBufferInvalid, message)
}

/// The bytes of the view of `local_shape` with byte strides `strides_bytes` over `memory`
/// (element (0, …, 0) at byte 0), in row-major order of `local_shape`.
///
/// # Errors
///
/// `content_shape_invalid` for a shape without dimensions, a zero extent or itemsize, a
/// stride list of another length, or sizes past 2^64 − 1; `content_buffer_invalid` when
/// the view reaches past the end of `memory`.
pub fn gather(
    memory: &[u8],
    local_shape: &[u64],
    strides_bytes: &[u64],
    itemsize: u64,
) -> Result<Vec<u8>> {
    if local_shape.is_empty() || local_shape.contains(&0) || itemsize == 0 {
        return Err(shape_error(format!(
            "a strided view needs at least one dimension, extents and itemsize of at least 1: shape {local_shape:?}, itemsize {itemsize}"
        )));
    }
    if strides_bytes.len() != local_shape.len() {
        return Err(shape_error(format!(
            "a view of shape {local_shape:?} has {} strides, not {}",
            strides_bytes.len(),
            local_shape.len()
        )));
    }
    // The last byte the view names, + 1: Σ (extent − 1) · stride + itemsize.
    let mut end = itemsize;
    for (&extent, &stride) in local_shape.iter().zip(strides_bytes) {
        end = (extent - 1)
            .checked_mul(stride)
            .and_then(|reach| end.checked_add(reach))
            .ok_or_else(|| overflow("the view's last byte"))?;
    }
    if end > memory.len() as u64 {
        return Err(buffer_error(format!(
            "a view of shape {local_shape:?} with byte strides {strides_bytes:?} and itemsize {itemsize} reaches byte {end}, past the {} bytes given",
            memory.len()
        )));
    }
    let total = local_shape
        .iter()
        .try_fold(itemsize, |p, &e| p.checked_mul(e))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| overflow("the view's byte size"))?;
    let mut out = Vec::with_capacity(total);
    // Every offset below is at most `end` − itemsize, checked above against the memory.
    let size = usize::try_from(itemsize).map_err(|_| overflow("the itemsize"))?;
    let k = local_shape.len();
    let mut index = vec![0_u64; k];
    loop {
        let start: u64 = index.iter().zip(strides_bytes).map(|(i, s)| i * s).sum();
        let start = usize::try_from(start).map_err(|_| overflow("a view offset"))?;
        let element = memory
            .get(start..start + size)
            .ok_or_else(|| buffer_error(format!("a view offset {start} is past the memory")))?;
        out.extend_from_slice(element);
        let mut axis = k;
        loop {
            if axis == 0 {
                return Ok(out);
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < local_shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_a_column_block_of_a_larger_buffer() {
        // A [3, 5] buffer of u16 (bytes 0..30); the view [3, 2] at column 1: stride 10, 2.
        let memory: Vec<u8> = (0..30).collect();
        let got = gather(&memory[2..], &[3, 2], &[10, 2], 2).unwrap();
        assert_eq!(got, vec![2, 3, 4, 5, 12, 13, 14, 15, 22, 23, 24, 25]);
        // Transposed: the view [2, 3] of the same columns, strides (2, 10).
        let got = gather(&memory[2..], &[2, 3], &[2, 10], 2).unwrap();
        assert_eq!(got, vec![2, 3, 12, 13, 22, 23, 4, 5, 14, 15, 24, 25]);
    }

    #[test]
    fn the_last_byte_must_be_inside_the_memory() {
        let memory = [0_u8; 26];
        // The view's last element ends at 2·10 + 1·2 + 2 = 24 <= 26.
        assert!(gather(&memory, &[3, 2], &[10, 2], 2).is_ok());
        let exact = gather(&memory[..24], &[3, 2], &[10, 2], 2);
        assert!(exact.is_ok());
        let short = gather(&memory[..23], &[3, 2], &[10, 2], 2).unwrap_err();
        assert_eq!(short.code(), Code::ContentBufferInvalid);
        assert!(
            short
                .message()
                .contains("reaches byte 24, past the 23 bytes"),
            "{short}"
        );
        let wrap = gather(&memory, &[3, 2], &[u64::MAX / 2, 2], 2).unwrap_err();
        assert_eq!(wrap.code(), Code::ContentShapeInvalid);
        let rank = gather(&memory, &[3, 2], &[10], 2).unwrap_err();
        assert_eq!(rank.code(), Code::ContentShapeInvalid);
        let zero = gather(&memory, &[3, 0], &[10, 2], 2).unwrap_err();
        assert_eq!(zero.code(), Code::ContentShapeInvalid);
    }
}
