//! Shared helpers of the adapter tests: header-only safetensors files, synthetic headers,
//! the preset rule files and an independent completeness check.

#![allow(dead_code)]

pub mod synthetic;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use weight_manifest::Placement;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[path = "../../../../tests/scratch_support/mod.rs"]
mod scratch_support;
#[allow(unused_imports)] // not every test including this module makes folders
pub use scratch_support::ScratchDir;

/// The folder `wm-adapt-NAME-PID-N` (see [`ScratchDir`]).
pub fn scratch(name: &str) -> ScratchDir {
    ScratchDir::new(&format!("adapt-{name}"))
}

/// Writes a header-only safetensors file: the 8-byte little-endian length and `header`.
pub fn write_header_file(path: &Path, header: &[u8]) {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    std::fs::write(path, bytes).unwrap();
}

/// The text of a preset in `examples/rules/`.
pub fn preset(name: &str) -> String {
    std::fs::read_to_string(root().join("examples/rules").join(name)).unwrap()
}

/// Bytes per element of a safetensors dtype used by the synthetic headers.
fn itemsize(dtype: &str) -> u64 {
    match dtype {
        "F32" | "I32" => 4,
        "BF16" | "F16" => 2,
        "F8_E4M3" | "U8" => 1,
        "I64" | "F64" => 8,
        other => panic!("no itemsize for {other}"),
    }
}

/// A safetensors header JSON for `tensors` (name, dtype, shape), with contiguous offsets
/// in the given order.
pub fn header_json(tensors: &[(String, &str, Vec<u64>)]) -> String {
    let mut out = String::from("{\"__metadata__\":{\"format\":\"pt\"}");
    let mut offset = 0_u64;
    for (name, dtype, shape) in tensors {
        let bytes = shape.iter().product::<u64>() * itemsize(dtype);
        let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
        write!(
            out,
            ",\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{offset},{}]}}",
            shape.join(","),
            offset + bytes
        )
        .unwrap();
        offset += bytes;
    }
    out.push('}');
    out
}

/// Writes a sharded checkpoint: `shards` header-only files named
/// `model-0000k-of-0000n.safetensors`, tensors dealt round-robin, and the index.
pub fn write_sharded(dir: &Path, tensors: &[(String, &str, Vec<u64>)], shards: usize) {
    let names: Vec<String> = (1..=shards)
        .map(|k| format!("model-{k:05}-of-{shards:05}.safetensors"))
        .collect();
    let mut weight_map = serde_json::Map::new();
    for (k, name) in names.iter().enumerate() {
        let part: Vec<_> = tensors
            .iter()
            .enumerate()
            .filter(|(i, _)| i % shards == k)
            .map(|(_, t)| t.clone())
            .collect();
        for (tensor, _, _) in &part {
            weight_map.insert(tensor.clone(), serde_json::Value::String(name.clone()));
        }
        write_header_file(&dir.join(name), header_json(&part).as_bytes());
    }
    let index = serde_json::json!({ "metadata": { "total_size": 0 }, "weight_map": weight_map });
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        serde_json::to_string_pretty(&index).unwrap(),
    )
    .unwrap();
}

/// A box: (global_offset, local_shape).
type Extent = (Vec<u64>, Vec<u64>);

/// Checks, independently of the library, that within every data-parallel replica the
/// distinct boxes of each tensor tile it: pairwise disjoint, volumes summing to the
/// tensor's. Returns the number of (tensor, dp) pairs checked.
pub fn assert_tiles_per_replica(placement: &Placement) -> usize {
    let shapes: BTreeMap<&str, &Vec<u64>> = placement
        .tensors()
        .iter()
        .map(|t| (t.tensor_id.as_str(), &t.global_shape))
        .collect();
    let mut boxes: BTreeMap<(&str, u64), BTreeSet<Extent>> = BTreeMap::new();
    for f in placement.fragments() {
        boxes
            .entry((f.tensor_id.as_str(), f.rank.dp))
            .or_default()
            .insert((f.global_offset.clone(), f.local_shape.clone()));
    }
    let dps: BTreeSet<u64> = placement.fragments().iter().map(|f| f.rank.dp).collect();
    for tensor in shapes.keys() {
        for dp in &dps {
            assert!(
                boxes.contains_key(&(*tensor, *dp)),
                "{tensor} has no box on dp {dp}"
            );
        }
    }
    for ((tensor, dp), set) in &boxes {
        let shape = shapes[tensor];
        let volume: u128 = shape.iter().map(|&e| u128::from(e)).product();
        let list: Vec<_> = set.iter().collect();
        let sum: u128 = list
            .iter()
            .map(|(_, s)| s.iter().map(|&e| u128::from(e)).product::<u128>())
            .sum();
        assert_eq!(
            sum, volume,
            "{tensor} on dp {dp}: boxes do not sum to the tensor"
        );
        for (i, (ao, as_)) in list.iter().enumerate() {
            for (bo, bs) in &list[i + 1..] {
                let disjoint =
                    (0..shape.len()).any(|k| ao[k] + as_[k] <= bo[k] || bo[k] + bs[k] <= ao[k]);
                assert!(
                    disjoint,
                    "{tensor} on dp {dp}: boxes {ao:?} and {bo:?} overlap"
                );
            }
        }
    }
    boxes.len()
}
