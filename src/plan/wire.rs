//! The plan's wire form and identity: `plan_id` is `sha256:` + SHA-256 of the canonical
//! encoding (contract §5) of the plan without `plan_id` and with `"schema":"weight-plan"`,
//! as placement_id is built (§7.1). It names both placements' ids and digests.
//!
//! The regions are encoded once, into the emitted text; the hashed payload reuses that
//! encoding and differs only in its small members.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::model::Placement;
use crate::wire::{PlanPlacement, PlanRegion, ReshardPlan};

/// The literal schema tag of the plan_id payload.
const PLAN_SCHEMA_TAG: &str = "weight-plan";

/// A built plan: the wire value and its canonical text.
pub(crate) struct Built {
    pub wire: ReshardPlan,
    pub json: String,
}

fn placement_ref(p: &Placement) -> PlanPlacement {
    PlanPlacement {
        digest: p.digest().to_owned(),
        placement_id: p.placement_id().to_owned(),
    }
}

fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // Plan members hold only strings, u64s, arrays and structs with sorted fields.
    canonical::to_vec(value).unwrap_or_else(|e| unreachable!("plan members are encodable: {e}"))
}

/// The wire plan for `regions`, with its plan_id and canonical text.
pub(crate) fn build(source: &Placement, target: &Placement, regions: Vec<PlanRegion>) -> Built {
    let (source_ref, target_ref) = (placement_ref(source), placement_ref(target));
    let model = encode(source.model_id());
    let revision = encode(source.revision());
    let schema = encode(PLAN_SCHEMA_TAG);
    let (source_text, target_text) = (encode(&source_ref), encode(&target_ref));

    // The emitted text (keys in code point order), written once; the plan_id goes into a
    // slot of its fixed length once the payload is hashed.
    let slot_len = "\"sha256:\"".len() + 64;
    let mut json: Vec<u8> = Vec::with_capacity(regions.len().saturating_mul(320) + 1024);
    json.extend_from_slice(b"{\"model_id\":");
    json.extend_from_slice(&model);
    json.extend_from_slice(b",\"plan_id\":");
    let slot = json.len();
    json.resize(slot + slot_len, b'"');
    json.extend_from_slice(b",\"regions\":");
    let regions_at = json.len();
    canonical::write(&regions, &mut json)
        .unwrap_or_else(|e| unreachable!("plan members are encodable: {e}"));
    let regions_end = json.len();
    for piece in [
        &b",\"revision\":"[..],
        &revision,
        b",\"source\":",
        &source_text,
        b",\"target\":",
        &target_text,
        b"}",
    ] {
        json.extend_from_slice(piece);
    }

    // The payload: `schema` instead of `plan_id`, the same regions text.
    let mut hasher = Sha256::new();
    for piece in [
        &b"{\"model_id\":"[..],
        &model,
        b",\"regions\":",
        &json[regions_at..regions_end],
        b",\"revision\":",
        &revision,
        b",\"schema\":",
        &schema,
        b",\"source\":",
        &source_text,
        b",\"target\":",
        &target_text,
        b"}",
    ] {
        hasher.update(piece);
    }
    let plan_id = format!("sha256:{}", canonical::hex(&hasher.finalize().into()));
    let id_text = encode(plan_id.as_str());
    if let Some(target_slot) = json.get_mut(slot..slot + slot_len) {
        if target_slot.len() == id_text.len() {
            target_slot.copy_from_slice(&id_text);
        }
    }
    let json = String::from_utf8(json)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Built {
        wire: ReshardPlan {
            model_id: source.model_id().to_owned(),
            plan_id,
            regions,
            revision: source.revision().to_owned(),
            source: source_ref,
            target: target_ref,
        },
        json,
    }
}
