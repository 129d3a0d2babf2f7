//! Row-major strides (§10.3 step 4.3.5): the canonical stride of a contiguous view, in
//! elements, computed in one place for the readers that check it and the writers that
//! produce it.

/// The row-major contiguous strides of `shape`, in elements, from the last axis to the
/// first: the stride of axis k is the product of the extents after k. `None` from the
/// axis whose stride no longer fits in a u64 on (such a stride equals no u64).
#[inline]
pub(crate) fn row_major_strides_rev(shape: &[u64]) -> impl Iterator<Item = Option<u64>> + '_ {
    shape.iter().rev().scan(Some(1u64), |next, &extent| {
        let stride = *next;
        *next = next.and_then(|s| s.checked_mul(extent));
        Some(stride)
    })
}

/// The row-major contiguous strides of `shape`, in elements, first axis first; `None`
/// when one does not fit in a u64.
pub fn row_major_strides(shape: &[u64]) -> Option<Vec<u64>> {
    let mut strides = row_major_strides_rev(shape).collect::<Option<Vec<u64>>>()?;
    strides.reverse();
    Some(strides)
}

/// §10.3 step 4.3.5, given `stride` has one entry per axis of `shape` (checked before):
/// whether `stride` is canonical. Every axis must have its row-major stride, except that an
/// axis of extent 1 accepts any stride.
#[inline]
pub(crate) fn is_canonical_stride(shape: &[u64], stride: &[u64]) -> bool {
    shape.len() == stride.len()
        && shape
            .iter()
            .rev()
            .zip(stride.iter().rev())
            .zip(row_major_strides_rev(shape))
            .all(|((&extent, &given), expected)| extent == 1 || expected == Some(given))
}
