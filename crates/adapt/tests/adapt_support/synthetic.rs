//! Synthetic checkpoints of each preset's architecture: realistic tensor names, small
//! shapes (hidden 64, 4 heads, 8 experts, vocabulary 256).

/// (name, safetensors dtype, shape) in file order.
pub type Tensors = Vec<(String, &'static str, Vec<u64>)>;

/// Hidden size.
pub const HIDDEN: u64 = 64;
/// Vocabulary size.
pub const VOCAB: u64 = 256;
/// Attention heads.
pub const HEADS: u64 = 4;
/// Routed experts per MoE layer.
pub const EXPERTS: u64 = 8;

fn push(out: &mut Tensors, name: impl Into<String>, dtype: &'static str, shape: &[u64]) {
    out.push((name.into(), dtype, shape.to_vec()));
}

/// A BERT encoder under the `bert.` prefix, with pre-training heads.
pub fn bert(layers: u64) -> Tensors {
    let mut t = Tensors::new();
    for name in [
        "word_embeddings",
        "position_embeddings",
        "token_type_embeddings",
    ] {
        let rows = if name == "word_embeddings" { VOCAB } else { 32 };
        push(
            &mut t,
            format!("bert.embeddings.{name}.weight"),
            "F32",
            &[rows, HIDDEN],
        );
    }
    push(&mut t, "bert.embeddings.position_ids", "I64", &[1, 32]);
    push(&mut t, "bert.embeddings.LayerNorm.weight", "F32", &[HIDDEN]);
    push(&mut t, "bert.embeddings.LayerNorm.bias", "F32", &[HIDDEN]);
    for l in 0..layers {
        let p = format!("bert.encoder.layer.{l}");
        for m in ["query", "key", "value"] {
            push(
                &mut t,
                format!("{p}.attention.self.{m}.weight"),
                "F32",
                &[HIDDEN, HIDDEN],
            );
            push(
                &mut t,
                format!("{p}.attention.self.{m}.bias"),
                "F32",
                &[HIDDEN],
            );
        }
        push(
            &mut t,
            format!("{p}.attention.output.dense.weight"),
            "F32",
            &[HIDDEN, HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.attention.output.dense.bias"),
            "F32",
            &[HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.intermediate.dense.weight"),
            "F32",
            &[4 * HIDDEN, HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.intermediate.dense.bias"),
            "F32",
            &[4 * HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.output.dense.weight"),
            "F32",
            &[HIDDEN, 4 * HIDDEN],
        );
        push(&mut t, format!("{p}.output.dense.bias"), "F32", &[HIDDEN]);
        for n in ["attention.output.LayerNorm", "output.LayerNorm"] {
            push(&mut t, format!("{p}.{n}.weight"), "F32", &[HIDDEN]);
            push(&mut t, format!("{p}.{n}.bias"), "F32", &[HIDDEN]);
        }
    }
    push(&mut t, "bert.pooler.dense.weight", "F32", &[HIDDEN, HIDDEN]);
    push(&mut t, "bert.pooler.dense.bias", "F32", &[HIDDEN]);
    push(&mut t, "cls.predictions.bias", "F32", &[VOCAB]);
    push(
        &mut t,
        "cls.predictions.transform.dense.weight",
        "F32",
        &[HIDDEN, HIDDEN],
    );
    t
}

/// Attention of a Llama/Qwen decoder layer: 4 heads of 16, 2 key-value heads.
fn attention(t: &mut Tensors, p: &str, qk_norm: bool) {
    let head = HIDDEN / HEADS;
    push(
        t,
        format!("{p}.self_attn.q_proj.weight"),
        "BF16",
        &[HIDDEN, HIDDEN],
    );
    push(
        t,
        format!("{p}.self_attn.k_proj.weight"),
        "BF16",
        &[2 * head, HIDDEN],
    );
    push(
        t,
        format!("{p}.self_attn.v_proj.weight"),
        "BF16",
        &[2 * head, HIDDEN],
    );
    push(
        t,
        format!("{p}.self_attn.o_proj.weight"),
        "BF16",
        &[HIDDEN, HIDDEN],
    );
    if qk_norm {
        push(t, format!("{p}.self_attn.q_norm.weight"), "BF16", &[head]);
        push(t, format!("{p}.self_attn.k_norm.weight"), "BF16", &[head]);
    }
    push(t, format!("{p}.input_layernorm.weight"), "BF16", &[HIDDEN]);
    push(
        t,
        format!("{p}.post_attention_layernorm.weight"),
        "BF16",
        &[HIDDEN],
    );
}

fn mlp(t: &mut Tensors, p: &str, inter: u64, dtype: &'static str, scales: bool) {
    for (m, shape) in [
        ("gate_proj", [inter, HIDDEN]),
        ("up_proj", [inter, HIDDEN]),
        ("down_proj", [HIDDEN, inter]),
    ] {
        push(t, format!("{p}.{m}.weight"), dtype, &shape);
        if scales {
            // FP8 block scales, one per 16×16 block in these small shapes.
            push(
                t,
                format!("{p}.{m}.weight_scale_inv"),
                "F32",
                &[shape[0] / 16, shape[1] / 16],
            );
        }
    }
}

fn ends(t: &mut Tensors) {
    push(t, "model.embed_tokens.weight", "BF16", &[VOCAB, HIDDEN]);
    push(t, "model.norm.weight", "BF16", &[HIDDEN]);
    push(t, "lm_head.weight", "BF16", &[VOCAB, HIDDEN]);
}

/// A Llama dense decoder.
pub fn llama(layers: u64) -> Tensors {
    let mut t = Tensors::new();
    ends(&mut t);
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        attention(&mut t, &p, false);
        mlp(&mut t, &format!("{p}.mlp"), 128, "BF16", false);
    }
    t
}

/// A Qwen3-MoE decoder: q/k norms, router, routed experts.
pub fn qwen3_moe(layers: u64) -> Tensors {
    let mut t = Tensors::new();
    ends(&mut t);
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        attention(&mut t, &p, true);
        push(
            &mut t,
            format!("{p}.mlp.gate.weight"),
            "BF16",
            &[EXPERTS, HIDDEN],
        );
        for e in 0..EXPERTS {
            mlp(&mut t, &format!("{p}.mlp.experts.{e}"), 32, "BF16", false);
        }
    }
    t
}

/// DeepSeek-V3 in miniature: MLA, one dense layer, MoE layers with shared experts, FP8
/// weights with block scales, and the multi-token-prediction layer after the last one.
pub fn deepseek_v3(layers: u64) -> Tensors {
    let (q_lora, kv_lora, nope, rope, v_head) = (32, 32, 16, 8, 16);
    let mut t = Tensors::new();
    ends(&mut t);
    for l in 0..=layers {
        let p = format!("model.layers.{l}");
        let a = format!("{p}.self_attn");
        push(
            &mut t,
            format!("{a}.q_a_proj.weight"),
            "F8_E4M3",
            &[q_lora, HIDDEN],
        );
        push(
            &mut t,
            format!("{a}.q_a_proj.weight_scale_inv"),
            "F32",
            &[2, 4],
        );
        push(
            &mut t,
            format!("{a}.q_a_layernorm.weight"),
            "BF16",
            &[q_lora],
        );
        push(
            &mut t,
            format!("{a}.q_b_proj.weight"),
            "F8_E4M3",
            &[HEADS * (nope + rope), q_lora],
        );
        push(
            &mut t,
            format!("{a}.kv_a_proj_with_mqa.weight"),
            "F8_E4M3",
            &[kv_lora + rope, HIDDEN],
        );
        push(
            &mut t,
            format!("{a}.kv_a_layernorm.weight"),
            "BF16",
            &[kv_lora],
        );
        push(
            &mut t,
            format!("{a}.kv_b_proj.weight"),
            "F8_E4M3",
            &[HEADS * (nope + v_head), kv_lora],
        );
        push(
            &mut t,
            format!("{a}.o_proj.weight"),
            "F8_E4M3",
            &[HIDDEN, HEADS * v_head],
        );
        push(
            &mut t,
            format!("{a}.o_proj.weight_scale_inv"),
            "F32",
            &[4, 4],
        );
        push(
            &mut t,
            format!("{p}.input_layernorm.weight"),
            "BF16",
            &[HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.post_attention_layernorm.weight"),
            "BF16",
            &[HIDDEN],
        );
        if l == 0 {
            mlp(&mut t, &format!("{p}.mlp"), 128, "F8_E4M3", true);
            continue;
        }
        push(
            &mut t,
            format!("{p}.mlp.gate.weight"),
            "BF16",
            &[EXPERTS, HIDDEN],
        );
        push(
            &mut t,
            format!("{p}.mlp.gate.e_score_correction_bias"),
            "F32",
            &[EXPERTS],
        );
        mlp(
            &mut t,
            &format!("{p}.mlp.shared_experts"),
            32,
            "F8_E4M3",
            true,
        );
        for e in 0..EXPERTS {
            mlp(&mut t, &format!("{p}.mlp.experts.{e}"), 32, "F8_E4M3", true);
        }
        if l == layers {
            push(
                &mut t,
                format!("{p}.embed_tokens.weight"),
                "BF16",
                &[VOCAB, HIDDEN],
            );
            push(&mut t, format!("{p}.enorm.weight"), "BF16", &[HIDDEN]);
            push(&mut t, format!("{p}.hnorm.weight"), "BF16", &[HIDDEN]);
            push(
                &mut t,
                format!("{p}.eh_proj.weight"),
                "BF16",
                &[HIDDEN, 2 * HIDDEN],
            );
            push(
                &mut t,
                format!("{p}.shared_head.norm.weight"),
                "BF16",
                &[HIDDEN],
            );
            push(
                &mut t,
                format!("{p}.shared_head.head.weight"),
                "BF16",
                &[VOCAB, HIDDEN],
            );
        }
    }
    t
}
