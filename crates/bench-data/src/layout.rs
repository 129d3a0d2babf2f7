//! The tensors of a DeepSeek-V3-like or Kimi-K2-like model and how a deployment splits
//! them over tensor, expert, pipeline and data parallel ranks.

/// The shape of a model and of its deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The `model_id` written into the documents.
    pub model_id: String,
    /// Decoder layers.
    pub layers: u64,
    /// Leading layers with a dense MLP instead of experts.
    pub dense_layers: u64,
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Attention heads.
    pub heads: u64,
    /// MLA query LoRA rank.
    pub q_lora_rank: u64,
    /// MLA key/value LoRA rank.
    pub kv_lora_rank: u64,
    /// Per-head dimensions: no-position part, rotary part, value.
    pub head_dims: (u64, u64, u64),
    /// Intermediate size of one routed (and the shared) expert.
    pub moe_intermediate: u64,
    /// Intermediate size of the dense MLP.
    pub dense_intermediate: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Tensor parallel degree (also the expert parallel degree: EP spans the TP group).
    pub tp: u64,
    /// Pipeline stages (contiguous layer ranges).
    pub pp: u64,
    /// Data parallel replicas.
    pub dp: u64,
    /// Routed experts in BF16 (a trainer's copy) instead of the checkpoint's FP8.
    pub bf16_experts: bool,
    /// The MLA down projections (`q_a_proj`, `kv_a_proj_with_mqa`) whole on every TP rank,
    /// as vLLM's replicated linear and Megatron's duplicated one hold them, instead of split
    /// by rows (whose 192- and 72-row shards would cut 128x128 blocks).
    pub mla_replicated: bool,
    /// The checkpoint's block FP8 (DeepSeek-V3's format): every linear weight of the decoder
    /// layers float8_e4m3fn with a float32 `weight_scale_inv` of one value per 128x128
    /// block, split as its weight; embeddings, head, norms and router stay as they are.
    /// Implies `mla_replicated` and FP8 experts.
    pub block_fp8: bool,
}

impl Model {
    /// DeepSeek-V3: 61 layers (3 dense), 256 experts, MLA; TP8 = EP8, PP4, DP2.
    pub fn deepseek_v3() -> Model {
        Model {
            model_id: "deepseek-ai/DeepSeek-V3".to_owned(),
            layers: 61,
            dense_layers: 3,
            experts: 256,
            hidden: 7168,
            heads: 128,
            q_lora_rank: 1536,
            kv_lora_rank: 512,
            head_dims: (128, 64, 128),
            moe_intermediate: 2048,
            dense_intermediate: 18432,
            vocab: 129_280,
            tp: 8,
            pp: 4,
            dp: 2,
            bf16_experts: false,
            mla_replicated: false,
            block_fp8: false,
        }
    }

    /// Kimi-K2: 61 layers (1 dense), 384 experts, 64 heads; TP8 = EP8, PP4 and `dp`
    /// replicas (14 give just over a million fragments).
    pub fn kimi_k2(dp: u64) -> Model {
        Model {
            model_id: "moonshotai/Kimi-K2-Instruct".to_owned(),
            layers: 61,
            dense_layers: 1,
            experts: 384,
            heads: 64,
            vocab: 163_840,
            dp,
            ..Model::deepseek_v3()
        }
    }

    /// The same deployment with only the first `layers` layers (for scaling curves).
    #[must_use]
    pub fn truncated(mut self, layers: u64) -> Model {
        self.layers = layers.clamp(1, self.layers);
        self.dense_layers = self.dense_layers.min(self.layers);
        self
    }

    /// A 2.8-trillion-parameter MoE of the Kimi-K2 family: its layers and shapes with 1,056
    /// routed experts per MoE layer (132 per EP rank of 8).
    pub fn kimi_2p8t(dp: u64) -> Model {
        Model {
            model_id: "example/kimi-k2-family-2.8t".to_owned(),
            experts: 1056,
            ..Model::kimi_k2(dp)
        }
    }

    /// The pipeline stage that holds `layer`.
    pub fn stage_of(&self, layer: u64) -> u64 {
        layer * self.pp / self.layers
    }
}

/// How one tensor is split over the ranks of a pipeline stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// A whole copy on every TP rank (norms, router).
    Replicated,
    /// Column-parallel: axis 0 split over the TP ranks.
    Column,
    /// Row-parallel: axis 1 split over the TP ranks.
    Row,
    /// A routed expert: the whole tensor on one EP rank.
    Expert(u64),
}

/// One logical tensor of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// The tensor_id.
    pub id: String,
    /// The global shape.
    pub shape: Vec<u64>,
    /// The dtype name.
    pub dtype: &'static str,
    /// Bytes per element.
    pub itemsize: u64,
    /// The decoder layer, if any.
    pub layer: Option<u64>,
    /// The routed expert, if any.
    pub expert: Option<u64>,
    /// The pipeline stage that holds it.
    pub stage: u64,
    /// How it is split.
    pub split: Split,
}

impl Tensor {
    /// The canonical shard dims.
    pub fn shard_dims(&self) -> Vec<u64> {
        match self.split {
            Split::Column => vec![0],
            Split::Row => vec![1],
            Split::Replicated | Split::Expert(_) => Vec::new(),
        }
    }

    /// The box (offset, extent) held by TP/EP rank `g` of `tp`, if it holds one.
    pub fn box_on(&self, g: u64, tp: u64) -> Option<(Vec<u64>, Vec<u64>)> {
        let whole = (vec![0; self.shape.len()], self.shape.clone());
        match self.split {
            Split::Replicated => Some(whole),
            Split::Expert(owner) => (owner == g).then_some(whole),
            Split::Column | Split::Row => {
                let axis = usize::from(self.split == Split::Row);
                let (mut offset, mut extent) = whole;
                extent[axis] = self.shape[axis] / tp;
                offset[axis] = extent[axis] * g;
                Some((offset, extent))
            }
        }
    }
}

/// The block edge of the checkpoint's block FP8 (both of a weight's axes).
pub const BLOCK: u64 = 128;

/// The quantized tensors of `model` (its block-FP8 weights) with their scale tensors, as
/// (tensor_id, scale_tensor_id): empty unless `block_fp8`.
pub fn quantized(model: &Model) -> Vec<(String, String)> {
    tensors(model)
        .iter()
        .filter(|t| t.dtype == "float8_e4m3fn" && model.block_fp8)
        .map(|t| (t.id.clone(), t.id.replace(".weight", ".weight_scale_inv")))
        .collect()
}

/// Every tensor of `model`, in model order.
pub fn tensors(model: &Model) -> Vec<Tensor> {
    let bf16 = |id: String, shape: Vec<u64>, layer: Option<u64>, split: Split| Tensor {
        id,
        shape,
        dtype: "bfloat16",
        itemsize: 2,
        layer,
        expert: None,
        stage: layer.map_or(0, |l| model.stage_of(l)),
        split,
    };
    // A decoder layer's linear weight: as it is, or in block FP8 with its scales.
    let linear = |out: &mut Vec<Tensor>, t: Tensor| {
        if !model.block_fp8 || t.shape.len() < 2 {
            out.push(t);
            return;
        }
        let mut scale_shape = t.shape.clone();
        for extent in &mut scale_shape {
            *extent = extent.div_ceil(BLOCK);
        }
        let scale = Tensor {
            id: t.id.replace(".weight", ".weight_scale_inv"),
            shape: scale_shape,
            dtype: "float32",
            itemsize: 4,
            ..t.clone()
        };
        out.push(Tensor {
            dtype: "float8_e4m3fn",
            itemsize: 1,
            ..t
        });
        out.push(scale);
    };
    let h = model.hidden;
    let (nope, rope, v) = model.head_dims;
    let last = model.pp - 1;
    let mut out = vec![bf16(
        "model.embed_tokens.weight".to_owned(),
        vec![model.vocab, h],
        None,
        Split::Column,
    )];
    for l in 0..model.layers {
        let at = |name: &str| format!("model.layers.{l}.{name}");
        let layer = Some(l);
        let attention = [
            (
                "self_attn.q_a_proj.weight",
                vec![model.q_lora_rank, h],
                Split::Column,
            ),
            (
                "self_attn.q_a_layernorm.weight",
                vec![model.q_lora_rank],
                Split::Replicated,
            ),
            (
                "self_attn.q_b_proj.weight",
                vec![model.heads * (nope + rope), model.q_lora_rank],
                Split::Column,
            ),
            (
                "self_attn.kv_a_proj_with_mqa.weight",
                vec![model.kv_lora_rank + rope, h],
                Split::Column,
            ),
            (
                "self_attn.kv_a_layernorm.weight",
                vec![model.kv_lora_rank],
                Split::Replicated,
            ),
            (
                "self_attn.kv_b_proj.weight",
                vec![model.heads * (nope + v), model.kv_lora_rank],
                Split::Column,
            ),
            (
                "self_attn.o_proj.weight",
                vec![h, model.heads * v],
                Split::Row,
            ),
            ("input_layernorm.weight", vec![h], Split::Replicated),
            (
                "post_attention_layernorm.weight",
                vec![h],
                Split::Replicated,
            ),
        ];
        let replicated = model.mla_replicated || model.block_fp8;
        for (name, shape, split) in attention {
            let down =
                name.starts_with("self_attn.q_a_proj") || name.starts_with("self_attn.kv_a_proj");
            let split = if down && replicated {
                Split::Replicated
            } else {
                split
            };
            linear(&mut out, bf16(at(name), shape, layer, split));
        }
        let mlp = |prefix: &str, inter: u64| {
            [
                (
                    format!("{prefix}.gate_proj.weight"),
                    vec![inter, h],
                    Split::Column,
                ),
                (
                    format!("{prefix}.up_proj.weight"),
                    vec![inter, h],
                    Split::Column,
                ),
                (
                    format!("{prefix}.down_proj.weight"),
                    vec![h, inter],
                    Split::Row,
                ),
            ]
        };
        if l < model.dense_layers {
            for (name, shape, split) in mlp("mlp", model.dense_intermediate) {
                linear(&mut out, bf16(at(&name), shape, layer, split));
            }
            continue;
        }
        for (name, shape, split) in mlp("mlp.shared_experts", model.moe_intermediate) {
            linear(&mut out, bf16(at(&name), shape, layer, split));
        }
        out.push(bf16(
            at("mlp.gate.weight"),
            vec![model.experts, h],
            layer,
            Split::Replicated,
        ));
        out.push(Tensor {
            dtype: "float32",
            itemsize: 4,
            ..bf16(
                at("mlp.gate.e_score_correction_bias"),
                vec![model.experts],
                layer,
                Split::Replicated,
            )
        });
        let per_rank = model.experts.div_ceil(model.tp);
        for e in 0..model.experts {
            for (name, shape, _) in mlp(&format!("mlp.experts.{e}"), model.moe_intermediate) {
                let expert = Tensor {
                    expert: Some(e),
                    ..bf16(at(&name), shape, layer, Split::Expert(e / per_rank))
                };
                if model.block_fp8 {
                    linear(&mut out, expert);
                } else if model.bf16_experts {
                    out.push(expert);
                } else {
                    out.push(Tensor {
                        dtype: "float8_e4m3fn",
                        itemsize: 1,
                        ..expert
                    });
                }
            }
        }
    }
    let mut norm = bf16(
        "model.norm.weight".to_owned(),
        vec![h],
        None,
        Split::Replicated,
    );
    norm.stage = last;
    let mut head = bf16(
        "lm_head.weight".to_owned(),
        vec![model.vocab, h],
        None,
        Split::Column,
    );
    head.stage = last;
    out.push(norm);
    out.push(head);
    out
}
