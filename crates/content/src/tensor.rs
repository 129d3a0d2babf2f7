//! A tensor's validated geometry, and the boxes of its fragments (contract §19.1).
//!
//! A tensor of global shape [d0, …, d(k−1)] is read as R rows of n = d(k−1) elements, R the
//! product of the other extents (1 for a 1-D tensor); row r is the row-major index over the
//! outer dimensions. Every size is checked once here, so the walks over the bytes need no
//! further overflow checks than the ones they repeat defensively.

use weight_manifest::error::Result;

use crate::errors::{overflow, shape_error};
use crate::hash;

/// The block size used when a manifest does not choose one.
pub const DEFAULT_BLOCK_ELEMENTS: u64 = 64;

/// A tensor whose digest is computed: id, global shape, itemsize and block size, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::struct_field_names)]
pub struct Tensor {
    tensor_id: String,
    shape: Vec<u64>,
    itemsize: u64,
    block_elements: u64,
    key: u128,
    rows: u64,
}

impl Tensor {
    /// Checks the geometry: at least one dimension, every extent, `itemsize` and
    /// `block_elements` at least 1, and the tensor's byte size at most 2^64−1
    /// (`content_shape_invalid` otherwise).
    pub fn new(
        tensor_id: &str,
        global_shape: &[u64],
        itemsize: u64,
        block_elements: u64,
    ) -> Result<Tensor> {
        check_shape(tensor_id, "global_shape", global_shape)?;
        if itemsize == 0 {
            return Err(shape_error(format!(
                "tensor {tensor_id}: itemsize must be at least 1"
            )));
        }
        if block_elements == 0 {
            return Err(shape_error("block_elements must be at least 1"));
        }
        let (outer, _) = global_shape.split_at(global_shape.len() - 1);
        let rows = product(outer).ok_or_else(|| overflow("the tensor's row count"))?;
        volume_bytes(global_shape, itemsize)
            .ok_or_else(|| overflow(&format!("tensor {tensor_id}: the byte size")))?;
        Ok(Tensor {
            tensor_id: tensor_id.to_owned(),
            shape: global_shape.to_vec(),
            itemsize,
            block_elements,
            key: hash::tensor_key(tensor_id),
            rows,
        })
    }

    /// The tensor_id.
    pub fn tensor_id(&self) -> &str {
        &self.tensor_id
    }

    /// The global shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Bytes per element.
    pub fn itemsize(&self) -> u64 {
        self.itemsize
    }

    /// The block size B, in elements.
    pub fn block_elements(&self) -> u64 {
        self.block_elements
    }

    /// XXH3-128 of the tensor_id: the key every block value is bound to.
    pub fn key(&self) -> u128 {
        self.key
    }

    /// R: the number of rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// n: the elements of a row (the innermost extent).
    pub fn row_elements(&self) -> u64 {
        self.shape[self.shape.len() - 1]
    }

    /// The number of blocks of a row: ceil(n / B).
    pub fn blocks_per_row(&self) -> u64 {
        self.row_elements().div_ceil(self.block_elements)
    }

    /// The element range [start, end) of block `block` of a row (`block` below
    /// [`Tensor::blocks_per_row`]).
    pub fn block_range(&self, block: u64) -> (u64, u64) {
        let n = self.row_elements();
        let start = block.saturating_mul(self.block_elements).min(n);
        (start, start + self.block_elements.min(n - start))
    }

    /// Checks that the box (`global_offset`, `local_shape`) lies inside the tensor, with
    /// the tensor's number of dimensions and every extent at least 1.
    pub fn check_box(&self, global_offset: &[u64], local_shape: &[u64]) -> Result<()> {
        let id = &self.tensor_id;
        check_shape(id, "local_shape", local_shape)?;
        if global_offset.len() != self.shape.len() || local_shape.len() != self.shape.len() {
            return Err(shape_error(format!(
                "tensor {id}: a box of global_offset {global_offset:?} and local_shape {local_shape:?} does not have the {} dimensions of global_shape {:?}",
                self.shape.len(),
                self.shape
            )));
        }
        for (axis, ((&o, &l), &g)) in global_offset
            .iter()
            .zip(local_shape)
            .zip(&self.shape)
            .enumerate()
        {
            if o.checked_add(l).is_none_or(|end| end > g) {
                return Err(shape_error(format!(
                    "tensor {id}: the box of global_offset {global_offset:?} and local_shape {local_shape:?} leaves global_shape {:?} on axis {axis}",
                    self.shape
                )));
            }
        }
        Ok(())
    }

    /// The outer coordinates of row `row` (below [`Tensor::rows`]), outermost first.
    pub(crate) fn row_coordinates(&self, mut row: u64) -> Vec<u64> {
        let outer = &self.shape[..self.shape.len() - 1];
        let mut coordinates = vec![0; outer.len()];
        for (c, &d) in coordinates.iter_mut().zip(outer).rev() {
            *c = row % d;
            row /= d;
        }
        coordinates
    }
}

/// Checks that `shape` has at least one dimension and every extent is at least 1.
pub(crate) fn check_shape(tensor_id: &str, name: &str, shape: &[u64]) -> Result<()> {
    if shape.is_empty() {
        return Err(shape_error(format!(
            "tensor {tensor_id}: {name} must not be empty"
        )));
    }
    if shape.contains(&0) {
        return Err(shape_error(format!(
            "tensor {tensor_id}: every extent of {name} {shape:?} must be at least 1"
        )));
    }
    Ok(())
}

/// The product of `values` (1 when empty), or `None` on overflow.
pub(crate) fn product(values: &[u64]) -> Option<u64> {
    values.iter().try_fold(1_u64, |p, &v| p.checked_mul(v))
}

/// The byte size of a row-major buffer of `shape` and `itemsize`, or `None` on overflow.
pub(crate) fn volume_bytes(shape: &[u64], itemsize: u64) -> Option<u64> {
    product(shape)?.checked_mul(itemsize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weight_manifest::error::Code;

    #[test]
    fn rows_blocks_and_ranges() {
        let t = Tensor::new("w", &[2, 3, 10], 2, 4).unwrap();
        assert_eq!((t.rows(), t.row_elements(), t.blocks_per_row()), (6, 10, 3));
        assert_eq!(t.block_range(0), (0, 4));
        assert_eq!(t.block_range(2), (8, 10));
        assert_eq!(t.row_coordinates(5), vec![1, 2]);
        let one = Tensor::new("v", &[5], 1, 64).unwrap();
        assert_eq!((one.rows(), one.blocks_per_row()), (1, 1));
        assert_eq!(one.block_range(0), (0, 5));
        let huge_block = Tensor::new("h", &[7], 1, u64::MAX).unwrap();
        assert_eq!(huge_block.block_range(0), (0, 7));
    }

    #[test]
    fn bad_geometry_is_content_shape_invalid() {
        let cases: Vec<(Vec<u64>, u64, u64, &str)> = vec![
            (vec![], 1, 1, "must not be empty"),
            (vec![2, 0], 1, 1, "at least 1"),
            (vec![2], 0, 1, "itemsize"),
            (vec![2], 1, 0, "block_elements"),
            (vec![u64::MAX, 2, 1], 1, 1, "row count"),
            (vec![u64::MAX], 2, 1, "byte size"),
        ];
        for (shape, itemsize, b, needle) in cases {
            let e = Tensor::new("w", &shape, itemsize, b).unwrap_err();
            assert_eq!(e.code(), Code::ContentShapeInvalid);
            assert!(e.message().contains(needle), "{}", e.message());
        }
    }

    #[test]
    fn boxes_must_fit() {
        let t = Tensor::new("w", &[4, 6], 1, 4).unwrap();
        assert!(t.check_box(&[2, 3], &[2, 3]).is_ok());
        for (o, l) in [
            (vec![2, 4], vec![2, 3]),
            (vec![0], vec![4]),
            (vec![0, 0], vec![0, 6]),
            (vec![u64::MAX, 0], vec![2, 6]),
            (vec![0, 0, 0], vec![1, 1, 1]),
            // Only one of the two has another number of dimensions.
            (vec![0, 0], vec![1, 1, 1]),
            (vec![0, 0, 0], vec![1, 1]),
        ] {
            let e = t.check_box(&o, &l).unwrap_err();
            assert_eq!(e.code(), Code::ContentShapeInvalid, "{o:?} {l:?}");
        }
    }
}
