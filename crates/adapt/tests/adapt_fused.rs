//! The vLLM presets (`examples/rules/vllm-*.json`): fused buffers (`fused`) and splits in
//! whole pieces (`pieces`, `multiple_of`) or of a padded size (`pad_to`) on synthetic
//! checkpoints, against boxes and
//! offsets written out here from vLLM's rules: `QKVParallelLinear` holds q, k and v rows
//! in that order, rank r of n holding query heads [r·H/n, (r+1)·H/n) and, when n exceeds
//! the KV heads K, KV head r / (n/K); `MergedColumnParallelLinear` holds gate then up rows;
//! `w13_weight` stacks each expert's gate rows then up rows. Each rejection is one check
//! alone, with its code and pointer.

mod adapt_support;

use std::collections::BTreeMap;

use adapt_support::synthetic::{llama, qwen3_moe, Tensors, EXPERTS, HIDDEN, VOCAB};
use adapt_support::{header_json, preset, scratch, write_header_file};

use weight_manifest::wire::{PlacementFragment, RuntimeInventoryRecord};
use weight_manifest::{project_placement, AddressSemantics, Options, Placement, Runtime};
use weight_manifest_adapt::{self as adapt, AdaptOptions, Adapted, Checkpoint, Grid, Rules};

const HEAD: u64 = 16; // synthetic: 4 heads of 16, 2 KV heads
const ITEM: u64 = 2; // BF16

fn checkpoint(test: &str, tensors: &Tensors) -> Checkpoint {
    // A folder of its own per call: the tests run in parallel threads of one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch(&format!("fused-{test}-{call}"));
    write_header_file(
        &dir.join("model.safetensors"),
        header_json(tensors).as_bytes(),
    );
    adapt::read_checkpoint(&dir).unwrap()
}

fn grid(tp: u64) -> Grid {
    Grid {
        dp: 1,
        pp: 1,
        tp,
        ep: 1,
    }
}

fn options(tp: u64) -> AdaptOptions {
    AdaptOptions::new("synthetic", "r1", grid(tp))
        .with_dim("heads", 4)
        .with_dim("kv_heads", 2)
}

fn adapted(
    rules: &str,
    tensors: &Tensors,
    options: &AdaptOptions,
) -> weight_manifest::error::Result<Adapted> {
    let checkpoint = checkpoint(rules, tensors);
    let rules = Rules::from_json(preset(rules), &Options::default()).unwrap();
    adapt::adapt(&checkpoint, &rules, options)
}

fn on_rank<'p>(placement: &'p Placement, tensor: &str, tp: u64) -> &'p PlacementFragment {
    placement
        .fragments()
        .iter()
        .find(|f| f.tensor_id == tensor && f.rank.tp == tp)
        .unwrap_or_else(|| panic!("{tensor} on tp{tp}"))
}

/// The template's records by (tensor, tp), after checking it reads back (as views) and
/// projects to the placement.
fn template(adapted: &Adapted) -> BTreeMap<(String, u64), RuntimeInventoryRecord> {
    let inventory =
        adapt::runtime_inventory_template_fused(&adapted.placement, &adapted.fusion).unwrap();
    let text = serde_json::to_vec(&inventory).unwrap();
    let options = Options::default().with_address_semantics(AddressSemantics::View);
    let runtime = Runtime::from_inventory_json(&text, &options).unwrap();
    assert_eq!(
        project_placement(&runtime, None).unwrap().placement_id(),
        adapted.placement.placement_id()
    );
    inventory
        .tensors
        .into_iter()
        .map(|r| ((r.tensor_id.clone(), r.rank.tp), r))
        .collect()
}

fn rows(fragment: &PlacementFragment) -> (u64, u64) {
    (fragment.global_offset[0], fragment.local_shape[0])
}

#[test]
fn qkv_and_gate_up_are_fused_as_vllm_holds_them_at_tp1_and_tp2() {
    let attn = "model.layers.1.self_attn";
    let mlp = "model.layers.1.mlp";
    for tp in [1, 2] {
        let laid = adapted("vllm-llama.json", &llama(2), &options(tp)).unwrap();
        let records = template(&laid);
        let q_rows = HIDDEN / tp; // 4 heads over tp, whole
        let kv_rows = 2 * HEAD / tp; // 2 KV heads over tp, whole
        for t in 0..tp {
            assert_eq!(
                rows(on_rank(
                    &laid.placement,
                    &format!("{attn}.q_proj.weight"),
                    t
                )),
                (t * q_rows, q_rows)
            );
            assert_eq!(
                rows(on_rank(
                    &laid.placement,
                    &format!("{attn}.k_proj.weight"),
                    t
                )),
                (t * kv_rows, kv_rows)
            );
            let qkv = format!("{attn}.qkv_proj.weight");
            let (rq, rk, rv) = (
                &records[&(format!("{attn}.q_proj.weight"), t)],
                &records[&(format!("{attn}.k_proj.weight"), t)],
                &records[&(format!("{attn}.v_proj.weight"), t)],
            );
            // rows rq | rk | rv of one buffer [q_rows + 2 kv_rows, hidden]
            assert_eq!(
                (rq.byte_offset, rk.byte_offset, rv.byte_offset),
                (
                    0,
                    q_rows * HIDDEN * ITEM,
                    (q_rows + kv_rows) * HIDDEN * ITEM
                )
            );
            assert_eq!(
                (rk.address - rq.address, rv.address - rq.address),
                (rk.byte_offset, rv.byte_offset)
            );
            assert_eq!(rq.storage_offset * ITEM, rq.byte_offset);
            assert_eq!(rk.storage_offset, q_rows * HIDDEN);
            for r in [rq, rk, rv] {
                assert_eq!(r.aliases.as_deref(), Some(&[qkv.clone()][..]));
            }
            assert_eq!(
                on_rank(&laid.placement, &format!("{attn}.v_proj.weight"), t).aliases,
                vec![qkv.clone()]
            );
            let inter = 128 / tp;
            let up = &records[&(format!("{mlp}.up_proj.weight"), t)];
            assert_eq!(up.byte_offset, inter * HIDDEN * ITEM);
            assert_eq!(
                up.aliases.as_deref(),
                Some(&[format!("{mlp}.gate_up_proj.weight")][..])
            );
            // A tensor no entry names is held on its own.
            let ro = &records[&(format!("{attn}.o_proj.weight"), t)];
            assert_eq!((ro.byte_offset, ro.aliases.as_deref()), (0, None));
            assert_eq!(
                on_rank(&laid.placement, &format!("{attn}.o_proj.weight"), t).local_shape,
                vec![HIDDEN, HIDDEN / tp]
            );
        }
    }
}

#[test]
fn a_kv_head_is_held_whole_by_tp_over_kv_heads_ranks() {
    // tp 4 over 2 KV heads: ranks 0 and 1 hold head 0, ranks 2 and 3 head 1; q is cut in
    // whole heads, one each.
    let a = adapted("vllm-llama.json", &llama(1), &options(4)).unwrap();
    for t in 0..4 {
        assert_eq!(
            rows(on_rank(
                &a.placement,
                "model.layers.0.self_attn.k_proj.weight",
                t
            )),
            ((t / 2) * HEAD, HEAD)
        );
        assert_eq!(
            rows(on_rank(
                &a.placement,
                "model.layers.0.self_attn.v_proj.weight",
                t
            )),
            ((t / 2) * HEAD, HEAD)
        );
        assert_eq!(
            rows(on_rank(
                &a.placement,
                "model.layers.0.self_attn.q_proj.weight",
                t
            )),
            (t * HEAD, HEAD)
        );
    }
    let records = template(&a);
    assert_eq!(
        records[&("model.layers.0.self_attn.v_proj.weight".to_owned(), 3)].byte_offset,
        2 * HEAD * HIDDEN * ITEM
    );
}

#[test]
fn experts_stack_gate_and_up_rows_in_w13() {
    for tp in [1, 2] {
        let a = adapted("vllm-qwen3-moe.json", &qwen3_moe(2), &options(tp)).unwrap();
        let records = template(&a);
        let inter = 32 / tp; // each expert's intermediate rows, split over tp
        let block = 2 * inter * HIDDEN * ITEM; // one expert: gate rows then up rows
        let w13 = "model.layers.1.mlp.experts.routed_experts.w13_weight";
        for t in 0..tp {
            for e in 0..EXPERTS {
                let gate = &records[&(
                    format!("model.layers.1.mlp.experts.{e}.gate_proj.weight"),
                    t,
                )];
                let up = &records[&(format!("model.layers.1.mlp.experts.{e}.up_proj.weight"), t)];
                let down = &records[&(
                    format!("model.layers.1.mlp.experts.{e}.down_proj.weight"),
                    t,
                )];
                assert_eq!(
                    (gate.byte_offset, up.byte_offset),
                    (e * block, e * block + inter * HIDDEN * ITEM)
                );
                assert_eq!(gate.aliases.as_deref(), Some(&[w13.to_owned()][..]));
                assert_eq!(down.local_shape, vec![HIDDEN, inter]);
                assert_eq!(down.byte_offset, e * HIDDEN * inter * ITEM);
                assert_eq!(
                    rows(on_rank(
                        &a.placement,
                        &format!("model.layers.1.mlp.experts.{e}.up_proj.weight"),
                        t
                    )),
                    (t * inter, inter)
                );
            }
        }
    }
}

fn with(rules: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&preset(rules)).unwrap();
    edit(&mut value);
    value.to_string()
}

fn rejected(
    rules_text: &str,
    tensors: &Tensors,
    options: &AdaptOptions,
) -> (String, Option<String>) {
    let checkpoint = checkpoint("rejected", tensors);
    let error = Rules::from_json(rules_text, &Options::default())
        .and_then(|rules| adapt::adapt(&checkpoint, &rules, options))
        .unwrap_err();
    (
        error.code().as_str().to_owned(),
        error.path().map(str::to_owned),
    )
}

#[test]
fn each_pieces_and_multiple_of_check_on_its_own() {
    let rules = preset("vllm-llama.json");
    let no_dims = AdaptOptions::new("synthetic", "r1", grid(2));
    assert_eq!(
        rejected(&rules, &llama(1), &no_dims),
        (
            "adapt_dimension_missing".into(),
            Some("/rules/2/action/split/pieces".into())
        ) // k_proj, first by name
    );
    // multiple_of refuses a size that is not a multiple (an engine that would pad it).
    let multiple = r#"{"layout_fingerprint": "x", "rules": [
        {"match": "model\\.embed_tokens\\.weight", "action": {"split": {"dim": 0, "over": "tp", "multiple_of": 64}}},
        {"match": ".*", "action": "replicate"}]}"#;
    let mut padded = llama(1);
    for t in &mut padded {
        if t.0 == "model.embed_tokens.weight" {
            t.2[0] = VOCAB - 2;
        }
    }
    let checkpoint = checkpoint("multiple", &padded);
    let error = Rules::from_json(multiple, &Options::default())
        .and_then(|rules| adapt::adapt(&checkpoint, &rules, &options(2)))
        .unwrap_err();
    assert_eq!(
        (error.code().as_str(), error.path()),
        (
            "adapt_uneven_split",
            Some("/rules/0/action/split/multiple_of")
        )
    );
    // Zero is not a dimension.
    assert_eq!(
        rejected(&rules, &llama(1), &options(2).with_dim("heads", 0)).0,
        "adapt_dimension_missing"
    );
}

/// A one-rule file splitting tensor `k` of `rows` rows in `kv` pieces over `tp`.
fn pieces(rows: u64, kv: u64, tp: u64) -> weight_manifest::error::Result<Placement> {
    let rules = r#"{"layout_fingerprint": "x", "rules": [
        {"match": "k", "action": {"split": {"dim": 0, "over": "tp", "pieces": "kv"}}}]}"#;
    let checkpoint = checkpoint("pieces", &vec![("k".to_owned(), "F32", vec![rows, 4])]);
    let rules = Rules::from_json(rules, &Options::default()).unwrap();
    adapt::placement(
        &checkpoint,
        &rules,
        &AdaptOptions::new("m", "r", grid(tp)).with_dim("kv", kv),
    )
}

#[test]
fn pieces_are_never_cut() {
    let code = |r: weight_manifest::error::Result<Placement>| r.unwrap_err().code().as_str();
    assert_eq!(code(pieces(6, 4, 2)), "adapt_uneven_split"); // 6 rows are not 4 pieces
    assert_eq!(code(pieces(6, 3, 2)), "adapt_uneven_split"); // 3 pieces over 2 ranks
    assert_eq!(code(pieces(6, 2, 3)), "adapt_uneven_split"); // 3 ranks share 2 pieces unevenly
                                                             // 3 pieces of 2 rows over 6 ranks: rank r holds piece r / 2.
    let shared = pieces(6, 3, 6).unwrap();
    for t in 0..6 {
        assert_eq!(rows(on_rank(&shared, "k", t)), ((t / 2) * 2, 2));
    }
    // 6 pieces over 3 ranks: two whole pieces each, as an even split.
    let even = pieces(6, 6, 3).unwrap();
    for t in 0..3 {
        assert_eq!(rows(on_rank(&even, "k", t)), (t * 2, 2));
    }
}

#[test]
fn each_fused_check_on_its_own() {
    let base = "vllm-llama.json";
    let edit_fused = |edit: fn(&mut serde_json::Value)| with(base, |v| edit(&mut v["fused"][1]));
    let cases: Vec<(&str, String, Tensors)> = vec![
        (
            "another placeholder",
            edit_fused(|f| f["into"] = "model.layers.{layer}.{block}.gate_up".into()),
            llama(1),
        ),
        (
            "one member without stack",
            edit_fused(|f| {
                f["members"] = serde_json::json!(["model.layers.{layer}.mlp.gate_proj.weight"]);
            }),
            llama(1),
        ),
        (
            "a placeholder into lacks",
            edit_fused(|f| f["into"] = "model.mlp.gate_up_proj.weight".into()),
            llama(1),
        ),
        (
            "a stack naming {expert} in into",
            edit_fused(|f| {
                f["stack"] = "expert".into();
                f["into"] = "model.layers.{layer}.experts.{expert}.w13".into();
            }),
            llama(1),
        ),
        (
            "a stack member without {expert}",
            edit_fused(|f| f["stack"] = "expert".into()),
            llama(1),
        ),
        (
            "a tensor in two entries",
            with(base, |v| {
                let again = v["fused"][1].clone();
                v["fused"].as_array_mut().unwrap().push(again);
            }),
            llama(1),
        ),
        (
            "a member missing",
            with(base, |_| {}),
            llama(1)
                .into_iter()
                .filter(|t| !t.0.ends_with("0.mlp.up_proj.weight"))
                .collect(),
        ),
        (
            "members of two dtypes",
            with(base, |_| {}),
            llama(1)
                .into_iter()
                .map(|mut t| {
                    if t.0.ends_with("up_proj.weight") {
                        t.1 = "F32";
                    }
                    t
                })
                .collect(),
        ),
        (
            "a dim out of range",
            edit_fused(|f| f["dim"] = 2.into()),
            llama(1),
        ),
        (
            "members not one contiguous run",
            edit_fused(|f| f["dim"] = 1.into()),
            llama(1),
        ),
    ];
    for (what, rules, tensors) in cases {
        let (code, pointer) = rejected(&rules, &tensors, &options(1));
        let expected_pointer = if what == "a tensor in two entries" {
            "/fused/2"
        } else {
            "/fused/1"
        };
        assert_eq!(
            (code.as_str(), pointer.as_deref()),
            ("adapt_fused_invalid", Some(expected_pointer)),
            "{what}"
        );
    }
}

#[test]
fn without_fused_entries_nothing_moves() {
    // The preset without its fused entries is the same placement minus the aliases.
    let plain_rules = with("vllm-llama.json", |v| v["fused"] = serde_json::json!([]));
    let checkpoint = checkpoint("plain", &llama(1));
    let rules = Rules::from_json(&plain_rules, &Options::default()).unwrap();
    let plain = adapt::adapt(&checkpoint, &rules, &options(2)).unwrap();
    let fused = adapted("vllm-llama.json", &llama(1), &options(2)).unwrap();
    assert!(plain.fusion.is_empty());
    let boxes = |p: &Placement| -> Vec<_> {
        p.fragments()
            .iter()
            .map(|f| {
                (
                    f.tensor_id.clone(),
                    f.rank.tp,
                    f.global_offset.clone(),
                    f.local_shape.clone(),
                )
            })
            .collect()
    };
    assert_eq!(boxes(&plain.placement), boxes(&fused.placement));
    assert!(plain
        .placement
        .fragments()
        .iter()
        .all(|f| f.aliases.is_empty()));
    assert!(fused
        .placement
        .fragments()
        .iter()
        .any(|f| !f.aliases.is_empty()));
}

#[test]
fn members_on_two_pipeline_stages_are_refused() {
    let rules = with("vllm-llama.json", |v| {
        v["fused"] = serde_json::json!([{"into": "ends", "dim": 0, "members": ["model.embed_tokens.weight", "lm_head.weight"]}]);
    });
    let two_stages = AdaptOptions::new(
        "synthetic",
        "r1",
        Grid {
            dp: 1,
            pp: 2,
            tp: 1,
            ep: 1,
        },
    )
    .with_dim("heads", 4)
    .with_dim("kv_heads", 2);
    assert_eq!(
        rejected(&rules, &llama(2), &two_stages),
        ("adapt_fused_invalid".into(), Some("/fused/0".into()))
    );
    // On one stage the same entry is a buffer.
    let one = AdaptOptions::new("synthetic", "r1", grid(1))
        .with_dim("heads", 4)
        .with_dim("kv_heads", 2);
    let checkpoint = checkpoint("ends", &llama(1));
    let compiled = Rules::from_json(&rules, &Options::default()).unwrap();
    assert!(!adapt::adapt(&checkpoint, &compiled, &one)
        .unwrap()
        .fusion
        .is_empty());
}

/// vLLM's vocabulary split (`VocabParallelEmbedding`, `ParallelLMHead`): the vocabulary V
/// padded to P, the next multiple of 64 rows, rank r of n holding rows
/// [r·P/n, min((r+1)·P/n, V)) of the checkpoint's tensor (the rest of its slice is padding).
fn vocab_rows(vocab: u64, tp: u64, rank: u64) -> (u64, u64) {
    let padded = vocab.div_ceil(64) * 64;
    let per = padded / tp;
    let start = rank * per;
    (start, ((rank + 1) * per).min(vocab) - start)
}

#[test]
fn a_vocabulary_vllm_pads_is_split_as_vllm_pads_it() {
    for (vocab, tp) in [(VOCAB - 2, 2), (VOCAB + 5, 2), (VOCAB - 2, 4), (VOCAB, 2)] {
        let mut tensors = llama(1);
        for t in &mut tensors {
            if t.0 == "model.embed_tokens.weight" || t.0 == "lm_head.weight" {
                t.2[0] = vocab;
            }
        }
        let laid = adapted("vllm-llama.json", &tensors, &options(tp)).unwrap();
        for name in ["model.embed_tokens.weight", "lm_head.weight"] {
            for t in 0..tp {
                assert_eq!(
                    rows(on_rank(&laid.placement, name, t)),
                    vocab_rows(vocab, tp, t),
                    "{name} {vocab} tp{t}"
                );
            }
        }
    }
    // A rank that would hold padding only: refused, naming the rule's pad_to.
    let mut tensors = llama(1);
    for t in &mut tensors {
        if t.0 == "model.embed_tokens.weight" {
            t.2[0] = 65;
        }
    }
    let rules = preset("vllm-llama.json");
    assert_eq!(
        rejected(&rules, &tensors, &options(4).with_dim("heads", 4)),
        (
            "adapt_uneven_split".into(),
            Some("/rules/0/action/split/pad_to".into())
        )
    );
}
