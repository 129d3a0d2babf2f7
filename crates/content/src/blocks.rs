//! The value of every whole block of a fragment (contract §19.3), for delta updates: two
//! generations' values at one (row, block) differ exactly when (up to hash collisions) the
//! block's bytes do.

use std::fmt::Write as _;

use weight_manifest::error::Result;

use crate::hash;
use crate::tensor::Tensor;
use crate::walk::{Buffer, Region};

/// One block's coordinate and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockValue {
    /// The row r.
    pub row: u64,
    /// The block j in the row.
    pub block: u64,
    /// value(r, j).
    pub value: u128,
}

/// The values of the blocks wholly inside the fragment (`global_offset`, `local_shape`)
/// whose bytes are a box of `buffer`, by row, then block. Blocks the box holds only part
/// of are left out.
///
/// # Errors
///
/// As [`crate::partial::partial_in`].
pub fn block_values(
    tensor: &Tensor,
    global_offset: &[u64],
    local_shape: &[u64],
    buffer: Buffer<'_>,
) -> Result<Vec<BlockValue>> {
    let region = Region {
        tensor,
        global_offset,
        local_shape,
        buffer,
    };
    let key = tensor.key();
    let mut out = Vec::new();
    region.for_each_block(|row, p| {
        if p.whole {
            out.push(BlockValue {
                row,
                block: p.block,
                value: hash::value(key, row, p.block, hash::content(p.bytes)),
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// The values as canonical JSON text (contract §5): an array of `{"block", "row",
/// "value"}`, `value` as the 32 lowercase hex digits of a partial sum, in the given order.
pub fn values_to_json(values: &[BlockValue]) -> String {
    let mut out = String::from("[");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            r#"{{"block":{},"row":{},"value":"{}"}}"#,
            v.block,
            v.row,
            hash::Digest(v.value).hex()
        );
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Digest;
    use crate::partial::partial;

    #[test]
    fn block_values_sum_to_the_partial_sum() {
        let t = Tensor::new("w", &[4, 9], 2, 2).unwrap();
        let bytes: Vec<u8> = (0..36).collect(); // box [1..3) x [1..10): 2 rows x 9 elements
        let l = [2, 9];
        let p = partial(&t, &[1, 0], &l, &bytes).unwrap();
        let origin = [0, 0];
        let values =
            block_values(&t, &[1, 0], &l, Buffer::contiguous(&bytes, &l, &origin)).unwrap();
        assert_eq!(values.len(), 10);
        assert_eq!((values[0].row, values[0].block), (1, 0));
        assert_eq!((values[9].row, values[9].block), (2, 4));
        let mut sum = Digest::default();
        for v in &values {
            sum.add(v.value);
        }
        assert_eq!(sum, p.sum);
        let cut = block_values(
            &t,
            &[1, 1],
            &[2, 8],
            Buffer::contiguous(&bytes[..32], &[2, 8], &origin),
        )
        .unwrap();
        assert_eq!(
            cut.len(),
            8,
            "blocks 1..=4 of each row are whole, block 0 is cut"
        );
        let text = values_to_json(&values[..1]);
        assert!(
            text.starts_with(r#"[{"block":0,"row":1,"value":""#),
            "{text}"
        );
        assert_eq!(values_to_json(&[]), "[]");
    }
}
