//! The plan's wire form and identity: `plan_id` is `sha256:` + SHA-256 of the canonical
//! encoding (contract §5) of the plan without `plan_id` and with `"schema":"weight-plan"`,
//! as placement_id is built (§7.1). It names both placements' ids and digests.
//!
//! Regions are encoded once, as they are produced, from borrowed views (so no id is copied
//! per region). The payload is hashed over that text; the document is then assembled
//! around it in place. Every key, and its order, comes from the generated writers
//! (`wire::writers`, from `schema/plan.schema.json`).

use crate::canonical::{Hole, Raw, Sink};
use crate::model::Placement;
use crate::wire::writers::{reshard_plan_id, write_plan_region, write_reshard_plan};
use crate::wire::{PlanLoop, PlanPlacement, PlanTransform};

/// A region as the planner hands it over: the members of `PlanRegion`, borrowed.
pub(crate) struct RegionView<'a> {
    pub global_offset: &'a [u64],
    pub loops: &'a [PlanLoop],
    pub nbytes: u64,
    pub run_bytes: u64,
    pub shape: &'a [u64],
    pub source_fragment_id: &'a str,
    pub source_offset: u64,
    pub target_fragment_id: &'a str,
    pub target_offset: u64,
    pub tensor_id: &'a str,
    pub transform: Option<PlanTransform>,
}

/// The canonical encoding of `region`.
fn write_region(out: &mut Vec<u8>, region: &RegionView<'_>) {
    write_plan_region(
        out,
        region.global_offset,
        region.loops,
        &region.nbytes,
        &region.run_bytes,
        region.shape,
        region.source_fragment_id,
        &region.source_offset,
        region.target_fragment_id,
        &region.target_offset,
        region.tensor_id,
        region.transform.as_ref(),
    );
}

/// A sink that keeps the text before the [`Hole`] and the text after it apart.
#[derive(Default)]
struct AroundHole {
    head: Vec<u8>,
    tail: Vec<u8>,
    past: bool,
}

impl Sink for AroundHole {
    fn put(&mut self, bytes: &[u8]) {
        if self.past {
            &mut self.tail
        } else {
            &mut self.head
        }
        .extend_from_slice(bytes);
    }

    fn hole(&mut self) {
        self.past = true;
    }
}

/// Writes the canonical plan text region by region.
pub(crate) struct Writer {
    /// `[` + the regions so far; at the end, the whole document.
    regions: Vec<u8>,
    model_id: String,
    revision: String,
    source: PlanPlacement,
    target: PlanPlacement,
}

fn placement_ref(p: &Placement) -> PlanPlacement {
    PlanPlacement {
        digest: p.digest().to_owned(),
        placement_id: p.placement_id().to_owned(),
    }
}

impl Writer {
    /// Starts a plan from `source` to `target` of about `regions` regions.
    pub(crate) fn new(source: &Placement, target: &Placement, regions: u64) -> Writer {
        // Room for the regions and for the members around them (the model_id at most
        // six bytes per character escaped), so that assembling moves the text in place.
        let capacity = usize::try_from(regions)
            .unwrap_or(0)
            .saturating_mul(400)
            .saturating_add(1024)
            .saturating_add(source.model_id().len().saturating_mul(6))
            .saturating_add(source.revision().len().saturating_mul(6));
        let mut text = Vec::with_capacity(capacity);
        text.push(b'[');
        Writer {
            regions: text,
            model_id: source.model_id().to_owned(),
            revision: source.revision().to_owned(),
            source: placement_ref(source),
            target: placement_ref(target),
        }
    }

    /// Appends one region.
    pub(crate) fn region(&mut self, region: &RegionView<'_>) {
        if self.regions.len() > 1 {
            self.regions.push(b',');
        }
        write_region(&mut self.regions, region);
    }

    /// The canonical text and its plan_id.
    pub(crate) fn finish(mut self) -> (String, String) {
        self.regions.push(b']');
        let regions = Raw(&self.regions);
        let plan_id = reshard_plan_id(
            &self.model_id,
            &regions,
            &self.revision,
            &self.source,
            &self.target,
        );
        let mut around = AroundHole::default();
        write_reshard_plan(
            &mut around,
            &self.model_id,
            plan_id.as_str(),
            &Hole,
            &self.revision,
            &self.source,
            &self.target,
        );
        let mut json = self.regions;
        json.splice(0..0, around.head);
        json.extend_from_slice(&around.tail);
        // Only the canonical encoder's ASCII output went in.
        let json = String::from_utf8(json)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        (json, plan_id)
    }
}

#[cfg(test)]
mod tests {
    use super::{write_region, RegionView};
    use crate::canonical;
    use crate::wire::{PlanLoop, PlanRegion, PlanTransform};

    #[test]
    fn regions_are_written_as_the_serde_encoder_writes_them() {
        let loops = [
            PlanLoop {
                count: 3,
                source_stride: 48,
                target_stride: 16,
            },
            PlanLoop {
                count: u64::MAX,
                source_stride: 0,
                target_stride: 1,
            },
        ];
        for (loops, ids, transform) in [
            (&loops[..], ["s/0", "t\"\\\u{7f}é😀", "w"], None),
            (&loops[..0], ["logical:ab", "x", "layers.0.w"], None),
            (
                &loops[..1],
                ["s/1", "t/1", "w.weight"],
                Some(PlanTransform::Fp8E4m3BlockValues),
            ),
            (
                &loops[..0],
                ["s/1", "t/1s", "w.weight_scale_inv"],
                Some(PlanTransform::Fp8E4m3BlockScales),
            ),
        ] {
            // Every number distinct, so that two members swapped show.
            let view = RegionView {
                global_offset: &[0, 18_446_744_073_709_551_615],
                loops,
                nbytes: 1,
                run_bytes: 16,
                shape: &[3, 4],
                source_fragment_id: ids[0],
                source_offset: 12,
                target_fragment_id: ids[1],
                target_offset: 7,
                tensor_id: ids[2],
                transform,
            };
            let wire = PlanRegion {
                global_offset: view.global_offset.to_vec(),
                loops: view.loops.to_vec(),
                nbytes: view.nbytes,
                run_bytes: view.run_bytes,
                shape: view.shape.to_vec(),
                source_fragment_id: view.source_fragment_id.to_owned(),
                source_offset: view.source_offset,
                target_fragment_id: view.target_fragment_id.to_owned(),
                target_offset: view.target_offset,
                tensor_id: view.tensor_id.to_owned(),
                transform: view.transform,
            };
            let mut out = Vec::new();
            write_region(&mut out, &view);
            assert_eq!(out, canonical::to_vec(&wire).unwrap());
        }
    }
}
