//! Building placements in tests: tensors and fragments as plain values, turned into a
//! validated [`Placement`] through the JSON parser.

use serde_json::json;
use weight_manifest::Options;
use weight_manifest::Placement;

/// A tensor of a test placement.
#[derive(Clone, Debug)]
pub struct TensorSpec {
    pub id: String,
    pub shape: Vec<u64>,
    pub itemsize: u64,
    pub layer: Option<u64>,
    pub expert: Option<u64>,
}

/// A fragment of a test placement; the rank is (dp, tp, pp, ep).
#[derive(Clone, Debug)]
pub struct FragmentSpec {
    pub id: String,
    pub tensor: String,
    pub offset: Vec<u64>,
    pub extent: Vec<u64>,
    pub rank: (u64, u64, u64, u64),
}

/// The axes on which some fragment of `tensor` does not span the whole tensor.
fn split_axes(tensor: &TensorSpec, fragments: &[FragmentSpec]) -> Vec<u64> {
    (0..tensor.shape.len())
        .filter(|&k| {
            fragments
                .iter()
                .filter(|f| f.tensor == tensor.id)
                .any(|f| f.offset[k] != 0 || f.extent[k] != tensor.shape[k])
        })
        .map(|k| k as u64)
        .collect()
}

/// The placement JSON text: shard_dims are the axes the fragments split.
pub fn placement_json(tensors: &[TensorSpec], fragments: &[FragmentSpec]) -> String {
    let tensors: Vec<serde_json::Value> = tensors
        .iter()
        .map(|t| {
            json!({
                "dtype": format!("u{}", t.itemsize * 8),
                "expert_id": t.expert,
                "global_shape": t.shape,
                "itemsize": t.itemsize,
                "layer_id": t.layer,
                "layout_fingerprint": "test:v1",
                "partition_dim": null,
                "shard_dims": split_axes(t, fragments),
                "tensor_id": t.id,
            })
        })
        .collect();
    let itemsize = |id: &str| {
        tensors
            .iter()
            .find(|t| t["tensor_id"] == id)
            .map_or(1, |t| t["itemsize"].as_u64().unwrap())
    };
    let fragments: Vec<serde_json::Value> = fragments
        .iter()
        .map(|f| {
            let (dp, tp, pp, ep) = f.rank;
            json!({
                "aliases": [],
                "global_offset": f.offset,
                "local_shape": f.extent,
                "nbytes": f.extent.iter().product::<u64>() * itemsize(&f.tensor),
                "placement_fragment_id": f.id,
                "rank": { "dp": dp, "ep": ep, "pp": pp, "tp": tp },
                "tensor_id": f.tensor,
            })
        })
        .collect();
    json!({
        "fragments": fragments,
        "model_id": "test-model",
        "placement_id": null,
        "revision": "r1",
        "tensors": tensors,
    })
    .to_string()
}

/// The validated placement.
pub fn placement(tensors: &[TensorSpec], fragments: &[FragmentSpec]) -> Placement {
    let text = placement_json(tensors, fragments);
    Placement::from_json(&text, &Options::default()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A tensor with no layer or expert id.
pub fn tensor(id: &str, shape: &[u64], itemsize: u64) -> TensorSpec {
    TensorSpec {
        id: id.to_owned(),
        shape: shape.to_vec(),
        itemsize,
        layer: None,
        expert: None,
    }
}

/// A fragment.
pub fn fragment(
    id: &str,
    tensor: &str,
    offset: &[u64],
    extent: &[u64],
    rank: (u64, u64, u64, u64),
) -> FragmentSpec {
    FragmentSpec {
        id: id.to_owned(),
        tensor: tensor.to_owned(),
        offset: offset.to_vec(),
        extent: extent.to_vec(),
        rank,
    }
}

/// The fragments of an even split of `shape` into `parts` along `axis`, on ranks
/// `rank(i)`.
pub fn even_split(
    prefix: &str,
    tensor: &TensorSpec,
    axis: usize,
    parts: u64,
    rank: impl Fn(u64) -> (u64, u64, u64, u64),
) -> Vec<FragmentSpec> {
    let step = tensor.shape[axis] / parts;
    (0..parts)
        .map(|i| {
            let mut offset = vec![0; tensor.shape.len()];
            let mut extent = tensor.shape.clone();
            offset[axis] = i * step;
            extent[axis] = step;
            fragment(
                &format!("{prefix}{}/{i}", tensor.id),
                &tensor.id,
                &offset,
                &extent,
                rank(i),
            )
        })
        .collect()
}

/// The placement of `tensor` alone, split evenly into `parts` along `axis` over TP ranks
/// 0..parts of DP 0.
pub fn tp_split(prefix: &str, tensor: &TensorSpec, axis: usize, parts: u64) -> Placement {
    placement(
        std::slice::from_ref(tensor),
        &even_split(prefix, tensor, axis, parts, |i| (0, i, 0, 0)),
    )
}
