//! The content manifest (`schema/content.schema.json`, contract §19.5): read strictly,
//! written canonically, its fragments recombined, two manifests compared.

use std::collections::BTreeMap;

use weight_manifest::document::{self, Typed};
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::wire::{ContentEdge, ContentFragment, ContentManifest, ContentPartial};
use weight_manifest::{canonical, Limits, Options};

use crate::combine::{combine, Fragment};
use crate::hash::{self, Digest};
use crate::partial::{Edge, Partial};
use crate::tensor::Tensor;

/// The `algorithm` of this construction.
pub const ALGORITHM: &str = "xxh3-block-sum-v1";

/// The document's label in reader messages.
pub const LABEL: &str = "content manifest";

fn invalid(message: impl Into<String>, pointer: impl Into<String>) -> Error {
    Error::new(Code::ContentManifestInvalid, message).with_pointer(Some(pointer.into()))
}

/// Reads a content manifest strictly, under `limits`, and checks what the schema cannot:
/// the algorithm, digests and sums in their exact forms, hex edge bytes, tensors sorted by
/// tensor_id without duplicates and each a valid geometry, fragments sorted by
/// placement_fragment_id without duplicates, each of a listed tensor with a box inside it.
///
/// # Errors
///
/// The reader's errors (contract §4) and `limit_exceeded`; `content_manifest_invalid` for
/// anything else, with the pointer of the member at fault; `content_shape_invalid` for a
/// tensor or box geometry that is not valid (with its pointer).
pub fn read(text: &[u8], limits: &Limits) -> Result<ContentManifest> {
    document::read::<ContentManifestDocument>(text, &Options::default().with_limits(*limits))
}

/// The content manifest as a document kind of the core's reading pipeline: the strict
/// reader, serde on the text for the schema's members and types, then [`checked`].
struct ContentManifestDocument;

impl Typed for ContentManifestDocument {
    type Output = ContentManifest;
    type Wire = ContentManifest;
    const LABEL: &'static str = LABEL;
    const INVALID: Code = Code::ContentManifestInvalid;

    fn checked(manifest: ContentManifest) -> Result<ContentManifest> {
        checked(manifest)
    }

    /// Located at the document (pointer `""`), as every rejection of a manifest is.
    fn not_an_object() -> Error {
        invalid(format!("a {LABEL} must be a JSON object"), "")
    }
}

/// What the schema cannot say of a manifest it admits (see [`read`]).
fn checked(manifest: ContentManifest) -> Result<ContentManifest> {
    if manifest.algorithm != ALGORITHM {
        return Err(invalid(
            format!("algorithm {} is not {ALGORITHM}", manifest.algorithm),
            "/algorithm",
        ));
    }
    if manifest.block_elements == 0 {
        return Err(invalid(
            "block_elements must be at least 1",
            "/block_elements",
        ));
    }
    tensors(&manifest)?;
    if let Some(fragments) = &manifest.fragments {
        let known = tensors(&manifest)?;
        for (i, f) in fragments.iter().enumerate() {
            let at = format!("/fragments/{i}");
            if i > 0 && fragments[i - 1].placement_fragment_id >= f.placement_fragment_id {
                return Err(invalid(
                    format!(
                        "fragment {} is not after {} (sorted by placement_fragment_id, no duplicates)",
                        f.placement_fragment_id,
                        fragments[i - 1].placement_fragment_id
                    ),
                    format!("{at}/placement_fragment_id"),
                ));
            }
            let Some(tensor) = known.get(f.tensor_id.as_str()) else {
                return Err(invalid(
                    format!(
                        "fragment {}: unknown tensor_id {}",
                        f.placement_fragment_id, f.tensor_id
                    ),
                    format!("{at}/tensor_id"),
                ));
            };
            tensor
                .check_box(&f.global_offset, &f.local_shape)
                .map_err(|e| e.with_pointer(Some(at.clone())))?;
            partial_from_wire(&f.partial, &format!("{at}/partial"))?;
        }
    }
    Ok(manifest)
}

/// The tensors of a manifest checked, by tensor_id.
fn tensors(manifest: &ContentManifest) -> Result<BTreeMap<&str, Tensor>> {
    let mut out = BTreeMap::new();
    for (i, t) in manifest.tensors.iter().enumerate() {
        let at = format!("/tensors/{i}");
        if i > 0 && manifest.tensors[i - 1].tensor_id >= t.tensor_id {
            return Err(invalid(
                format!(
                    "tensor {} is not after {} (sorted by tensor_id, no duplicates)",
                    t.tensor_id,
                    manifest.tensors[i - 1].tensor_id
                ),
                format!("{at}/tensor_id"),
            ));
        }
        t.digest
            .parse::<Digest>()
            .map_err(|e| e.with_pointer(Some(format!("{at}/digest"))))?;
        let tensor = Tensor::new(
            &t.tensor_id,
            &t.global_shape,
            t.itemsize,
            manifest.block_elements,
        )
        .map_err(|e| e.with_pointer(Some(at.clone())))?;
        out.insert(t.tensor_id.as_str(), tensor);
    }
    Ok(out)
}

/// Reads one partial from its JSON text (the form [`partial_to_json`] writes) strictly,
/// under `limits`: the reader's codes and `limit_exceeded`; `content_manifest_invalid` for
/// another shape, a sum or edge bytes not in lowercase hex.
///
/// # Errors
///
/// As above.
pub fn read_partial(text: &[u8], limits: &Limits) -> Result<Partial> {
    document::read::<ContentPartialDocument>(text, &Options::default().with_limits(*limits))
}

/// A fragment partial on its own as a document kind (a holder's partial sent as text).
struct ContentPartialDocument;

impl Typed for ContentPartialDocument {
    type Output = Partial;
    type Wire = ContentPartial;
    const LABEL: &'static str = "content partial";
    const INVALID: Code = Code::ContentManifestInvalid;

    fn checked(wire: ContentPartial) -> Result<Partial> {
        partial_from_wire(&wire, "")
    }
}

/// The wire form of a partial.
pub fn partial_to_wire(partial: &Partial) -> ContentPartial {
    ContentPartial {
        sum: partial.sum.hex(),
        edges: partial
            .edges
            .iter()
            .map(|e| ContentEdge {
                block: e.block,
                bytes: hash::to_hex(&e.bytes),
                row: e.row,
                start: e.start,
            })
            .collect(),
    }
}

/// A partial as canonical JSON text (contract §5): `{"edges": [...], "sum": ...}`, the
/// form of a content manifest's fragment partial.
pub fn partial_to_json(partial: &Partial) -> String {
    canonical::to_string(&partial_to_wire(partial))
        .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
}

/// A partial from its wire form; `pointer` locates it in its document
/// (`content_manifest_invalid` for a sum or bytes not in lowercase hex).
pub fn partial_from_wire(wire: &ContentPartial, pointer: &str) -> Result<Partial> {
    let sum = Digest::from_hex(&wire.sum).ok_or_else(|| {
        invalid(
            format!("sum {:?} is not 32 lowercase hex digits", wire.sum),
            format!("{pointer}/sum"),
        )
    })?;
    let mut edges = Vec::with_capacity(wire.edges.len());
    for (i, e) in wire.edges.iter().enumerate() {
        let bytes = hash::from_hex(&e.bytes)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                invalid(
                    "edge bytes must be lowercase hex, two digits per byte, at least one byte",
                    format!("{pointer}/edges/{i}/bytes"),
                )
            })?;
        edges.push(Edge {
            row: e.row,
            block: e.block,
            start: e.start,
            bytes,
        });
    }
    Ok(Partial { sum, edges })
}

/// The manifest in the canonical encoding (contract §5).
pub fn to_json(manifest: &ContentManifest) -> String {
    canonical::to_string(manifest)
        .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
}

/// Recombines the fragments of a (read) manifest: for every tensor that has fragments, the
/// digest combined from their partials must equal the tensor's digest.
///
/// # Errors
///
/// [`combine`]'s errors for the first tensor whose fragments do not partition it;
/// `content_digest_mismatch` naming the first tensor whose recombined digest differs.
pub fn verify_fragments(manifest: &ContentManifest) -> Result<()> {
    let Some(fragments) = &manifest.fragments else {
        return Ok(());
    };
    let known = tensors(manifest)?;
    let mut by_tensor: BTreeMap<&str, Vec<(&ContentFragment, Partial)>> = BTreeMap::new();
    for (i, f) in fragments.iter().enumerate() {
        let partial = partial_from_wire(&f.partial, &format!("/fragments/{i}/partial"))?;
        by_tensor
            .entry(f.tensor_id.as_str())
            .or_default()
            .push((f, partial));
    }
    for t in &manifest.tensors {
        let Some(list) = by_tensor.get(t.tensor_id.as_str()) else {
            continue;
        };
        let Some(tensor) = known.get(t.tensor_id.as_str()) else {
            continue; // `tensors` holds every tensor of the manifest
        };
        let parts: Vec<Fragment<'_>> = list
            .iter()
            .map(|(f, p)| Fragment {
                global_offset: &f.global_offset,
                local_shape: &f.local_shape,
                partial: p,
            })
            .collect();
        let combined = combine(tensor, &parts)?;
        if combined.to_string() != t.digest {
            return Err(Error::new(
                Code::ContentDigestMismatch,
                format!(
                    "tensor {}: the fragments' partials combine to {combined}, the tensor's digest is {}",
                    t.tensor_id, t.digest
                ),
            ));
        }
    }
    Ok(())
}

/// The fragment `placement_fragment_id` of a (read) manifest with its tensor's geometry
/// (the manifest's block size): what a receiver needs to hash the bytes it landed.
///
/// # Errors
///
/// `content_manifest_invalid` when the manifest lists no such fragment (or no fragments).
pub fn fragment_tensor<'m>(
    manifest: &'m ContentManifest,
    placement_fragment_id: &str,
) -> Result<(Tensor, &'m ContentFragment)> {
    let fragment = listed_fragment(manifest, placement_fragment_id)?;
    let entry = manifest
        .tensors
        .binary_search_by(|t| t.tensor_id.as_str().cmp(&fragment.tensor_id))
        .map(|i| &manifest.tensors[i])
        .map_err(|_| {
            Error::new(
                Code::ContentManifestInvalid,
                format!(
                    "the content manifest lists no tensor {}",
                    fragment.tensor_id
                ),
            )
        })?;
    let tensor = Tensor::new(
        &entry.tensor_id,
        &entry.global_shape,
        entry.itemsize,
        manifest.block_elements,
    )?;
    Ok((tensor, fragment))
}

fn listed_fragment<'m>(
    manifest: &'m ContentManifest,
    placement_fragment_id: &str,
) -> Result<&'m ContentFragment> {
    let listed = manifest.fragments.as_deref().unwrap_or_default();
    listed
        .binary_search_by(|f| f.placement_fragment_id.as_str().cmp(placement_fragment_id))
        .map(|i| &listed[i])
        .map_err(|_| {
            Error::new(
                Code::ContentManifestInvalid,
                format!("the content manifest lists no fragment {placement_fragment_id}"),
            )
        })
}

/// Checks one holder's partial of the fragment `placement_fragment_id` against the partial
/// the manifest records for it (equal sums, edges equal as sets): how a receiver verifies
/// the bytes that landed in its own memory without the other fragments.
///
/// # Errors
///
/// `content_manifest_invalid` when the manifest lists no fragments or not this one;
/// `content_digest_mismatch` naming the fragment and its tensor when the partials differ.
pub fn check_fragment(
    manifest: &ContentManifest,
    placement_fragment_id: &str,
    partial: &Partial,
) -> Result<()> {
    let found = listed_fragment(manifest, placement_fragment_id)?;
    let recorded = partial_from_wire(&found.partial, "")?;
    if crate::combine::same_partial(&recorded, partial) {
        return Ok(());
    }
    Err(Error::new(
        Code::ContentDigestMismatch,
        format!(
            "fragment {placement_fragment_id} of tensor {}: its partial (sum {}, {} edges) differs from the manifest's (sum {}, {} edges)",
            found.tensor_id,
            partial.sum.hex(),
            partial.edges.len(),
            recorded.sum.hex(),
            recorded.edges.len()
        ),
    ))
}

/// How a tensor differs between two manifests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// In both, with different digests, shapes, dtypes or itemsizes.
    Differs(String),
    /// Only in the first manifest.
    OnlyInFirst(String),
    /// Only in the second manifest.
    OnlyInSecond(String),
}

impl Difference {
    /// The tensor_id.
    pub fn tensor_id(&self) -> &str {
        match self {
            Difference::Differs(t) | Difference::OnlyInFirst(t) | Difference::OnlyInSecond(t) => t,
        }
    }
}

/// The tensors that differ between two manifests, by tensor_id; empty when they agree.
///
/// # Errors
///
/// `content_manifest_invalid` when the manifests use different algorithms or block sizes,
/// whose digests cannot be compared.
pub fn compare(a: &ContentManifest, b: &ContentManifest) -> Result<Vec<Difference>> {
    if a.algorithm != b.algorithm || a.block_elements != b.block_elements {
        return Err(Error::new(
            Code::ContentManifestInvalid,
            format!(
                "digests of {} with block_elements {} cannot be compared with {} with block_elements {}",
                a.algorithm, a.block_elements, b.algorithm, b.block_elements
            ),
        ));
    }
    let first: BTreeMap<&str, _> = a
        .tensors
        .iter()
        .map(|t| (t.tensor_id.as_str(), t))
        .collect();
    let second: BTreeMap<&str, _> = b
        .tensors
        .iter()
        .map(|t| (t.tensor_id.as_str(), t))
        .collect();
    let mut out = Vec::new();
    for (id, x) in &first {
        match second.get(id) {
            None => out.push(Difference::OnlyInFirst((*id).to_owned())),
            Some(y) if x != y => out.push(Difference::Differs((*id).to_owned())),
            Some(_) => {}
        }
    }
    for id in second.keys() {
        if !first.contains_key(id) {
            out.push(Difference::OnlyInSecond((*id).to_owned()));
        }
    }
    out.sort_by(|x, y| x.tensor_id().cmp(y.tensor_id()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partial::{digest, partial};
    use weight_manifest::wire::{ContentTensor, ParallelRank};

    fn manifest() -> ContentManifest {
        let t = Tensor::new("w", &[2, 5], 1, 2).unwrap();
        let bytes: Vec<u8> = (10..20).collect();
        let left = [10, 11, 12, 15, 16, 17];
        let right = [13, 14, 18, 19];
        let fragment = |id: &str, o: Vec<u64>, l: Vec<u64>, b: &[u8], tp| ContentFragment {
            partial: partial_to_wire(&partial(&t, &o, &l, b).unwrap()),
            global_offset: o,
            local_shape: l,
            placement_fragment_id: id.to_owned(),
            rank: ParallelRank {
                dp: 0,
                ep: 0,
                pp: 0,
                tp,
            },
            tensor_id: "w".to_owned(),
        };
        ContentManifest {
            algorithm: ALGORITHM.to_owned(),
            block_elements: 2,
            fragments: Some(vec![
                fragment("w/0", vec![0, 0], vec![2, 3], &left, 0),
                fragment("w/1", vec![0, 3], vec![2, 2], &right, 1),
            ]),
            generation: Some(3),
            model_id: "m".to_owned(),
            placement_digest: Some("0".repeat(64)),
            revision: "r".to_owned(),
            tensors: vec![ContentTensor {
                digest: digest(&t, &bytes).unwrap().to_string(),
                dtype: "uint8".to_owned(),
                global_shape: vec![2, 5],
                itemsize: 1,
                tensor_id: "w".to_owned(),
            }],
        }
    }

    #[test]
    fn round_trips_canonically_and_recombines() {
        let m = manifest();
        let text = to_json(&m);
        assert!(text
            .starts_with(r#"{"algorithm":"xxh3-block-sum-v1","block_elements":2,"fragments":[{"#));
        let back = read(text.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(back, m);
        verify_fragments(&back).unwrap();
        assert!(compare(&m, &back).unwrap().is_empty());
    }

    #[test]
    fn a_holders_partial_is_checked_against_the_recorded_one() {
        let m = manifest();
        let t = Tensor::new("w", &[2, 5], 1, 2).unwrap();
        // w/1 holds columns 3..5 of both rows: block 1 cut (column 3), block 2 whole.
        let landed = partial(&t, &[0, 3], &[2, 2], &[13, 14, 18, 19]).unwrap();
        check_fragment(&m, "w/1", &landed).unwrap();
        let torn = partial(&t, &[0, 3], &[2, 2], &[13, 14, 18, 0]).unwrap();
        let e = check_fragment(&m, "w/1", &torn).unwrap_err();
        assert_eq!(e.code(), Code::ContentDigestMismatch);
        assert!(e.message().contains("fragment w/1 of tensor w"), "{e}");
        let edge = partial(&t, &[0, 3], &[2, 2], &[0, 14, 18, 19]).unwrap();
        assert_eq!(landed.sum, edge.sum, "only the edge piece differs");
        let e = check_fragment(&m, "w/1", &edge).unwrap_err();
        assert_eq!(e.code(), Code::ContentDigestMismatch);
        let e = check_fragment(&m, "w/0", &landed).unwrap_err();
        assert_eq!(e.code(), Code::ContentDigestMismatch);
        let e = check_fragment(&m, "w/2", &landed).unwrap_err();
        assert_eq!(e.code(), Code::ContentManifestInvalid);
        let digests_only = ContentManifest {
            fragments: None,
            ..m.clone()
        };
        let e = check_fragment(&digests_only, "w/1", &landed).unwrap_err();
        assert_eq!(e.code(), Code::ContentManifestInvalid);
        let (tensor, fragment) = fragment_tensor(&m, "w/1").unwrap();
        assert_eq!(
            (tensor, fragment.global_offset.as_slice()),
            (t, &[0, 3][..])
        );
        assert!(fragment_tensor(&m, "w/9").is_err());
    }

    #[test]
    fn rejections_carry_codes_and_pointers() {
        type Case = (fn(&mut ContentManifest), Code, &'static str);
        let cases: Vec<Case> = vec![
            (
                |m| m.algorithm = "sha".into(),
                Code::ContentManifestInvalid,
                "/algorithm",
            ),
            (
                |m| m.tensors[0].digest = "xxh3sum128:00".into(),
                Code::ContentManifestInvalid,
                "/tensors/0/digest",
            ),
            (
                |m| m.tensors.push(m.tensors[0].clone()),
                Code::ContentManifestInvalid,
                "/tensors/1/tensor_id",
            ),
            (
                |m| m.tensors[0].global_shape = vec![2, 0],
                Code::ContentShapeInvalid,
                "/tensors/0",
            ),
            (
                |m| m.fragments.as_mut().unwrap()[1].tensor_id = "v".into(),
                Code::ContentManifestInvalid,
                "/fragments/1/tensor_id",
            ),
            (
                |m| m.fragments.as_mut().unwrap()[1].global_offset = vec![0, 4],
                Code::ContentShapeInvalid,
                "/fragments/1",
            ),
            (
                |m| m.fragments.as_mut().unwrap()[0].partial.sum = "x".into(),
                Code::ContentManifestInvalid,
                "/fragments/0/partial/sum",
            ),
            (
                |m| m.fragments.as_mut().unwrap()[0].partial.edges[0].bytes = "0".into(),
                Code::ContentManifestInvalid,
                "/fragments/0/partial/edges/0/bytes",
            ),
            (
                |m| m.fragments.as_mut().unwrap().swap(0, 1),
                Code::ContentManifestInvalid,
                "/fragments/1/placement_fragment_id",
            ),
        ];
        for (edit, code, pointer) in cases {
            let mut m = manifest();
            edit(&mut m);
            let e = read(to_json(&m).as_bytes(), &Limits::default()).unwrap_err();
            assert_eq!(
                (e.code(), e.path()),
                (code, Some(pointer)),
                "{}",
                e.message()
            );
        }
        let e = read(b"[]", &Limits::default()).unwrap_err();
        assert_eq!(e.code(), Code::ContentManifestInvalid);
        let e = read(br#"{"algorithm":1}"#, &Limits::default()).unwrap_err();
        assert_eq!(e.code(), Code::ContentManifestInvalid);
        let e = read(b"{", &Limits::default()).unwrap_err();
        assert_eq!(e.code(), Code::InvalidJson);
    }

    #[test]
    fn a_changed_digest_is_found_by_recombination_and_compare() {
        let m = manifest();
        let mut other = m.clone();
        other.tensors[0].digest = Digest(1).to_string();
        let e = verify_fragments(&other).unwrap_err();
        assert_eq!(e.code(), Code::ContentDigestMismatch);
        assert_eq!(
            compare(&m, &other).unwrap(),
            vec![Difference::Differs("w".into())]
        );
        let mut fewer = m.clone();
        fewer.tensors.clear();
        assert_eq!(
            compare(&m, &fewer).unwrap(),
            vec![Difference::OnlyInFirst("w".into())]
        );
        assert_eq!(
            compare(&fewer, &m).unwrap(),
            vec![Difference::OnlyInSecond("w".into())]
        );
        let mut coarse = m.clone();
        coarse.block_elements = 4;
        assert_eq!(
            compare(&m, &coarse).unwrap_err().code(),
            Code::ContentManifestInvalid
        );
        // Another algorithm alone, at the same block size, is not comparable either.
        let mut alien = m.clone();
        alien.algorithm = "another-digest-v1".into();
        let e = compare(&m, &alien).unwrap_err();
        assert_eq!(e.code(), Code::ContentManifestInvalid);
        assert_eq!(
            e.message(),
            format!(
                "digests of {} with block_elements {} cannot be compared with another-digest-v1 with block_elements {}",
                m.algorithm, m.block_elements, m.block_elements
            )
        );
        let mut torn = m;
        torn.fragments.as_mut().unwrap()[0].partial.edges.pop();
        assert_eq!(
            verify_fragments(&torn).unwrap_err().code(),
            Code::ContentPartitionInvalid
        );
    }
}
