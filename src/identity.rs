//! The three identities of contract §7: `placement_id` (§7.1), `digest` (§7.2) and the
//! generated `logical:` placement_fragment_id (§7.3). All hash the canonical encoding
//! (§5) streamed into SHA-256, so no payload text is materialised.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};

/// The literal schema tag of the placement_id payload.
const PLACEMENT_SCHEMA_TAG: &str = "weight-placement";

/// The placement_id payload (§7.1): the wire keys minus `placement_id`, plus `schema`.
/// Fields are declared in emitted (sorted) order.
#[derive(Serialize)]
struct PlacementIdPayload<'a> {
    fragments: &'a [PlacementFragment],
    model_id: &'a str,
    revision: &'a str,
    schema: &'static str,
    tensors: &'a [TensorDescriptor],
}

/// The six-key fragment payload of a generated id (§7.3), in emitted order.
#[derive(Serialize)]
pub(crate) struct FragmentIdPayload<'a> {
    pub aliases: &'a [String],
    pub global_offset: &'a [u64],
    pub local_shape: &'a [u64],
    pub nbytes: u64,
    pub rank: &'a ParallelRank,
    pub tensor_id: &'a str,
}

fn sha256_of<T: Serialize + ?Sized>(value: &T) -> [u8; 32] {
    let mut hasher = Sha256::new();
    // The payloads hold only strings, u64s, arrays and structs with sorted fields, which
    // the encoder always accepts (tested in this module).
    canonical::write(value, &mut hasher)
        .unwrap_or_else(|e| unreachable!("identity payloads are always encodable: {e}"));
    hasher.finalize().into()
}

/// `sha256:` + SHA-256 of the placement payload. `tensors` must be canonical and sorted by
/// tensor_id, `fragments` sorted by placement_fragment_id with sorted aliases.
pub(crate) fn placement_id(
    model_id: &str,
    revision: &str,
    tensors: &[TensorDescriptor],
    fragments: &[PlacementFragment],
) -> String {
    let payload = PlacementIdPayload {
        fragments,
        model_id,
        revision,
        schema: PLACEMENT_SCHEMA_TAG,
        tensors,
    };
    format!("sha256:{}", canonical::hex(&sha256_of(&payload)))
}

/// SHA-256 of the wire JSON of a normalised manifest, lowercase hex without prefix.
pub(crate) fn digest(manifest: &PlacementManifest) -> String {
    canonical::hex(&sha256_of(manifest))
}

/// `logical:` + SHA-256 of the six-key fragment payload.
pub(crate) fn logical_fragment_id(payload: &FragmentIdPayload<'_>) -> String {
    format!("logical:{}", canonical::hex(&sha256_of(payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w2_generated_fragment_id() {
        let rank = ParallelRank {
            dp: 0,
            ep: 1,
            pp: 1,
            tp: 0,
        };
        let payload = FragmentIdPayload {
            aliases: &[],
            global_offset: &[0, 0],
            local_shape: &[4, 4],
            nbytes: 32,
            rank: &rank,
            tensor_id: "layers.2.experts.3.w1",
        };
        assert_eq!(
            canonical::to_string(&payload).unwrap(),
            r#"{"aliases":[],"global_offset":[0,0],"local_shape":[4,4],"nbytes":32,"rank":{"dp":0,"ep":1,"pp":1,"tp":0},"tensor_id":"layers.2.experts.3.w1"}"#
        );
        assert_eq!(
            logical_fragment_id(&payload),
            "logical:a6fe4dfe05d9e3dd45f24a617c01946b3b5112b4415c7e10420d22b3eaabe899"
        );
    }
}
