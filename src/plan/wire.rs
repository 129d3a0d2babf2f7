//! The plan's wire form and identity: `plan_id` is `sha256:` + SHA-256 of the canonical
//! encoding (contract §5) of the plan without `plan_id` and with `"schema":"weight-plan"`,
//! as placement_id is built (§7.1). It names both placements' ids and digests.
//!
//! Regions are encoded as they are produced, from borrowed views with the fields of
//! [`PlanRegion`](crate::wire::PlanRegion) (so no id is copied per region), straight into
//! the emitted text; the hashed payload reuses that text and differs only in its small
//! members. A region's members are written in their fixed (sorted) order with the
//! canonical encoder's own string and integer encodings, which is exactly what the
//! canonical encoding of `RegionView` gives (tested below and by the plan properties).

use serde::Serialize;

use crate::canonical::{self, HashSink, Sink};
use crate::model::Placement;
use crate::wire::{PlanLoop, PlanPlacement};

/// The literal schema tag of the plan_id payload.
const PLAN_SCHEMA_TAG: &str = "weight-plan";

/// A region as the encoder sees it: the fields of `PlanRegion`, in the same (sorted)
/// order, borrowed.
#[derive(Serialize)]
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
}

fn encode<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Plan members hold only strings, u64s, arrays and structs with sorted fields.
    canonical::write(value, out)
        .unwrap_or_else(|e| unreachable!("plan members are encodable: {e}"));
}

fn encoded<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    encode(value, &mut out);
    out
}

/// The canonical encoding of `region`: its members in sorted order, no whitespace.
fn write_region(out: &mut Vec<u8>, region: &RegionView<'_>) {
    out.extend_from_slice(b"{\"global_offset\":");
    canonical::put_u64s(out, region.global_offset);
    out.extend_from_slice(b",\"loops\":[");
    for (i, l) in region.loops.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"count\":");
        canonical::write_u64(out, l.count);
        out.extend_from_slice(b",\"source_stride\":");
        canonical::write_u64(out, l.source_stride);
        out.extend_from_slice(b",\"target_stride\":");
        canonical::write_u64(out, l.target_stride);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"nbytes\":");
    canonical::write_u64(out, region.nbytes);
    out.extend_from_slice(b",\"run_bytes\":");
    canonical::write_u64(out, region.run_bytes);
    out.extend_from_slice(b",\"shape\":");
    canonical::put_u64s(out, region.shape);
    out.extend_from_slice(b",\"source_fragment_id\":");
    canonical::write_str(out, region.source_fragment_id);
    out.extend_from_slice(b",\"source_offset\":");
    canonical::write_u64(out, region.source_offset);
    out.extend_from_slice(b",\"target_fragment_id\":");
    canonical::write_str(out, region.target_fragment_id);
    out.extend_from_slice(b",\"target_offset\":");
    canonical::write_u64(out, region.target_offset);
    out.extend_from_slice(b",\"tensor_id\":");
    canonical::write_str(out, region.tensor_id);
    out.push(b'}');
}

/// The members of a plan's plan_id payload but its regions, each as its canonical
/// encoding.
pub(crate) struct EncodedMembers<'a> {
    /// The model_id.
    pub model_id: &'a [u8],
    /// The revision.
    pub revision: &'a [u8],
    /// The source placement reference.
    pub source: &'a [u8],
    /// The target placement reference.
    pub target: &'a [u8],
}

/// The plan_id of a plan with these members: `sha256:` + SHA-256 of the canonical payload,
/// the members of the plan but `plan_id`, plus `"schema":"weight-plan"`, in sorted order.
/// `regions` writes the canonical encoding of the regions array. The writer and the
/// reader ([`Plan::from_json`](crate::Plan::from_json)) both call it.
pub(crate) fn plan_id(members: &EncodedMembers<'_>, regions: impl FnOnce(&mut dyn Sink)) -> String {
    let mut sink = HashSink::new();
    sink.put(b"{\"model_id\":");
    sink.put(members.model_id);
    sink.put(b",\"regions\":");
    regions(&mut sink);
    for piece in [
        &b",\"revision\":"[..],
        members.revision,
        b",\"schema\":",
        &encoded(PLAN_SCHEMA_TAG),
        b",\"source\":",
        members.source,
        b",\"target\":",
        members.target,
        b"}",
    ] {
        sink.put(piece);
    }
    format!("sha256:{}", canonical::hex(&sink.finish()))
}

/// Writes the canonical plan text region by region.
pub(crate) struct Writer {
    json: Vec<u8>,
    model: Vec<u8>,
    revision: Vec<u8>,
    source: Vec<u8>,
    target: Vec<u8>,
    /// Where the plan_id goes once the payload is hashed.
    slot: usize,
    regions_at: usize,
    first: bool,
}

/// The length of `"sha256:` + 64 hex digits + `"`.
const SLOT_LEN: usize = 1 + 7 + 64 + 1;

fn placement_ref(p: &Placement) -> PlanPlacement {
    PlanPlacement {
        digest: p.digest().to_owned(),
        placement_id: p.placement_id().to_owned(),
    }
}

impl Writer {
    /// Starts a plan from `source` to `target` of about `regions` regions.
    pub(crate) fn new(source: &Placement, target: &Placement, regions: u64) -> Writer {
        let capacity = usize::try_from(regions)
            .unwrap_or(0)
            .saturating_mul(400)
            .saturating_add(1024);
        let mut writer = Writer {
            json: Vec::with_capacity(capacity),
            model: encoded(source.model_id()),
            revision: encoded(source.revision()),
            source: encoded(&placement_ref(source)),
            target: encoded(&placement_ref(target)),
            slot: 0,
            regions_at: 0,
            first: true,
        };
        // Keys in code point order.
        writer.json.extend_from_slice(b"{\"model_id\":");
        writer.json.extend_from_slice(&writer.model);
        writer.json.extend_from_slice(b",\"plan_id\":");
        writer.slot = writer.json.len();
        writer.json.resize(writer.slot + SLOT_LEN, b'"');
        writer.json.extend_from_slice(b",\"regions\":");
        writer.regions_at = writer.json.len();
        writer.json.push(b'[');
        writer
    }

    /// Appends one region.
    pub(crate) fn region(&mut self, region: &RegionView<'_>) {
        if !self.first {
            self.json.push(b',');
        }
        self.first = false;
        write_region(&mut self.json, region);
    }

    /// The canonical text and its plan_id.
    pub(crate) fn finish(mut self) -> (String, String) {
        self.json.push(b']');
        let regions_end = self.json.len();
        for piece in [
            &b",\"revision\":"[..],
            &self.revision,
            b",\"source\":",
            &self.source,
            b",\"target\":",
            &self.target,
            b"}",
        ] {
            self.json.extend_from_slice(piece);
        }
        // The payload reuses the regions text.
        let members = EncodedMembers {
            model_id: &self.model,
            revision: &self.revision,
            source: &self.source,
            target: &self.target,
        };
        let regions = &self.json[self.regions_at..regions_end];
        let plan_id = plan_id(&members, |sink| sink.put(regions));
        let id_text = encoded(plan_id.as_str());
        if let Some(slot) = self.json.get_mut(self.slot..self.slot + SLOT_LEN) {
            if slot.len() == id_text.len() {
                slot.copy_from_slice(&id_text);
            }
        }
        let json = String::from_utf8(self.json)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        (json, plan_id)
    }
}

#[cfg(test)]
mod tests {
    use super::{encoded, write_region, RegionView};
    use crate::wire::PlanLoop;

    #[test]
    fn regions_are_written_as_the_canonical_encoder_writes_them() {
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
        for (loops, ids) in [
            (&loops[..], ["s/0", "t\"\\\u{7f}é😀", "w"]),
            (&loops[..0], ["logical:ab", "x", "layers.0.w"]),
        ] {
            let view = RegionView {
                global_offset: &[0, 18_446_744_073_709_551_615],
                loops,
                nbytes: 1,
                run_bytes: 16,
                shape: &[3, 4],
                source_fragment_id: ids[0],
                source_offset: 12,
                target_fragment_id: ids[1],
                target_offset: 0,
                tensor_id: ids[2],
            };
            let mut out = Vec::new();
            write_region(&mut out, &view);
            assert_eq!(out, encoded(&view));
        }
    }
}
