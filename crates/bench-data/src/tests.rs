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

#[test]
fn block_fp8_halves_the_linears_and_adds_one_scale_per_block() {
    // From Kimi-K2's shapes: every 2-D weight of the decoder layers goes from 2 bytes an
    // element to 1, plus 4 bytes per 128x128 block (ceil on each axis); the MLA down
    // projections are whole on each rank; everything else is unchanged.
    let source = Model {
        bf16_experts: true,
        mla_replicated: true,
        ..Model::kimi_k2(1)
    };
    let target = Model {
        block_fp8: true,
        ..Model::kimi_k2(1)
    };
    let (s, t) = (tensors(&source), tensors(&target));
    let scales: Vec<&Tensor> = t.iter().filter(|x| x.id.ends_with("_scale_inv")).collect();
    assert_eq!(s.len() + scales.len(), t.len());
    let quantized: Vec<&Tensor> = s
        .iter()
        .filter(|x| x.layer.is_some() && x.shape.len() == 2 && !x.id.ends_with("mlp.gate.weight"))
        .collect();
    assert_eq!(quantized.len(), scales.len());
    assert_eq!(quantized.len(), self::quantized(&target).len());
    let blocks = |x: &Tensor| x.shape[0].div_ceil(128) * x.shape[1].div_ceil(128);
    let bytes = |ts: &[Tensor]| -> u64 {
        ts.iter()
            .map(|x| x.shape.iter().product::<u64>() * x.itemsize)
            .sum()
    };
    let halved: u64 = quantized
        .iter()
        .map(|x| x.shape.iter().product::<u64>())
        .sum();
    let scale_bytes: u64 = quantized.iter().map(|x| 4 * blocks(x)).sum();
    assert_eq!(bytes(&s) - bytes(&t), halved - scale_bytes);
    for x in &t {
        let down = x.id.contains("q_a_proj") || x.id.contains("kv_a_proj");
        assert_eq!(
            down,
            x.layer.is_some()
                && x.split == Split::Replicated
                && x.shape.len() == 2
                && !x.id.contains("mlp.gate")
        );
    }
    // Every TP box of a quantized tensor is whole on the blocks.
    for x in t.iter().filter(|x| x.dtype == "float8_e4m3fn") {
        for g in 0..8 {
            if let Some((offset, extent)) = x.box_on(g, 8) {
                for axis in 0..2 {
                    let end = offset[axis] + extent[axis];
                    assert!(
                        offset[axis] % 128 == 0 && (end % 128 == 0 || end == x.shape[axis]),
                        "{}",
                        x.id
                    );
                }
            }
        }
    }
    let params: u64 = tensors(&Model::kimi_2p8t(1))
        .iter()
        .map(|x| x.shape.iter().product::<u64>())
        .sum();
    assert_eq!(params / 1_000_000_000, 2_802);
}
