//! A bound pair's copies lowered to contiguous segments: the (source address, target
//! address, length) triples a transfer engine's batch calls take.
//!
//! A copy is one run of `run_bytes` repeated over its loops (outermost first). Its runs
//! are listed in loop order, and a run that starts where the previous one ended on both
//! sides, between the same two devices, is merged into it, across copies too, so packed
//! fragments that follow each other in both buffers cost one operation. A worker may hold
//! several devices, each its own address space (contract §8.5), so every segment names
//! its (source device, target device) pair, and the copy its first run belongs to. A
//! transformed copy's source offsets are in its source fragment's quantized form (§17.8),
//! not addresses: its runs merge with each other only, never with another copy's.

use crate::error::{Code, Error, Result};
use crate::wire::BoundCopy;

/// Contiguous segments, as four columns of equal length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segments {
    /// The first source byte of each segment.
    pub source: Vec<u64>,
    /// The first target byte of each segment.
    pub target: Vec<u64>,
    /// The bytes of each segment.
    pub length: Vec<u64>,
    /// The index into `devices` of each segment's (source device, target device).
    pub device: Vec<u32>,
    /// The distinct (source device, target device) pairs, in order of first use.
    pub devices: Vec<(String, String)>,
    /// The index (in the copies given) of the copy each segment's first run belongs to.
    pub copy: Vec<u32>,
    /// Whether the next run starts a segment of its own (after or in a transformed copy).
    fenced: bool,
}

impl Segments {
    /// The number of segments.
    pub fn len(&self) -> usize {
        self.length.len()
    }

    /// Whether there is no segment.
    pub fn is_empty(&self) -> bool {
        self.length.is_empty()
    }

    /// The index of a copy's device pair, added on first use.
    fn device_index(&mut self, copy: &BoundCopy) -> Result<u32> {
        let (s, t) = (&copy.source.device, &copy.target.device);
        // Copies of one device pair come in runs, so the last pair is the usual hit.
        let found = self.devices.iter().rposition(|(ds, dt)| ds == s && dt == t);
        let index = found.unwrap_or_else(|| {
            self.devices.push((s.clone(), t.clone()));
            self.devices.len() - 1
        });
        u32::try_from(index).map_err(|_| overflow())
    }

    fn push(&mut self, at: (u32, u32), source: u64, target: u64, length: u64) -> Result<()> {
        let (copy, device) = at;
        if source.checked_add(length).is_none() || target.checked_add(length).is_none() {
            return Err(overflow());
        }
        let fenced = std::mem::take(&mut self.fenced);
        if let Some(last) = self.length.len().checked_sub(1).filter(|_| !fenced) {
            let (s, t, n) = (self.source[last], self.target[last], self.length[last]);
            let adjacent = s.checked_add(n) == Some(source) && t.checked_add(n) == Some(target);
            if adjacent && self.device[last] == device {
                self.length[last] = n.checked_add(length).ok_or_else(overflow)?;
                return Ok(());
            }
        }
        self.source.push(source);
        self.target.push(target);
        self.length.push(length);
        self.device.push(device);
        self.copy.push(copy);
        Ok(())
    }
}

fn overflow() -> Error {
    Error::new(
        Code::PlanBindingRangeInvalid,
        "a segment's address or length exceeds 2^64-1",
    )
}

/// The runs of `copy` before merging: run_bytes times the product of the loop counts.
fn runs(copy: &BoundCopy) -> Option<u64> {
    copy.loops
        .iter()
        .try_fold(1u64, |n, l| n.checked_mul(l.count))
}

/// Lowers `copies` (one bound pair's, in order) to merged contiguous segments.
///
/// # Errors
///
/// `plan_limit_exceeded` when the copies have more than `max_segments` runs before merging
/// (checked before anything is allocated); `plan_binding_range_invalid` when an address or
/// a merged length does not fit in a u64 (possible only for a bound plan read from a
/// document, which nobody checked against live bindings).
pub fn segments(copies: &[BoundCopy], max_segments: u64) -> Result<Segments> {
    let total = copies
        .iter()
        .try_fold(0u64, |n, c| runs(c).and_then(|r| n.checked_add(r)));
    let total = match total {
        Some(total) if total <= max_segments => total,
        _ => {
            return Err(Error::new(
                Code::PlanLimitExceeded,
                format!("the copies have more than {max_segments} contiguous runs"),
            ))
        }
    };
    // Reserve for the runs, up to a bound: merging may leave far fewer segments.
    let capacity = usize::try_from(total.min(1 << 16)).unwrap_or(0);
    let mut out = Segments {
        source: Vec::with_capacity(capacity),
        target: Vec::with_capacity(capacity),
        length: Vec::with_capacity(capacity),
        device: Vec::with_capacity(capacity),
        devices: Vec::new(),
        copy: Vec::with_capacity(capacity),
        fenced: false,
    };
    for (index, copy) in copies.iter().enumerate() {
        let index = u32::try_from(index).map_err(|_| overflow())?;
        lower(index, copy, &mut out)?;
    }
    out.fenced = false;
    Ok(out)
}

/// Appends the runs of copy `index`, walking its loops as an odometer (innermost
/// fastest). A transformed copy's runs start a segment of their own, and so does the run
/// after them.
fn lower(index: u32, copy: &BoundCopy, out: &mut Segments) -> Result<()> {
    if copy.run_bytes == 0 || copy.loops.iter().any(|l| l.count == 0) {
        return Ok(());
    }
    let device = out.device_index(copy)?;
    let transformed = copy.transform.is_some();
    out.fenced |= transformed;
    let at = (index, device);
    let mut odometer = vec![0u64; copy.loops.len()];
    loop {
        let (mut source, mut target) = (copy.source.address, copy.target.address);
        for (i, l) in odometer.iter().zip(&copy.loops) {
            let step = |stride: u64| i.checked_mul(stride).ok_or_else(overflow);
            source = source
                .checked_add(step(l.source_stride)?)
                .ok_or_else(overflow)?;
            target = target
                .checked_add(step(l.target_stride)?)
                .ok_or_else(overflow)?;
        }
        out.push(at, source, target, copy.run_bytes)?;
        // The odometer: advance the innermost loop, carrying into the outer ones.
        let mut axis = odometer.len();
        loop {
            let Some(a) = axis.checked_sub(1) else {
                out.fenced = transformed;
                return Ok(());
            };
            axis = a;
            odometer[a] += 1;
            if odometer[a] < copy.loops[a].count {
                break;
            }
            odometer[a] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{BoundLocation, PlanLoop};
    use std::collections::BTreeMap;

    fn copy(source: u64, target: u64, run: u64, loops: &[(u64, u64, u64)]) -> BoundCopy {
        on("cpu", source, target, run, loops)
    }

    fn on(
        device: &str,
        source: u64,
        target: u64,
        run: u64,
        loops: &[(u64, u64, u64)],
    ) -> BoundCopy {
        let at = |address| BoundLocation {
            address,
            device: device.into(),
            endpoint: "e".into(),
            worker_id: "w".into(),
        };
        let loops: Vec<PlanLoop> = loops
            .iter()
            .map(|&(count, source_stride, target_stride)| PlanLoop {
                count,
                source_stride,
                target_stride,
            })
            .collect();
        let nbytes = loops.iter().fold(run, |n, l| n.wrapping_mul(l.count));
        BoundCopy {
            loops,
            nbytes,
            run_bytes: run,
            source: at(source),
            source_fragment_id: "s".into(),
            target: at(target),
            target_fragment_id: "t".into(),
            tensor_id: "x".into(),
            transform: None,
        }
    }

    /// Brute force: every byte the copies move, target address -> source address.
    fn byte_map(copies: &[BoundCopy]) -> BTreeMap<u64, u64> {
        let mut map = BTreeMap::new();
        for c in copies {
            let counts: Vec<u64> = c.loops.iter().map(|l| l.count).collect();
            let total: u64 = counts.iter().product();
            for flat in 0..total {
                let (mut rest, mut s, mut t) = (flat, c.source.address, c.target.address);
                for (l, _) in c.loops.iter().zip(&counts).rev() {
                    let i = rest % l.count;
                    rest /= l.count;
                    s += i * l.source_stride;
                    t += i * l.target_stride;
                }
                for b in 0..c.run_bytes {
                    map.insert(t + b, s + b);
                }
            }
        }
        map
    }

    fn segment_map(s: &Segments) -> BTreeMap<u64, u64> {
        let mut map = BTreeMap::new();
        for i in 0..s.len() {
            for b in 0..s.length[i] {
                map.insert(s.target[i] + b, s.source[i] + b);
            }
        }
        map
    }

    #[test]
    fn segments_move_exactly_the_copies_bytes() {
        let copies = [
            copy(1000, 5000, 4, &[(3, 16, 8), (2, 4, 4)]),
            copy(2000, 9000, 8, &[]),
            copy(2008, 9008, 8, &[(2, 8, 8)]),
        ];
        let s = segments(&copies, 100).unwrap();
        assert_eq!(segment_map(&s), byte_map(&copies));
        // The inner loop of the first copy is adjacent on both sides (4 = run), so each of
        // its 3 outer steps is one segment; the last two copies continue the second one.
        assert_eq!(s.len(), 4);
        assert_eq!((s.source[3], s.target[3], s.length[3]), (2000, 9000, 24));
    }

    #[test]
    fn runs_on_other_devices_are_not_merged() {
        let copies = [on("cuda:0", 0, 100, 8, &[]), on("cuda:1", 8, 108, 8, &[])];
        let s = segments(&copies, 10).unwrap();
        assert_eq!(s.length, [8, 8]);
        assert_eq!(s.device, [0, 1]);
        assert_eq!(s.devices[1], ("cuda:1".to_owned(), "cuda:1".to_owned()));
    }

    #[test]
    fn too_many_runs_are_refused_before_allocating() {
        let hostile = copy(1, 1, 1, &[(u64::MAX, 1, 1), (u64::MAX, 1, 1)]);
        let e = segments(&[hostile], 1 << 20).unwrap_err();
        assert_eq!(e.code(), Code::PlanLimitExceeded);
        let many = copy(1, 1, 1, &[(5, 2, 2)]);
        assert_eq!(segments(std::slice::from_ref(&many), 5).unwrap().len(), 5);
        assert!(segments(&[many], 4).is_err());
    }

    #[test]
    fn an_address_past_u64_is_an_error() {
        let e = segments(&[copy(u64::MAX - 2, 0, 4, &[(2, 8, 8)])], 10).unwrap_err();
        assert_eq!(e.code(), Code::PlanBindingRangeInvalid);
    }

    #[test]
    fn a_copy_of_no_bytes_has_no_segment() {
        // A loop of count 0, or runs of 0 bytes: the product of the counts times the run
        // is 0 bytes, so nothing is listed (not one run at the loops' origin).
        for empty in [
            copy(8, 8, 4, &[(0, 8, 8)]),
            copy(8, 8, 4, &[(3, 8, 8), (0, 64, 64)]),
            copy(8, 8, 0, &[(2, 8, 8)]),
        ] {
            assert_eq!(segments(&[empty], 10).unwrap(), Segments::default());
        }
    }

    #[test]
    fn a_single_run_ending_past_u64_on_either_side_is_an_error() {
        // One run, no loop: only the segment's own end can overflow, on one side each.
        for (source, target) in [(u64::MAX - 2, 0), (0, u64::MAX - 2)] {
            let e = segments(&[copy(source, target, 4, &[])], 10).unwrap_err();
            assert_eq!(e.code(), Code::PlanBindingRangeInvalid);
            assert_eq!(e.message(), "a segment's address or length exceeds 2^64-1");
        }
        // Ending exactly at 2^64-1 is fine.
        let last = segments(&[copy(u64::MAX - 4, u64::MAX - 4, 4, &[])], 10).unwrap();
        assert_eq!(last.length, vec![4]);
    }

    #[test]
    fn a_transformed_copys_runs_merge_only_with_each_other() {
        // Adjacent on both sides throughout: untransformed copies merge across copies, a
        // transformed copy (offsets in its source's quantized form) stands alone, and its
        // own adjacent runs merge.
        let mut quantized = copy(8, 108, 4, &[(2, 4, 4)]);
        quantized.transform = Some(crate::wire::PlanTransform::Fp8E4m3BlockValues);
        let copies = [
            copy(0, 100, 8, &[]),
            quantized,
            copy(16, 116, 8, &[]),
            copy(24, 124, 8, &[]),
        ];
        let s = segments(&copies, 10).unwrap();
        assert_eq!(s.length, [8, 8, 16]);
        assert_eq!(s.copy, [0, 1, 2]);
        // Without the transform, the four copies are one segment.
        let mut plain = copies.clone();
        plain[1].transform = None;
        let s = segments(&plain, 10).unwrap();
        assert_eq!(
            (s.length.as_slice(), s.copy.as_slice()),
            ([32].as_slice(), [0].as_slice())
        );
    }
}
