//! [`BoxRef`]: the N-D half-open box every search of this module takes.

/// An N-D half-open box: on axis k it covers [offset[k], offset[k] + extent[k]).
/// Callers guarantee equal lengths and that every end fits in u64 (checked by §8.2 F4/F5).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxRef<'a> {
    pub offset: &'a [u64],
    pub extent: &'a [u64],
}

impl BoxRef<'_> {
    /// The exclusive end on `axis`.
    pub(crate) fn end(&self, axis: usize) -> u64 {
        self.offset[axis].saturating_add(self.extent[axis])
    }

    /// Whether the boxes intersect: on every axis each starts before the other ends.
    pub(crate) fn intersects(&self, other: &BoxRef<'_>) -> bool {
        (0..self.offset.len())
            .all(|k| self.offset[k] < other.end(k) && other.offset[k] < self.end(k))
    }
}
