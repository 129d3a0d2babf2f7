//! The three identities of contract §7: `placement_id` (§7.1), `digest` (§7.2) and the
//! generated `logical:` placement_fragment_id (§7.3). All hash the canonical encoding
//! (§5) streamed into SHA-256, so no payload text is materialised; the payloads' members
//! and keys come from the schemas (`x-identity`, written by the generated writers of
//! `wire::writers`).

use crate::wire::writers;
use crate::wire::{PlacementFragment, TensorDescriptor};

/// The placement_id (§7.1) and the digest (§7.2) of a normalised placement, in one pass.
///
/// The two hashed texts share their longest part: both start with
/// `{"fragments":[...],"model_id":...`, hashed once (SHA-256 has no look-ahead, so the
/// state after the common prefix serves both). `tensors` must be canonical and sorted by
/// tensor_id, `fragments` sorted by placement_fragment_id with sorted aliases.
pub(crate) fn placement_identities(
    model_id: &str,
    revision: &str,
    tensors: &[TensorDescriptor],
    fragments: &[PlacementFragment],
) -> (String, String) {
    let (id, digest) = writers::placement_manifest_identity(fragments, model_id, revision, tensors);
    (id, crate::canonical::hex(&digest))
}

/// `logical:` + SHA-256 of the fragment payload (§7.3) of any fragment value with the
/// six members it covers (a placement or a runtime fragment): all but the
/// placement_fragment_id.
macro_rules! logical_id_of {
    ($fragment:expr) => {{
        let fragment = $fragment;
        $crate::wire::writers::placement_fragment_id(
            &fragment.aliases,
            &fragment.global_offset,
            &fragment.local_shape,
            &fragment.nbytes,
            &fragment.rank,
            &fragment.tensor_id,
        )
    }};
}
pub(crate) use logical_id_of;

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
    logical_id_of!(fragment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical;
    use crate::wire::ParallelRank;
    use crate::wire::PlacementManifest;

    /// The oracle: the serde encoding of the wire value as a JSON tree, the id member
    /// removed and the schema tag added by name, re-encoded canonically (the generic
    /// encoder sorts the keys itself).
    fn payload_hash(manifest: &PlacementManifest) -> String {
        let mut tree: serde_json::Value = serde_json::to_value(manifest).unwrap();
        let object = tree.as_object_mut().unwrap();
        object.remove("placement_id");
        object.insert("schema".into(), "weight-placement".into());
        let text = canonical::to_vec(&tree).unwrap();
        format!("sha256:{}", canonical::sha256_hex(&text))
    }

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
            let mut manifest = PlacementManifest {
                fragments,
                model_id: "m\n".to_owned(),
                placement_id: None,
                revision: "r".to_owned(),
                tensors,
            };
            assert_eq!(id, payload_hash(&manifest));
            manifest.placement_id = Some(id);
            assert_eq!(
                digest,
                canonical::sha256_hex(&canonical::to_vec(&manifest).unwrap())
            );
        }
    }

    /// The contract's worked example of a generated id (W2).
    #[test]
    fn w2_generated_fragment_id() {
        let fragment = PlacementFragment {
            aliases: vec![],
            global_offset: vec![0, 0],
            local_shape: vec![4, 4],
            nbytes: 32,
            placement_fragment_id: "ignored".to_owned(),
            rank: ParallelRank {
                dp: 0,
                ep: 1,
                pp: 1,
                tp: 0,
            },
            tensor_id: "layers.2.experts.3.w1".to_owned(),
        };
        assert_eq!(
            logical_fragment_id(&fragment),
            "logical:a6fe4dfe05d9e3dd45f24a617c01946b3b5112b4415c7e10420d22b3eaabe899"
        );
    }
}
