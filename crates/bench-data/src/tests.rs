use super::*;

use weight_manifest::{project_placement, Placement};
use weight_manifest::{Options, Runtime};

#[test]
fn deepseek_v3_has_the_issue_s_size() {
    let model = Model::deepseek_v3();
    let tensors = tensors(&model);
    assert_eq!(tensors.len(), 45_395);
    assert_eq!(fragment_count(&model), 102_704);
    assert_eq!(
        (0..model.layers).map(|l| model.stage_of(l)).max(),
        Some(model.pp - 1)
    );
    assert!(fragment_count(&Model::kimi_k2(14)) > 1_000_000);
}

#[test]
fn generated_documents_validate_and_agree() {
    let model = Model::deepseek_v3().truncated(4);
    let mut placement_text = Vec::new();
    write_placement(&model, &mut placement_text).unwrap();
    let placement = Placement::from_json(&placement_text, &Options::default()).unwrap();
    assert_eq!(placement.fragments().len(), fragment_count(&model));
    assert!(placement_text.starts_with(b"{\"fragments\": [{\"aliases\": [], "));

    let mut inventory_text = Vec::new();
    write_runtime_inventory(&model, &mut inventory_text).unwrap();
    let runtime = Runtime::from_inventory_json(&inventory_text, &Options::default()).unwrap();
    assert_eq!(runtime.fragments().len(), fragment_count(&model));
    let projected = project_placement(&runtime, Some(placement.placement_id())).unwrap();
    assert_eq!(projected.digest(), placement.digest());
    assert_eq!(
        projected.to_json().into_bytes(),
        placement.to_json().into_bytes()
    );
}

#[test]
fn bf16_experts_double_the_experts_bytes_only() {
    // Kimi-K2 from its shapes: each routed expert is 3 matrices of 2048 x 7168 elements,
    // 384 experts in each of the 60 MoE layers.
    let fp8 = Model::kimi_k2(1);
    let bf16 = Model {
        bf16_experts: true,
        ..Model::kimi_k2(1)
    };
    let bytes = |m: &Model| -> u64 {
        tensors(m)
            .iter()
            .map(|t| t.shape.iter().product::<u64>() * t.itemsize)
            .sum()
    };
    let experts = 60 * 384 * 3 * 2048 * 7168;
    assert_eq!(bytes(&bf16) - bytes(&fp8), experts);
    assert!(tensors(&bf16)
        .iter()
        .filter(|t| t.expert.is_some())
        .all(|t| t.dtype == "bfloat16" && t.itemsize == 2));
    assert_eq!(tensors(&bf16).len(), tensors(&fp8).len());
}
