//! The overlaps counted by the first pass, kept compactly (numbers in flat arenas, ids by
//! reference) until every limit has held; at most `max_regions` of them, so the memory
//! they take is bounded by the limits.

use crate::wire::{PlanLoop, PlanTransform, TensorDescriptor};

use super::region::Geometry;
use super::walk::Overlap;

/// One counted overlap.
struct Record<'w> {
    tensor: &'w TensorDescriptor,
    target: usize,
    replicas: &'w [usize],
    transform: Option<PlanTransform>,
    /// `global_offset` then `shape` in `Pending::axes`.
    axes: usize,
    ndim: usize,
    /// Its loops in `Pending::loops`.
    loops: usize,
    nloops: usize,
    source_offset: u64,
    target_offset: u64,
    run_bytes: u64,
    nbytes: u64,
}

/// The counted overlaps, in plan order.
pub(crate) struct Pending<'w> {
    records: Vec<Record<'w>>,
    axes: Vec<u64>,
    loops: Vec<PlanLoop>,
}

/// A counted overlap, read back.
pub(crate) struct Counted<'w, 'p> {
    pub tensor: &'w TensorDescriptor,
    pub target: usize,
    pub replicas: &'w [usize],
    pub transform: Option<PlanTransform>,
    pub global_offset: &'p [u64],
    pub shape: &'p [u64],
    pub loops: &'p [PlanLoop],
    pub source_offset: u64,
    pub target_offset: u64,
    pub run_bytes: u64,
    pub nbytes: u64,
}

impl<'w> Pending<'w> {
    /// Room for `overlaps` overlaps of `ndim` axes and one loop each, reserved once: grown
    /// by doubling, the arenas were copied and faulted in about twice over.
    pub(crate) fn with_capacity(overlaps: usize, ndim: usize) -> Pending<'w> {
        Pending {
            records: Vec::with_capacity(overlaps),
            axes: Vec::with_capacity(overlaps.saturating_mul(2 * ndim)),
            loops: Vec::with_capacity(overlaps),
        }
    }

    /// Keeps `overlap`.
    pub(crate) fn push(&mut self, overlap: &Overlap<'w, '_>) {
        let g: &Geometry = overlap.geometry;
        self.records.push(Record {
            tensor: overlap.tensor,
            target: overlap.target,
            replicas: overlap.replicas,
            transform: overlap.transform,
            axes: self.axes.len(),
            ndim: g.shape.len(),
            loops: self.loops.len(),
            nloops: g.loops.len(),
            source_offset: g.source_offset,
            target_offset: g.target_offset,
            run_bytes: g.run_bytes,
            nbytes: g.nbytes,
        });
        self.axes.extend_from_slice(&g.global_offset);
        self.axes.extend_from_slice(&g.shape);
        self.loops.extend_from_slice(&g.loops);
    }

    /// The overlaps, in the order they were kept.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Counted<'w, '_>> {
        self.records.iter().map(|r| Counted {
            tensor: r.tensor,
            target: r.target,
            replicas: r.replicas,
            transform: r.transform,
            global_offset: &self.axes[r.axes..r.axes + r.ndim],
            shape: &self.axes[r.axes + r.ndim..r.axes + 2 * r.ndim],
            loops: &self.loops[r.loops..r.loops + r.nloops],
            source_offset: r.source_offset,
            target_offset: r.target_offset,
            run_bytes: r.run_bytes,
            nbytes: r.nbytes,
        })
    }
}
