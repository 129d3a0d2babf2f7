//! The geometry of one region: the overlap of a target fragment with a source tile, as
//! byte offsets into both row-major buffers, one contiguous run length and the outer
//! loops with their byte strides.

use crate::error::{Code, Error, Result};
use crate::geometry::BoxRef;
use crate::wire::PlanLoop;

/// A region's geometry, before it is tied to particular fragments. It is recomputed in
/// place for each overlap, so walking a plan allocates nothing per region.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub global_offset: Vec<u64>,
    pub shape: Vec<u64>,
    pub source_offset: u64,
    pub target_offset: u64,
    pub run_bytes: u64,
    pub loops: Vec<PlanLoop>,
    /// Number of contiguous runs: the product of the loop counts.
    pub segments: u64,
    pub nbytes: u64,
}

fn overflow() -> Error {
    Error::new(
        Code::U64Overflow,
        "plan byte offset must fit in an unsigned 64-bit integer",
    )
}

fn mul(a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b).ok_or_else(overflow)
}

fn add(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(overflow)
}

impl Geometry {
    /// Sets `global_offset` and `shape` to the intersection of two boxes with the same
    /// number of axes; `false` (and the fields unspecified) when they do not intersect.
    pub(crate) fn intersect(&mut self, a: BoxRef<'_>, b: BoxRef<'_>) -> bool {
        self.global_offset.clear();
        self.shape.clear();
        for k in 0..a.offset.len() {
            let lo = a.offset[k].max(b.offset[k]);
            let hi = a.end(k).min(b.end(k));
            if hi <= lo {
                return false;
            }
            self.global_offset.push(lo);
            self.shape.push(hi - lo);
        }
        true
    }

    /// The geometry of copying the intersection of `source` and `target` (after
    /// [`Geometry::intersect`] returned `true`), both buffers row-major with
    /// `itemsize`-byte elements. Trailing axes merge into the run while the overlap spans
    /// them fully in both buffers; outer axes of extent 1 are dropped, and adjacent outer
    /// loops merge when they step through memory as one loop on both sides.
    pub(crate) fn compute(
        &mut self,
        source: BoxRef<'_>,
        target: BoxRef<'_>,
        itemsize: u64,
    ) -> Result<()> {
        let (start, shape) = (&self.global_offset, &self.shape);
        let ndim = shape.len();
        // The run covers axes `first..`: every axis after `first` is spanned fully by
        // the overlap in both buffers.
        let mut first = ndim.saturating_sub(1);
        while first > 0
            && shape[first] == source.extent[first]
            && shape[first] == target.extent[first]
        {
            first -= 1;
        }
        // One pass from the innermost axis: row-major strides, the start offsets, the
        // run, and the loops (innermost first, merged into the next inner one when they
        // step through memory as one loop on both sides).
        let (mut source_stride, mut target_stride) = (itemsize, itemsize);
        let (mut source_offset, mut target_offset) = (0u64, 0u64);
        let mut run_bytes = itemsize;
        self.loops.clear();
        for k in (0..ndim).rev() {
            let local =
                |frame: BoxRef<'_>| start[k].checked_sub(frame.offset[k]).ok_or_else(overflow);
            source_offset = add(source_offset, mul(local(source)?, source_stride)?)?;
            target_offset = add(target_offset, mul(local(target)?, target_stride)?)?;
            if k >= first {
                run_bytes = mul(run_bytes, shape[k])?;
            } else if shape[k] > 1 {
                match self.loops.last_mut() {
                    Some(inner)
                        if source_stride == mul(inner.count, inner.source_stride)?
                            && target_stride == mul(inner.count, inner.target_stride)? =>
                    {
                        inner.count = mul(inner.count, shape[k])?;
                    }
                    _ => self.loops.push(PlanLoop {
                        count: shape[k],
                        source_stride,
                        target_stride,
                    }),
                }
            }
            source_stride = mul(source_stride, source.extent[k])?;
            target_stride = mul(target_stride, target.extent[k])?;
        }
        self.loops.reverse();
        self.segments = self.loops.iter().try_fold(1u64, |n, l| mul(n, l.count))?;
        self.nbytes = mul(run_bytes, self.segments)?;
        self.source_offset = source_offset;
        self.target_offset = target_offset;
        self.run_bytes = run_bytes;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Geometry;
    use crate::geometry::BoxRef;
    use crate::wire::PlanLoop;

    fn boxref<'a>(offset: &'a [u64], extent: &'a [u64]) -> BoxRef<'a> {
        BoxRef { offset, extent }
    }

    fn geometry(s: BoxRef<'_>, t: BoxRef<'_>, itemsize: u64) -> Geometry {
        let mut g = Geometry::default();
        assert!(g.intersect(s, t));
        g.compute(s, t, itemsize).unwrap();
        g
    }

    #[test]
    fn a_column_block_is_one_strided_region() {
        // Source holds columns 0..4 of an 8x8 tensor, target columns 2..6.
        let (so, se) = ([0, 0], [8, 4]);
        let (to, te) = ([0, 2], [8, 4]);
        let (s, t) = (boxref(&so, &se), boxref(&to, &te));
        let g = geometry(s, t, 2);
        assert_eq!(g.global_offset, vec![0, 2]);
        assert_eq!(g.shape, vec![8, 2]);
        assert_eq!((g.source_offset, g.target_offset), (4, 0));
        assert_eq!(g.run_bytes, 4);
        assert_eq!(
            g.loops,
            vec![PlanLoop {
                count: 8,
                source_stride: 8,
                target_stride: 8
            }]
        );
        assert_eq!((g.segments, g.nbytes), (8, 32));
    }

    #[test]
    fn full_trailing_axes_merge_into_one_run() {
        let (so, se) = ([0, 0, 0], [4, 3, 5]);
        let (to, te) = ([2, 0, 0], [2, 3, 5]);
        let (s, t) = (boxref(&so, &se), boxref(&to, &te));
        let g = geometry(s, t, 4);
        assert_eq!((g.source_offset, g.target_offset), (2 * 15 * 4, 0));
        assert_eq!(g.run_bytes, 2 * 15 * 4);
        assert!(g.loops.is_empty());
        assert_eq!(g.segments, 1);
    }

    #[test]
    fn outer_loops_merge_when_they_step_as_one() {
        // Overlap spans axes 0 and 1 fully but only half of axis 2.
        let (so, se) = ([0, 0, 0], [2, 3, 8]);
        let (to, te) = ([0, 0, 4], [2, 3, 4]);
        let (s, t) = (boxref(&so, &se), boxref(&to, &te));
        let g = geometry(s, t, 1);
        assert_eq!(
            g.loops,
            vec![PlanLoop {
                count: 6,
                source_stride: 8,
                target_stride: 4
            }]
        );
        assert_eq!((g.source_offset, g.run_bytes, g.nbytes), (4, 4, 24));
    }

    #[test]
    fn disjoint_boxes_do_not_intersect() {
        let (a, b) = (([0], [4]), ([4], [4]));
        assert!(!Geometry::default().intersect(boxref(&a.0, &a.1), boxref(&b.0, &b.1)));
    }

    #[test]
    fn overflowing_offsets_are_errors() {
        let (o, e) = ([0, 0], [u64::MAX, 2]);
        let b = boxref(&o, &e);
        let mut g = Geometry::default();
        assert!(g.intersect(b, boxref(&o, &[1, 2])));
        let error = g.compute(b, b, 4).unwrap_err();
        assert_eq!(error.code().as_str(), "u64_overflow");
    }
}
