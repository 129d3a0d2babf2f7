//! The walk over every (target fragment, source tile) overlap of a plan, in plan order:
//! tensors by tensor_id, target fragments by placement_fragment_id, source tiles in box
//! order. The index queries of one tensor share one [`Work`] budget: `max_geometry_work`
//! per source and target fragment of the tensor; running out is `limit_exceeded`, naming
//! the tensor.

use crate::error::Result;
use crate::geometry::Work;
use crate::model::Placement;
use crate::wire::{PlacementFragment, PlanTransform, TensorDescriptor};

use super::check::check_compatible;
use super::cover::{select, Covers};
use super::quantize::Quantization;
use super::region::Geometry;
use crate::coverage::group::{fragments_by_tensor, Groups};

/// One overlap of a target fragment with a source tile.
pub(crate) struct Overlap<'w, 'g> {
    pub tensor: &'w TensorDescriptor,
    /// Index of the target fragment.
    pub target: usize,
    /// The source fragments holding the tile, in rank order.
    pub replicas: &'w [usize],
    /// What the source computes for it, if anything (§17.8).
    pub transform: Option<PlanTransform>,
    /// Valid for this call only: the walk recomputes it in place.
    pub geometry: &'g Geometry,
}

struct TensorWork<'p> {
    /// The target's descriptor (its tensor_id and itemsize are the regions').
    tensor: &'p TensorDescriptor,
    covers: Covers,
    /// The tensor's index in the target, for its target fragments in `Walk::targets`.
    index: usize,
    /// The tensor's source fragments.
    sources: usize,
    transform: Option<PlanTransform>,
}

/// A checked pair of placements with the source covers of every tensor the target holds.
pub(crate) struct Walk<'p> {
    source: &'p Placement,
    target: &'p Placement,
    /// Target fragment indices by tensor, in fragment order.
    targets: Groups,
    work: Vec<TensorWork<'p>>,
    /// The source fragments with quantized tensors' boxes as their scale blocks, which
    /// the scale tensors' covers index (§17.8); empty when nothing is quantized.
    scale_view: Vec<PlacementFragment>,
    /// `max_geometry_work`: the units per box of every search.
    per_box: u64,
}

impl<'p> Walk<'p> {
    /// Checks the pair (`plan_model_mismatch`, the quantization's rules,
    /// `plan_tensor_mismatch`) and selects the covers (`plan_uncovered_tensor`, for the
    /// first such tensor by tensor_id). A tensor that no target fragment holds needs no
    /// cover; a scale tensor's cover is its quantized tensor's source boxes as scale
    /// blocks. Every search spends at most `per_box` units (`max_geometry_work`) per box.
    pub(crate) fn prepare(
        source: &'p Placement,
        target: &'p Placement,
        per_box: u64,
        quantization: Option<&Quantization>,
    ) -> Result<Walk<'p>> {
        let quantized = check_compatible(source, target, quantization)?;
        let sources = fragments_by_tensor(source);
        let targets = fragments_by_tensor(target);
        let source_tensors = source.tensors();
        let source_index = |id: &str| {
            source_tensors
                .binary_search_by(|t| t.tensor_id.as_str().cmp(id))
                .unwrap_or_else(|_| unreachable!("checked: the source holds {id}"))
        };
        let mut work = Vec::new();
        for (index, tensor) in target.tensors().iter().enumerate() {
            if targets.get(index).is_empty() {
                continue;
            }
            let role = quantized.by_target.get(&tensor.tensor_id);
            let transform = role.map(|(transform, _)| *transform);
            let (at, fragments) = match role {
                Some((PlanTransform::Fp8E4m3BlockScales, of)) => {
                    (source_index(of), quantized.scale_view.as_slice())
                }
                _ => (source_index(&tensor.tensor_id), source.fragments()),
            };
            let covers = select(tensor, fragments, sources.get(at), per_box)?;
            work.push(TensorWork {
                tensor,
                covers,
                index,
                sources: sources.get(at).len(),
                transform,
            });
        }
        Ok(Walk {
            source,
            target,
            targets,
            work,
            scale_view: quantized.scale_view,
            per_box,
        })
    }

    /// Calls `visit` with every overlap in plan order, and `walked(done, total)` after each
    /// tensor; stops at the first error.
    pub(crate) fn run<'w>(
        &'w self,
        visit: &mut dyn FnMut(&Overlap<'w, '_>) -> Result<()>,
        walked: &mut impl FnMut(usize, usize),
        source_dp: &dyn Fn(u64) -> u64,
    ) -> Result<()> {
        let targets = self.target.fragments();
        let mut hits: Vec<usize> = Vec::new();
        let mut end: Vec<u64> = Vec::new();
        let mut geometry = Geometry::default();
        for (done, work) in self.work.iter().enumerate() {
            let sources = match work.transform {
                Some(PlanTransform::Fp8E4m3BlockScales) => self.scale_view.as_slice(),
                _ => self.source.fragments(),
            };
            let mut turn = 0usize;
            let targets_of = self.targets.get(work.index);
            let mut budget = Work::new(self.per_box, work.sources.saturating_add(targets_of.len()));
            for &t in targets_of {
                let fragment = &targets[t];
                let cover = work
                    .covers
                    .for_target(source_dp(fragment.rank.dp), &mut turn);
                let frame = crate::geometry::BoxRef {
                    offset: &fragment.global_offset,
                    extent: &fragment.local_shape,
                };
                end.clear();
                end.extend((0..frame.offset.len()).map(|k| frame.end(k)));
                hits.clear();
                cover
                    .index
                    .for_each_intersecting(frame.offset, &end, &mut budget, &mut |h| hits.push(h))
                    .map_err(|e| e.error("source search", &work.tensor.tensor_id))?;
                hits.sort_unstable();
                for &h in &hits {
                    let tile = &cover.tiles[h];
                    let source_box = tile.boxref(sources);
                    if !geometry.intersect(source_box, frame) {
                        continue;
                    }
                    geometry.compute(source_box, frame, work.tensor.itemsize)?;
                    visit(&Overlap {
                        tensor: work.tensor,
                        target: t,
                        replicas: &tile.members,
                        transform: work.transform,
                        geometry: &geometry,
                    })?;
                }
            }
            walked(done + 1, self.work.len());
        }
        Ok(())
    }
}
