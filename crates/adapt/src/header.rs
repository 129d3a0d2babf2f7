//! One safetensors header: the JSON text after the 8-byte length, parsed and validated.
//!
//! Two readers check it. The strict reader of contract §4 rejects duplicate tensor names
//! (general JSON libraries keep the last one silently); then the `safetensors` crate's
//! `Metadata` checks the format itself: known dtype names, shapes, and data offsets that are
//! contiguous and match each tensor's byte size. Nothing here reads tensor data, so whether
//! the file actually holds those bytes is not checked.

use safetensors::tensor::Metadata;
use safetensors::Dtype;

use weight_manifest::error::{Code, Error, Result};

/// The label of a header in reader messages.
const LABEL: &str = "safetensors header";

/// One tensor as a header describes it, in the terms of a descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderTensor {
    /// The tensor's name in the checkpoint; becomes the tensor_id.
    pub name: String,
    /// The torch-style dtype name (`float32`, `bfloat16`, ...), see [`torch_dtype`].
    pub dtype: &'static str,
    /// Bytes per element.
    pub itemsize: u64,
    /// The shape: at least one dimension, each at least 1.
    pub shape: Vec<u64>,
    /// The file holding the tensor's data (the `source` its header was parsed as: for a
    /// checkpoint, the file name next to the index or the single file's name).
    pub file: String,
    /// The tensor's bytes [start, end) in the file's data section (after the 8-byte length
    /// and the header), as the header states them.
    pub data_offsets: (u64, u64),
}

/// The torch-style name and itemsize of a safetensors dtype, or `None` for a dtype whose
/// elements are not whole bytes (`F4`, `F6_E2M3`, `F6_E3M2`), which a descriptor cannot
/// describe.
pub fn torch_dtype(dtype: Dtype) -> Option<(&'static str, u64)> {
    Some(match dtype {
        Dtype::BOOL => ("bool", 1),
        Dtype::U8 => ("uint8", 1),
        Dtype::I8 => ("int8", 1),
        Dtype::F8_E5M2 => ("float8_e5m2", 1),
        Dtype::F8_E4M3 => ("float8_e4m3fn", 1),
        Dtype::F8_E8M0 => ("float8_e8m0fnu", 1),
        Dtype::F8_E4M3FNUZ => ("float8_e4m3fnuz", 1),
        Dtype::F8_E5M2FNUZ => ("float8_e5m2fnuz", 1),
        Dtype::I16 => ("int16", 2),
        Dtype::U16 => ("uint16", 2),
        Dtype::F16 => ("float16", 2),
        Dtype::BF16 => ("bfloat16", 2),
        Dtype::I32 => ("int32", 4),
        Dtype::U32 => ("uint32", 4),
        Dtype::F32 => ("float32", 4),
        Dtype::C64 => ("complex64", 8),
        Dtype::F64 => ("float64", 8),
        Dtype::I64 => ("int64", 8),
        Dtype::U64 => ("uint64", 8),
        _ => return None,
    })
}

/// The reader limits for safetensors headers and indexes: the defaults, but no string
/// limit. They are not manifests: `__metadata__` holds free-form text (real checkpoints
/// store whole configs there), and the format caps a header at `MAX_HEADER_BYTES`.
pub(crate) fn header_limits() -> weight_manifest::Limits {
    weight_manifest::Limits {
        max_string_bytes: usize::MAX,
        ..weight_manifest::Limits::default()
    }
}

fn invalid(source: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Code::AdaptHeaderInvalid, format!("{source}: {message}"))
}

/// Parses the header JSON `text` of the file named `source` (used in messages). The
/// tensors come back in data-offset order; `__metadata__` is skipped.
///
/// # Errors
///
/// `adapt_header_invalid`: not a JSON object, a duplicate name, an unknown dtype, offsets
/// that are not contiguous or do not match a tensor's size, a scalar or zero-size tensor
/// (a descriptor needs at least one dimension, each at least 1), or a dtype without a
/// whole-byte itemsize.
pub fn parse_header(text: &[u8], source: &str) -> Result<Vec<HeaderTensor>> {
    let document = weight_manifest::reader::read(text, LABEL, &header_limits())
        .map_err(|e| invalid(source, e.message()))?;
    if document.as_object().is_none() {
        return Err(invalid(source, format!("{LABEL} must be a JSON object")));
    }
    let metadata: Metadata = serde_json::from_slice(text)
        .map_err(|e| invalid(source, format!("invalid {LABEL}: {e}")))?;
    let mut tensors = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            return Err(invalid(source, format!("tensor {name} has no entry")));
        };
        let Some((dtype, itemsize)) = torch_dtype(info.dtype) else {
            return Err(invalid(
                source,
                format!(
                    "tensor {name}: dtype {} has no whole-byte itemsize",
                    info.dtype
                ),
            ));
        };
        if info.shape.is_empty() || info.shape.contains(&0) {
            return Err(invalid(
                source,
                format!(
                    "tensor {name}: shape {:?} is not a contract shape (at least one dimension, each at least 1)",
                    info.shape
                ),
            ));
        }
        let shape = info
            .shape
            .iter()
            .map(|&extent| u64::try_from(extent))
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| invalid(source, format!("tensor {name}: extent above 2^64-1")))?;
        let (start, end) = info.data_offsets;
        tensors.push(HeaderTensor {
            name,
            dtype,
            itemsize,
            shape,
            file: source.to_owned(),
            data_offsets: (start as u64, end as u64),
        });
    }
    Ok(tensors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tensors_in_offset_order() {
        let text = br#"{"__metadata__":{"format":"pt"},
            "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},
            "a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}"#;
        let tensors = parse_header(text, "m").unwrap();
        assert_eq!(tensors.len(), 2);
        assert_eq!(tensors[0].name, "a");
        assert_eq!((tensors[0].dtype, tensors[0].itemsize), ("bfloat16", 2));
        assert_eq!((tensors[1].dtype, tensors[1].itemsize), ("float32", 4));
        assert_eq!(tensors[1].shape, vec![2]);
        assert_eq!(
            (tensors[1].file.as_str(), tensors[1].data_offsets),
            ("m", (4, 12))
        );
    }

    #[test]
    fn rejects_bad_headers() {
        let cases: &[(&[u8], &str)] = &[
            (b"[1]", "must be a JSON object"),
            (b"{", "not valid JSON"),
            (
                br#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
                "duplicate JSON field: a",
            ),
            (
                br#"{"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}}"#,
                "invalid safetensors header",
            ),
            (
                br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
                "invalid safetensors header",
            ),
            (
                br#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
                "invalid safetensors header",
            ),
            (
                br#"{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}"#,
                "tensor a: shape [] is not a contract shape",
            ),
            (
                br#"{"a":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}}"#,
                "tensor a: shape [0, 3]",
            ),
            (
                br#"{"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}"#,
                "dtype F4 has no whole-byte itemsize",
            ),
        ];
        for (text, needle) in cases {
            let error = parse_header(text, "f.safetensors").unwrap_err();
            assert_eq!(error.code(), Code::AdaptHeaderInvalid);
            assert!(
                error.message().starts_with("f.safetensors: ") && error.message().contains(needle),
                "{}: {}",
                String::from_utf8_lossy(text),
                error.message()
            );
        }
    }

    #[test]
    fn maps_every_whole_byte_dtype() {
        assert_eq!(torch_dtype(Dtype::F8_E4M3), Some(("float8_e4m3fn", 1)));
        assert_eq!(torch_dtype(Dtype::I64), Some(("int64", 8)));
        assert_eq!(torch_dtype(Dtype::F6_E2M3), None);
    }
}
