//! The content-digest operations of the corpus (contract §19, §14): `content.partial`,
//! `content.block_values`, `content.combine` and `content.manifest`, over the fixtures'
//! typed inputs, through the `weight-manifest-content` crate.

use serde::Deserialize;
use weight_manifest::wire::ContentPartial;
use weight_manifest::wire::{FixtureInput as OpInput, FixtureOp as Op};
use weight_manifest::{Error, Limits};
use weight_manifest_content::manifest::{self, partial_from_wire, partial_to_json};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{blocks, combine, hash, partial, Fragment, Tensor};

use crate::outcome::{OpResult, RequestError};

fn member<'i, T>(value: Option<&'i T>, name: &str) -> Result<&'i T, RequestError> {
    value.ok_or_else(|| RequestError(format!("input member `{name}` is required")))
}

/// The tensor of a request: its id, global shape, itemsize and block size (an absent
/// shape or box is empty, which the content crate rejects as `content_shape_invalid`).
fn tensor(input: &OpInput) -> Result<Result<Tensor, Error>, RequestError> {
    Ok(Tensor::new(
        member(input.tensor_id.as_ref(), "tensor_id")?,
        &input.global_shape,
        *member(input.itemsize.as_ref(), "itemsize")?,
        *member(input.block_elements.as_ref(), "block_elements")?,
    ))
}

/// One fragment of a `content.combine` request's `fragments` text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FragmentInput {
    global_offset: Vec<u64>,
    local_shape: Vec<u64>,
    partial: ContentPartial,
}

/// Runs one of the content operations (any other `op` is a request error).
pub(crate) fn run(
    op: Op,
    input: &OpInput,
    limits: &Limits,
) -> Result<Result<OpResult, Error>, RequestError> {
    match op {
        Op::ContentPartial | Op::ContentBlockValues => {
            let offset = &input.global_offset;
            let shape = &input.local_shape;
            let bytes = hash::from_hex(member(input.bytes.as_ref(), "bytes")?)
                .ok_or_else(|| RequestError("input member `bytes` is not lowercase hex".into()))?;
            let origin = vec![0; shape.len()];
            Ok(tensor(input)?.and_then(|t| {
                if op == Op::ContentPartial {
                    let p = partial::partial(&t, offset, shape, &bytes)?;
                    Ok(OpResult {
                        partial: Some(partial_to_json(&p)),
                        ..OpResult::default()
                    })
                } else {
                    let buffer = Buffer::contiguous(&bytes, shape, &origin);
                    let values = blocks::block_values(&t, offset, shape, buffer)?;
                    Ok(OpResult {
                        values: Some(blocks::values_to_json(&values)),
                        ..OpResult::default()
                    })
                }
            }))
        }
        Op::ContentCombine => {
            let text = member(input.fragments.as_ref(), "fragments")?;
            let given: Vec<FragmentInput> = serde_json::from_str(text).map_err(|e| {
                RequestError(format!(
                    "input member `fragments` is not a fragment list: {e}"
                ))
            })?;
            Ok(tensor(input)?.and_then(|t| {
                let partials = given
                    .iter()
                    .enumerate()
                    .map(|(i, f)| partial_from_wire(&f.partial, &format!("/{i}/partial")))
                    .collect::<Result<Vec<_>, Error>>()?;
                let fragments: Vec<Fragment<'_>> = given
                    .iter()
                    .zip(&partials)
                    .map(|(f, p)| Fragment {
                        global_offset: &f.global_offset,
                        local_shape: &f.local_shape,
                        partial: p,
                    })
                    .collect();
                let digest = combine(&t, &fragments)?;
                Ok(OpResult {
                    digest: Some(digest.to_string()),
                    ..OpResult::default()
                })
            }))
        }
        Op::ContentManifest => {
            let text = member(input.document.as_ref(), "document")?;
            Ok(manifest::read(text.as_bytes(), limits).and_then(|m| {
                manifest::verify_fragments(&m)?;
                Ok(OpResult {
                    content_manifest: Some(manifest::to_json(&m)),
                    ..OpResult::default()
                })
            }))
        }
        _ => Err(RequestError(format!("{op:?} is not a content operation"))),
    }
}
