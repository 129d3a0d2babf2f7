//! The three identities of contract §7: `placement_id` (§7.1), `digest` (§7.2) and the
//! generated `logical:` placement_fragment_id (§7.3). All hash the canonical encoding
//! (§5) streamed into SHA-256, so no payload text is materialised.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::canonical::{self, elements};
#[cfg(test)]
use crate::wire::PlacementManifest;
use crate::wire::{ParallelRank, PlacementFragment, TensorDescriptor};

/// The literal schema tag of the placement_id payload.
const PLACEMENT_SCHEMA_TAG: &str = "weight-placement";

/// The placement_id payload (§7.1): the wire keys minus `placement_id`, plus `schema`.
/// Fields are declared in emitted (sorted) order.
#[cfg(test)]
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
    // The payloads hold only strings, u64s, arrays and structs with sorted fields, which
    // the encoder always accepts (tested in this module).
    canonical::hash(value)
        .unwrap_or_else(|e| unreachable!("identity payloads are always encodable: {e}"))
}

/// Bytes gathered before they are handed to the hashers.
const CHUNK: usize = 64 << 10;

/// A hasher fed through a buffer, so the encoder's small writes reach it in large chunks.
struct Feed {
    buffer: Vec<u8>,
    hasher: Sha256,
}

impl Feed {
    fn flush(&mut self) {
        self.hasher.update(&self.buffer);
        self.buffer.clear();
    }

    fn flush_full(&mut self) {
        if self.buffer.len() >= CHUNK {
            self.flush();
        }
    }

    /// `[` + the tensors + `]}`: the tail both texts end with; then the digest.
    fn tensors_and_close(mut self, tensors: &[TensorDescriptor]) -> [u8; 32] {
        self.buffer.push(b'[');
        for (i, tensor) in tensors.iter().enumerate() {
            if i > 0 {
                self.buffer.push(b',');
            }
            elements::put_tensor(&mut self.buffer, tensor);
            self.flush_full();
        }
        self.buffer.extend_from_slice(b"]}");
        self.flush();
        self.hasher.finalize().into()
    }
}

/// The placement_id (§7.1) and the digest (§7.2) of a normalised placement, in one pass.
///
/// The two hashed texts share their longest part: both start with
/// `{"fragments":[...],"model_id":...,`. SHA-256 processes its input in 64-byte blocks
/// with no look-ahead, so the state after that common prefix is the same for both: it is
/// encoded and hashed once, and the hasher is cloned. The payload then ends
/// `"revision":...,"schema":"weight-placement","tensors":[...]}`; once its hash (the id)
/// is known, the wire JSON ends `"placement_id":"sha256:...","revision":...,"tensors":[...]}`.
/// `tensors` must be canonical and sorted by tensor_id, `fragments` sorted by
/// placement_fragment_id with sorted aliases.
pub(crate) fn placement_identities(
    model_id: &str,
    revision: &str,
    tensors: &[TensorDescriptor],
    fragments: &[PlacementFragment],
) -> (String, String) {
    let mut common = Feed {
        buffer: Vec::with_capacity(CHUNK + 1024),
        hasher: Sha256::new(),
    };
    common.buffer.extend_from_slice(b"{\"fragments\":[");
    for (i, fragment) in fragments.iter().enumerate() {
        if i > 0 {
            common.buffer.push(b',');
        }
        elements::put_fragment(&mut common.buffer, fragment);
        common.flush_full();
    }
    common.buffer.extend_from_slice(b"],\"model_id\":");
    canonical::write_str(&mut common.buffer, model_id);
    common.buffer.push(b',');
    common.flush();
    let mut wire_json = Feed {
        buffer: Vec::with_capacity(CHUNK + 1024),
        hasher: common.hasher.clone(),
    };

    let mut payload = common;
    payload.buffer.extend_from_slice(b"\"revision\":");
    canonical::write_str(&mut payload.buffer, revision);
    payload.buffer.extend_from_slice(b",\"schema\":");
    canonical::write_str(&mut payload.buffer, PLACEMENT_SCHEMA_TAG);
    payload.buffer.extend_from_slice(b",\"tensors\":");
    let id = format!(
        "sha256:{}",
        canonical::hex(&payload.tensors_and_close(tensors))
    );

    wire_json.buffer.extend_from_slice(b"\"placement_id\":");
    canonical::write_str(&mut wire_json.buffer, &id);
    wire_json.buffer.extend_from_slice(b",\"revision\":");
    canonical::write_str(&mut wire_json.buffer, revision);
    wire_json.buffer.extend_from_slice(b",\"tensors\":");
    let digest = canonical::hex(&wire_json.tensors_and_close(tensors));
    (id, digest)
}

/// `sha256:` + SHA-256 of the placement payload, through the serde encoder (the oracle
/// of [`placement_identities`]).
#[cfg(test)]
fn placement_id(
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

/// SHA-256 of the wire JSON through the serde encoder (the oracle of
/// [`placement_identities`]).
#[cfg(test)]
fn digest(manifest: &PlacementManifest) -> String {
    canonical::hex(&sha256_of(manifest))
}

/// `logical:` + SHA-256 of the six-key fragment payload.
pub(crate) fn logical_id(payload: &FragmentIdPayload<'_>) -> String {
    format!("logical:{}", canonical::hex(&sha256_of(payload)))
}

/// The generated `logical:` placement_fragment_id of a fragment's content (§7.3): the id
/// a runtime fragment without an explicit one projects to. The fragment's own
/// `placement_fragment_id` is not part of it.
///
/// ```
/// use weight_manifest::wire::{ParallelRank, PlacementFragment};
///
/// let fragment = PlacementFragment {
///     aliases: vec![],
///     global_offset: vec![0, 0],
///     local_shape: vec![4, 4],
///     nbytes: 32,
///     placement_fragment_id: String::new(),
///     rank: ParallelRank { dp: 0, ep: 1, pp: 1, tp: 0 },
///     tensor_id: "layers.2.experts.3.w1".into(),
/// };
/// assert!(weight_manifest::logical_fragment_id(&fragment).starts_with("logical:"));
/// ```
pub fn logical_fragment_id(fragment: &PlacementFragment) -> String {
    logical_id(&FragmentIdPayload {
        aliases: &fragment.aliases,
        global_offset: &fragment.global_offset,
        local_shape: &fragment.local_shape,
        nbytes: fragment.nbytes,
        rank: &fragment.rank,
        tensor_id: &fragment.tensor_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_identities_match_the_serde_encoder() {
        let rank = ParallelRank {
            dp: 0,
            ep: 1,
            pp: 1,
            tp: 0,
        };
        let tensor = TensorDescriptor {
            dtype: "bf16".to_owned(),
            expert_id: None,
            global_shape: vec![4, 4],
            itemsize: 2,
            layer_id: Some(2),
            layout_fingerprint: "f\u{e9}".to_owned(),
            partition_dim: Some(0),
            shard_dims: Some(vec![0]),
            tensor_id: "a\"b".to_owned(),
        };
        let fragment = PlacementFragment {
            aliases: vec!["x".to_owned(), "y\u{1f600}".to_owned()],
            global_offset: vec![0, 0],
            local_shape: vec![4, 4],
            nbytes: 32,
            placement_fragment_id: "p".to_owned(),
            rank,
            tensor_id: "a\"b".to_owned(),
        };
        let many: Vec<PlacementFragment> = (0..3000)
            .map(|i| PlacementFragment {
                placement_fragment_id: format!("p{i:05}"),
                ..fragment.clone()
            })
            .collect();
        for (tensors, fragments) in [
            (Vec::new(), Vec::new()),
            (vec![tensor.clone()], vec![fragment.clone()]),
            (vec![tensor.clone(); 700], many),
        ] {
            let (id, digest) = placement_identities("m\n", "r", &tensors, &fragments);
            assert_eq!(id, placement_id("m\n", "r", &tensors, &fragments));
            let manifest = PlacementManifest {
                fragments,
                model_id: "m\n".to_owned(),
                placement_id: Some(id),
                revision: "r".to_owned(),
                tensors,
            };
            assert_eq!(digest, super::digest(&manifest));
        }
    }

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
            logical_id(&payload),
            "logical:a6fe4dfe05d9e3dd45f24a617c01946b3b5112b4415c7e10420d22b3eaabe899"
        );
    }
}
