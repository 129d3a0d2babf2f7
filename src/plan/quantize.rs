//! Quantizing in flight (contract §17.8): a target may hold a tensor in block FP8 (e4m3,
//! one float32 scale per 128x128 block of the last two axes, the scales a tensor of their
//! own) that the source holds in bfloat16. [`Quantization`] is the spec naming those
//! tensors; [`check`] runs its rules against the two placements, in the contract's order,
//! and returns what the walk needs: which target tensors are quantized values or scales,
//! and the source fragments as their scale blocks (the boxes the scale regions read).

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Code, Error, Result};
use crate::model::Placement;
use crate::wire::{PlacementFragment, PlanTransform, QuantizationSpec, TensorDescriptor};

/// The block edge on each of the last two axes: the only block size supported.
pub const BLOCK: u64 = 128;

/// A read and checked quantization spec (`schema/quantization.schema.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantization {
    spec: QuantizationSpec,
}

impl Quantization {
    /// The spec from its wire value, checked as `Quantization::from_json` (in `derived`)
    /// checks it after reading.
    ///
    /// # Errors
    ///
    /// `quantization_unsupported` for a block_size other than [128, 128] (at
    /// `/block_size`); `quantization_document_invalid` for an id named twice, or as both a
    /// tensor and a scale tensor (at the later member).
    pub fn from_wire(spec: QuantizationSpec) -> Result<Quantization> {
        if spec.block_size != [BLOCK, BLOCK] {
            return Err(Error::new(
                Code::QuantizationUnsupported,
                format!(
                    "quantization block_size {:?} is not supported: only [128, 128] is",
                    spec.block_size
                ),
            )
            .with_pointer(Some("/block_size".to_owned())));
        }
        // Every id once: a later entry repeating an earlier id is the rejection.
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for (i, entry) in spec.tensors.iter().enumerate() {
            for (member, id) in [
                ("tensor_id", &entry.tensor_id),
                ("scale_tensor_id", &entry.scale_tensor_id),
            ] {
                if !seen.insert(id.as_str()) {
                    return Err(Error::new(
                        Code::QuantizationDocumentInvalid,
                        format!("quantization spec names the tensor {id} twice"),
                    )
                    .with_pointer(Some(format!("/tensors/{i}/{member}"))));
                }
            }
        }
        Ok(Quantization { spec })
    }

    /// The spec as read.
    pub fn as_wire(&self) -> &QuantizationSpec {
        &self.spec
    }
}

/// What the walk needs of a checked quantization.
pub(crate) struct Quantized {
    /// By target tensor_id: the transform of its regions and, for a scale tensor, the
    /// tensor_id whose source fragments it reads.
    pub by_target: BTreeMap<String, (PlanTransform, String)>,
    /// The source fragments, those of quantized tensors as their scale blocks (same ids,
    /// ranks and indices); empty when nothing is quantized.
    pub scale_view: Vec<PlacementFragment>,
}

impl Quantized {
    /// Nothing quantized.
    pub(crate) fn none() -> Quantized {
        Quantized {
            by_target: BTreeMap::new(),
            scale_view: Vec::new(),
        }
    }
}

fn find<'p>(placement: &'p Placement, id: &str) -> Option<&'p TensorDescriptor> {
    let tensors = placement.tensors();
    tensors
        .binary_search_by(|t| t.tensor_id.as_str().cmp(id))
        .ok()
        .map(|at| &tensors[at])
}

fn located(code: Code, message: String, i: usize, member: &str) -> Error {
    Error::new(code, message).with_pointer(Some(format!("/tensors/{i}/{member}")))
}

/// The number of blocks an extent spans: ceil(extent / 128).
fn blocks(extent: u64) -> u64 {
    extent.div_ceil(BLOCK)
}

/// Whether `fragment` holds each block it touches whole: on each of the last two axes its
/// box starts at a multiple of 128 and ends at one or at the tensor's extent.
fn aligned(fragment: &PlacementFragment, shape: &[u64]) -> Result<bool> {
    let tail = shape.len().saturating_sub(2);
    let axes = fragment
        .global_offset
        .iter()
        .zip(&fragment.local_shape)
        .zip(shape)
        .skip(tail);
    for ((&offset, &extent), &full) in axes {
        let end = offset
            .checked_add(extent)
            .ok_or_else(|| Error::new(Code::U64Overflow, "a fragment's end must fit in a u64"))?;
        if offset % BLOCK != 0 || (end % BLOCK != 0 && end != full) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `fragment` as the box of its scale blocks: the last two axes divided by 128 (offsets
/// exactly, ends rounded up), nbytes of float32 values.
fn scale_box(fragment: &PlacementFragment) -> Result<PlacementFragment> {
    let tail = fragment.local_shape.len().saturating_sub(2);
    let mut scaled = fragment.clone();
    let overflow = || Error::new(Code::U64Overflow, "a scale box must fit in a u64");
    let axes = scaled
        .global_offset
        .iter_mut()
        .zip(scaled.local_shape.iter_mut())
        .skip(tail);
    for (offset, extent) in axes {
        let end = offset.checked_add(*extent).ok_or_else(overflow)?;
        // The offset is a multiple of 128: the box is whole on the blocks.
        *offset /= BLOCK;
        *extent = blocks(end) - *offset;
    }
    scaled.nbytes = scaled
        .local_shape
        .iter()
        .try_fold(4u64, |n, &e| n.checked_mul(e))
        .ok_or_else(overflow)?;
    Ok(scaled)
}

/// Runs the rules of §17.8 for each entry of `spec` in order, and for each: the tensor in
/// both placements (`quantization_tensor_missing`), the dtype pair and dimensions
/// (`quantization_unsupported`), the scale tensor in the target
/// (`quantization_scale_missing`) with its dtype, shape, layer and expert and not in the
/// source (`quantization_scale_invalid`), then every target and then every source
/// fragment of the tensor whole on the blocks (`quantization_block_cut`). Each error
/// points at the entry's member in the spec.
pub(crate) fn check<'p>(
    source: &'p Placement,
    target: &'p Placement,
    spec: Option<&Quantization>,
) -> Result<Quantized> {
    let Some(spec) = spec.filter(|q| !q.spec.tensors.is_empty()) else {
        return Ok(Quantized::none());
    };
    let mut quantized = Quantized::none();
    let mut scaled = BTreeSet::new();
    // Each side's fragments of the quantized tensors, in placement order, found once.
    let named: BTreeSet<&str> = spec
        .spec
        .tensors
        .iter()
        .map(|e| e.tensor_id.as_str())
        .collect();
    let by_tensor = |placement: &'p Placement| {
        let mut out: BTreeMap<&'p str, Vec<&'p PlacementFragment>> = BTreeMap::new();
        for fragment in placement.fragments() {
            if named.contains(fragment.tensor_id.as_str()) {
                out.entry(fragment.tensor_id.as_str())
                    .or_default()
                    .push(fragment);
            }
        }
        out
    };
    let sides = [("target", by_tensor(target)), ("source", by_tensor(source))];
    for (i, entry) in spec.spec.tensors.iter().enumerate() {
        let id = &entry.tensor_id;
        let (Some(from), Some(to)) = (find(source, id), find(target, id)) else {
            let side = if find(source, id).is_none() {
                "source"
            } else {
                "target"
            };
            return Err(located(
                Code::QuantizationTensorMissing,
                format!("the {side} placement holds no tensor {id} to quantize"),
                i,
                "tensor_id",
            ));
        };
        let pair = (
            from.dtype.as_str(),
            from.itemsize,
            to.dtype.as_str(),
            to.itemsize,
        );
        if pair != ("bfloat16", 2, "float8_e4m3fn", 1) {
            return Err(located(
                Code::QuantizationUnsupported,
                format!(
                    "tensor {id}: quantizing {} (itemsize {}) into {} (itemsize {}) is not supported: only bfloat16 (2) into float8_e4m3fn (1) is",
                    pair.0, pair.1, pair.2, pair.3
                ),
                i,
                "tensor_id",
            ));
        }
        let ndim = to.global_shape.len();
        if ndim < 2 {
            return Err(located(
                Code::QuantizationUnsupported,
                format!("tensor {id}: block quantization needs at least two dimensions"),
                i,
                "tensor_id",
            ));
        }
        let scale_id = &entry.scale_tensor_id;
        let Some(scale) = find(target, scale_id) else {
            return Err(located(
                Code::QuantizationScaleMissing,
                format!("the target placement holds no scale tensor {scale_id} for {id}"),
                i,
                "scale_tensor_id",
            ));
        };
        let mut expected = to.global_shape.clone();
        for extent in expected.iter_mut().skip(ndim - 2) {
            *extent = blocks(*extent);
        }
        let wrong = if scale.dtype != "float32" || scale.itemsize != 4 {
            Some(format!(
                "is {} (itemsize {}), not float32 (4)",
                scale.dtype, scale.itemsize
            ))
        } else if scale.global_shape != expected {
            Some(format!(
                "has the shape {:?}, not {expected:?}",
                scale.global_shape
            ))
        } else if scale.layer_id != to.layer_id || scale.expert_id != to.expert_id {
            Some(format!("names another layer_id or expert_id than {id}"))
        } else if find(source, scale_id).is_some() {
            Some("is held by the source placement too".to_owned())
        } else {
            None
        };
        if let Some(wrong) = wrong {
            return Err(located(
                Code::QuantizationScaleInvalid,
                format!("scale tensor {scale_id} of {id} {wrong}"),
                i,
                "scale_tensor_id",
            ));
        }
        for (side, fragments) in &sides {
            for fragment in fragments.get(id.as_str()).into_iter().flatten() {
                if !aligned(fragment, &to.global_shape)? {
                    return Err(located(
                        Code::QuantizationBlockCut,
                        format!(
                            "{side} fragment {} of {id} cuts a 128x128 scale block: its box must start at a multiple of 128 on the last two axes and end at one or at the tensor's extent",
                            fragment.placement_fragment_id
                        ),
                        i,
                        "tensor_id",
                    ));
                }
            }
        }
        quantized
            .by_target
            .insert(id.clone(), (PlanTransform::Fp8E4m3BlockValues, id.clone()));
        quantized.by_target.insert(
            scale_id.clone(),
            (PlanTransform::Fp8E4m3BlockScales, id.clone()),
        );
        scaled.insert(id.as_str());
    }
    quantized.scale_view = source
        .fragments()
        .iter()
        .map(|f| {
            if scaled.contains(f.tensor_id.as_str()) {
                scale_box(f)
            } else {
                Ok(f.clone())
            }
        })
        .collect::<Result<_>>()?;
    Ok(quantized)
}
