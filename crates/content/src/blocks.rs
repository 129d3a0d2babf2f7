//! The value of every whole block of a fragment (contract §19.3), for delta updates: two
//! generations' values at one (row, block) differ exactly when (up to hash collisions) the
//! block's bytes do.

use std::fmt::Write as _;

use weight_manifest::error::Result;

use crate::hash;
use crate::partial::{partial_with, Partial};
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

/// In one pass over the fragment: its partial ([`crate::partial::partial_in`]) and the
/// values of its whole blocks, by row, then block (the order of [`block_values`], without
/// the coordinates, which the box determines). A delta's source hashes its bytes once for
/// both: the changed blocks, and the partial its update is verified against.
///
/// # Errors
///
/// As [`crate::partial::partial_in`].
pub fn partial_and_values(
    tensor: &Tensor,
    global_offset: &[u64],
    local_shape: &[u64],
    buffer: Buffer<'_>,
) -> Result<(Partial, Vec<u128>)> {
    // At most every block of every row (one more per row for a cut start), so the vector
    // is not regrown over a large fragment.
    let rows = local_shape
        .split_last()
        .map_or(1, |(_, outer)| outer.iter().product::<u64>());
    let per_row = local_shape
        .last()
        .map_or(1, |&m| m / tensor.block_elements().max(1) + 2);
    let mut values = Vec::with_capacity(
        usize::try_from(rows.saturating_mul(per_row))
            .unwrap_or(0)
            .min(1 << 28),
    );
    let partial = partial_with(tensor, global_offset, local_shape, buffer, |v| {
        values.push(v);
    })?;
    Ok((partial, values))
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

    #[test]
    fn one_pass_gives_the_partial_and_the_block_values() {
        let t = Tensor::new("w", &[4, 9], 2, 2).unwrap();
        let bytes: Vec<u8> = (0..32).collect();
        let (l, o, origin) = ([2, 8], [1, 1], [0, 0]);
        let buffer = || Buffer::contiguous(&bytes, &l, &origin);
        let (p, values) = partial_and_values(&t, &o, &l, buffer()).unwrap();
        assert_eq!(p, partial(&t, &o, &l, &bytes).unwrap());
        let each: Vec<u128> = block_values(&t, &o, &l, buffer())
            .unwrap()
            .iter()
            .map(|v| v.value)
            .collect();
        assert_eq!(values, each);
        assert_eq!(p.edges.len(), 2, "block 0 of each row is cut");
    }
}
