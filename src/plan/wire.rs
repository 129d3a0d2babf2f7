//! The plan's wire form and identity: `plan_id` is `sha256:` + SHA-256 of the canonical
//! encoding (contract §5) of the plan without `plan_id` and with `"schema":"weight-plan"`,
//! as placement_id is built (§7.1). It names both placements' ids and digests.
//!
//! The regions are encoded once: the hashed payload and the emitted text share that
//! encoding and differ only in their small members.

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
    let regions_text = encode(&regions);
    let revision = encode(source.revision());
    let schema = encode(PLAN_SCHEMA_TAG);
    let (source_text, target_text) = (encode(&source_ref), encode(&target_ref));

    // Keys in code point order; the payload has `schema`, the wire form `plan_id`.
    let mut hasher = Sha256::new();
    for piece in [
        &b"{\"model_id\":"[..],
        &model,
        b",\"regions\":",
        &regions_text,
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

    let mut json = Vec::with_capacity(regions_text.len() + 512);
    for piece in [
        &b"{\"model_id\":"[..],
        &model,
        b",\"plan_id\":",
        &id_text,
        b",\"regions\":",
        &regions_text,
        b",\"revision\":",
        &revision,
        b",\"source\":",
        &source_text,
        b",\"target\":",
        &target_text,
        b"}",
    ] {
        json.extend_from_slice(piece);
    }
    drop(regions_text);
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
