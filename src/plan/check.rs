//! The planner's preconditions: both placements describe the same model and the same
//! tensors. Only the shard dims (and so the fragments) may differ, and a quantized
//! tensor's dtype, itemsize and layout_fingerprint; its scale tensor is the target's
//! alone (§17.8).

use crate::error::{Code, Error, Result};
use crate::model::Placement;
use crate::wire::key;
use crate::wire::TensorDescriptor;

use super::quantize::{self, Quantization, Quantized};

/// `plan_model_mismatch` when model_id or revision differ; then the quantization's rules
/// (§17.8); then `plan_tensor_mismatch` for the first tensor (by tensor_id) that only one
/// side has (a scale tensor is the target's alone) or whose descriptors differ in
/// global_shape, dtype, itemsize, layout_fingerprint, layer_id or expert_id (checked in
/// that order; a quantized tensor's dtype, itemsize and layout_fingerprint may differ).
pub(crate) fn check_compatible(
    source: &Placement,
    target: &Placement,
    quantization: Option<&Quantization>,
) -> Result<Quantized> {
    // model_id first, then revision.
    for (what, ours, theirs) in [
        ("models: model_id", source.model_id(), target.model_id()),
        ("revisions:", source.revision(), target.revision()),
    ] {
        if ours != theirs {
            return Err(Error::new(
                Code::PlanModelMismatch,
                format!("source and target placements name different {what} {ours} and {theirs}"),
            ));
        }
    }
    let quantized = quantize::check(source, target, quantization)?;
    let (sources, targets) = (source.tensors(), target.tensors());
    let (mut at_source, mut at_target) = (0, 0);
    let only = |side: &str, id: &str| {
        Err(Error::new(
            Code::PlanTensorMismatch,
            format!("tensor {id} is only in the {side} placement"),
        ))
    };
    loop {
        let role = targets
            .get(at_target)
            .and_then(|t| quantized.by_target.get(&t.tensor_id))
            .map(|(transform, _)| *transform);
        if role == Some(crate::wire::PlanTransform::Fp8E4m3BlockScales) {
            at_target += 1;
            continue;
        }
        match (sources.get(at_source), targets.get(at_target)) {
            (Some(left), Some(right)) if left.tensor_id == right.tensor_id => {
                check_descriptors(left, right, role.is_some())?;
                at_source += 1;
                at_target += 1;
            }
            (Some(left), Some(right)) if left.tensor_id < right.tensor_id => {
                return only("source", &left.tensor_id);
            }
            (Some(left), None) => return only("source", &left.tensor_id),
            (_, Some(right)) => return only("target", &right.tensor_id),
            (None, None) => break,
        }
    }
    Ok(quantized)
}

/// The descriptors' comparison; `quantized`: the dtype, itemsize and layout_fingerprint
/// are the quantization's (checked by §17.8's rules), not compared.
fn check_descriptors(a: &TensorDescriptor, b: &TensorDescriptor, quantized: bool) -> Result<()> {
    let differs = |field: &str, x: String, y: String| {
        Err(Error::new(
            Code::PlanTensorMismatch,
            format!(
                "tensor {} differs between source and target in {field}: {x} and {y}",
                a.tensor_id
            ),
        ))
    };
    let opt = |v: Option<u64>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
    if a.global_shape != b.global_shape {
        return differs(
            "global_shape",
            format!("{:?}", a.global_shape),
            format!("{:?}", b.global_shape),
        );
    }
    if quantized {
        // Only the identity of the tensor remains to compare.
    } else if a.dtype != b.dtype {
        return differs(key::DTYPE, a.dtype.clone(), b.dtype.clone());
    } else if a.itemsize != b.itemsize {
        return differs(
            key::ITEMSIZE,
            a.itemsize.to_string(),
            b.itemsize.to_string(),
        );
    } else if a.layout_fingerprint != b.layout_fingerprint {
        return differs(
            "layout_fingerprint",
            a.layout_fingerprint.clone(),
            b.layout_fingerprint.clone(),
        );
    }
    if a.layer_id != b.layer_id {
        return differs(key::LAYER_ID, opt(a.layer_id), opt(b.layer_id));
    }
    if a.expert_id != b.expert_id {
        return differs(key::EXPERT_ID, opt(a.expert_id), opt(b.expert_id));
    }
    Ok(())
}
