//! Every preset in `examples/rules/` places a synthetic checkpoint of its architecture
//! (realistic names, small shapes) into a valid, complete placement; the MoE presets also
//! through a sharded `model.safetensors.index.json`.

mod adapt_support;

use adapt_support::synthetic::{bert, deepseek_v3, llama, qwen3_moe, Tensors, EXPERTS};
use adapt_support::{
    assert_tiles_per_replica, header_json, preset, scratch, write_header_file, write_sharded,
};

use weight_manifest::{project_placement, Placement};
use weight_manifest::{Options, Runtime};
use weight_manifest_adapt::{self as adapt, AdaptOptions, Grid, Rules};

fn is_expert(name: &str) -> bool {
    name.contains(".mlp.experts.")
}

/// Adapts `tensors` (one file, or `shards` files through an index) with the preset and
/// checks: the placement is valid, has the fragment count the grid implies, every replica
/// tiles every tensor, and its inventory template projects back to it.
fn adapt_checked(
    test: &str,
    rules: &str,
    tensors: &Tensors,
    grid: Grid,
    shards: usize,
) -> Placement {
    let dir = scratch(test);
    if shards == 0 {
        write_header_file(
            &dir.join("model.safetensors"),
            header_json(tensors).as_bytes(),
        );
    } else {
        write_sharded(&dir, tensors, shards);
    }
    let checkpoint = adapt::read_checkpoint(&dir).unwrap();
    assert_eq!(checkpoint.tensors().len(), tensors.len());
    let options = AdaptOptions::new(format!("synthetic/{rules}"), "r1", grid);
    let rules = Rules::from_json(preset(rules), &Options::default()).unwrap();
    let placement = adapt::placement(&checkpoint, &rules, &options).unwrap();
    assert!(Placement::from_json(placement.to_json(), &Options::default()).unwrap() == placement);
    let expected: u64 = tensors
        .iter()
        .map(|(name, _, _)| if is_expert(name) { grid.tp } else { grid.tp * grid.ep } * grid.dp)
        .sum();
    assert_eq!(placement.fragments().len() as u64, expected, "{test}");
    assert_tiles_per_replica(&placement);
    assert!(
        weight_manifest::coverage(&placement, &weight_manifest::Limits::default())
            .unwrap()
            .is_complete(),
        "{test}"
    );
    let inventory =
        serde_json::to_vec(&adapt::runtime_inventory_template(&placement).unwrap()).unwrap();
    let runtime = Runtime::from_inventory_json(&inventory, &Options::default()).unwrap();
    assert_eq!(
        project_placement(&runtime, None).unwrap().placement_id(),
        placement.placement_id()
    );
    placement
}

fn rank_of<'p>(
    placement: &'p Placement,
    tensor: &str,
) -> Vec<&'p weight_manifest::wire::ParallelRank> {
    placement
        .fragments()
        .iter()
        .filter(|f| f.tensor_id == tensor)
        .map(|f| &f.rank)
        .collect()
}

fn descriptor<'p>(
    placement: &'p Placement,
    tensor: &str,
) -> &'p weight_manifest::wire::TensorDescriptor {
    placement
        .tensors()
        .iter()
        .find(|t| t.tensor_id == tensor)
        .unwrap()
}

#[test]
fn bert_preset() {
    let grid = Grid {
        dp: 1,
        pp: 2,
        tp: 4,
        ep: 1,
    };
    let p = adapt_checked("bert", "bert.json", &bert(4), grid, 0);
    assert_eq!(
        rank_of(&p, "bert.encoder.layer.2.output.dense.weight")[0].pp,
        1
    );
    assert_eq!(rank_of(&p, "cls.predictions.bias")[0].pp, 1);
    assert_eq!(
        descriptor(&p, "bert.encoder.layer.1.intermediate.dense.bias").partition_dim,
        Some(0)
    );
}

#[test]
fn llama_preset() {
    let grid = Grid {
        dp: 2,
        pp: 2,
        tp: 2,
        ep: 1,
    };
    let p = adapt_checked("llama", "llama.json", &llama(4), grid, 0);
    assert!(rank_of(&p, "model.layers.1.mlp.down_proj.weight")
        .iter()
        .all(|r| r.pp == 0));
    assert!(rank_of(&p, "model.layers.2.mlp.down_proj.weight")
        .iter()
        .all(|r| r.pp == 1));
    assert!(rank_of(&p, "lm_head.weight").iter().all(|r| r.pp == 1));
    assert!(rank_of(&p, "model.embed_tokens.weight")
        .iter()
        .all(|r| r.pp == 0));
    assert_eq!(
        descriptor(&p, "model.layers.3.self_attn.o_proj.weight").partition_dim,
        Some(1)
    );
    assert_eq!(
        descriptor(&p, "model.layers.3.self_attn.k_proj.weight").global_shape,
        vec![32, 64]
    );
}

fn check_experts(p: &Placement, layer: u64, ep: u64) {
    for e in 0..EXPERTS {
        let name = format!("model.layers.{layer}.mlp.experts.{e}.down_proj.weight");
        let d = descriptor(p, &name);
        assert_eq!(
            (d.layer_id, d.expert_id, d.partition_dim),
            (Some(layer), Some(e), None)
        );
        let owner = e / (EXPERTS / ep);
        assert!(rank_of(p, &name).iter().all(|r| r.ep == owner), "{name}");
    }
}

#[test]
fn qwen3_moe_preset() {
    let grid = Grid {
        dp: 1,
        pp: 2,
        tp: 2,
        ep: 2,
    };
    let p = adapt_checked("qwen3", "qwen3-moe.json", &qwen3_moe(4), grid, 0);
    check_experts(&p, 3, 2);
    let router = "model.layers.0.mlp.gate.weight";
    assert_eq!(rank_of(&p, router).len(), 4);
    assert_eq!(descriptor(&p, router).partition_dim, None);
}

#[test]
fn qwen3_moe_preset_sharded() {
    let grid = Grid {
        dp: 2,
        pp: 1,
        tp: 2,
        ep: 4,
    };
    let tensors = qwen3_moe(2);
    let sharded = adapt_checked("qwen3-sharded", "qwen3-moe.json", &tensors, grid, 3);
    check_experts(&sharded, 1, 4);
    let single = adapt_checked("qwen3-single", "qwen3-moe.json", &tensors, grid, 0);
    assert_eq!(sharded.placement_id(), single.placement_id());
}

#[test]
fn deepseek_v3_preset() {
    let grid = Grid {
        dp: 1,
        pp: 2,
        tp: 2,
        ep: 4,
    };
    let p = adapt_checked("deepseek", "deepseek-v3.json", &deepseek_v3(3), grid, 0);
    check_experts(&p, 2, 4);
    let a = "model.layers.1.self_attn";
    assert_eq!(
        descriptor(&p, &format!("{a}.q_a_proj.weight")).partition_dim,
        None
    );
    assert_eq!(
        descriptor(&p, &format!("{a}.kv_b_proj.weight")).partition_dim,
        Some(0)
    );
    assert_eq!(
        descriptor(&p, &format!("{a}.q_a_proj.weight")).dtype,
        "float8_e4m3fn"
    );
    let scale = descriptor(
        &p,
        "model.layers.1.mlp.shared_experts.down_proj.weight_scale_inv",
    );
    assert_eq!(
        (scale.partition_dim, scale.dtype.as_str()),
        (Some(1), "float32")
    );
    // The multi-token-prediction layer is layer 3 of 0..=3: the second stage.
    assert!(rank_of(&p, "model.layers.3.eh_proj.weight")
        .iter()
        .all(|r| r.pp == 1));
    assert!(
        rank_of(&p, "model.layers.1.mlp.gate.e_score_correction_bias")
            .iter()
            .all(|r| r.pp == 0)
    );
}

#[test]
fn deepseek_v3_preset_sharded() {
    let grid = Grid {
        dp: 1,
        pp: 2,
        tp: 2,
        ep: 2,
    };
    let tensors = deepseek_v3(3);
    let sharded = adapt_checked("deepseek-sharded", "deepseek-v3.json", &tensors, grid, 4);
    let single = adapt_checked("deepseek-single", "deepseek-v3.json", &tensors, grid, 0);
    assert_eq!(sharded.placement_id(), single.placement_id());
}

#[test]
fn presets_match_the_published_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        weight_manifest::schema::published("adapter-rules.schema.json").unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for name in [
        "bert.json",
        "llama.json",
        "qwen3-moe.json",
        "deepseek-v3.json",
        "vllm-llama.json",
        "vllm-qwen2.json",
        "vllm-qwen3-moe.json",
    ] {
        let value: serde_json::Value = serde_json::from_str(&preset(name)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let bad = serde_json::json!({"layout_fingerprint": "x", "rules": [{"match": "a", "action": "shard"}]});
    assert!(!validator.is_valid(&bad));
}

#[test]
fn the_cli_guides_example_rules_are_valid() {
    let guide = std::fs::read_to_string(adapt_support::root().join("docs/cli.md")).unwrap();
    let section = &guide[guide.find("## From a checkpoint").unwrap()..];
    let start = section.find("```json\n").unwrap() + 8;
    let end = start + section[start..].find("```").unwrap();
    let rules = Rules::from_json(&section[start..end], &Options::default()).unwrap();
    assert_eq!(rules.rules().len(), 3);
}
