//! Generated benchmark workloads (not part of the contract): realistic placements and
//! runtime inventories of frontier-scale MoE deployments, written as Python's
//! `json.dumps(..., sort_keys=True)` would write them (`", "` and `": "` separators, one
//! line). Used by `cargo bench`, `scripts/bench.sh` and the hidden `bench-data` command,
//! so no large data file lives in the repository.

mod layout;

use std::io::{self, Write};

use serde::{Serialize, Serializer};

pub use layout::{quantized, tensors, Model, Split, Tensor, BLOCK};

use weight_manifest::inventory::row_major_strides;
use weight_manifest::logical_fragment_id;
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};

/// The layout fingerprint every generated descriptor carries.
const FINGERPRINT: &str = "torch:contiguous:v1";
/// The revision every generated document carries.
const REVISION: &str = "main@4d1bd5c";
/// The lease generation of the generated runtime inventories.
const GENERATION: u64 = 12;

/// The canonical descriptor of a generated tensor.
fn descriptor(t: &Tensor) -> TensorDescriptor {
    let shard_dims = t.shard_dims();
    TensorDescriptor {
        dtype: t.dtype.to_owned(),
        expert_id: t.expert,
        global_shape: t.shape.clone(),
        itemsize: t.itemsize,
        layer_id: t.layer,
        layout_fingerprint: FINGERPRINT.to_owned(),
        partition_dim: match shard_dims.as_slice() {
            [only] => Some(*only),
            _ => None,
        },
        shard_dims: Some(shard_dims),
        tensor_id: t.id.clone(),
    }
}

/// The rank of TP/EP rank `g` in stage `pp` of replica `dp`: EP spans the TP group, so
/// tp = ep = g.
fn rank(dp: u64, pp: u64, g: u64) -> ParallelRank {
    ParallelRank {
        dp,
        ep: g,
        pp,
        tp: g,
    }
}

/// The number of fragments of `model` (one per rank that holds a box of a tensor).
pub fn fragment_count(model: &Model) -> usize {
    let per_replica: usize = tensors(model)
        .iter()
        .map(|t| {
            (0..model.tp)
                .filter(|&g| t.box_on(g, model.tp).is_some())
                .count()
        })
        .sum();
    per_replica * usize::try_from(model.dp).unwrap_or(usize::MAX)
}

/// Every fragment of `model`, in deployment order (replica, tensor, rank), with its
/// generated `logical:` id.
fn fragments(model: &Model, tensors: &[Tensor]) -> Vec<PlacementFragment> {
    let mut out = Vec::new();
    for dp in 0..model.dp {
        for t in tensors {
            for g in 0..model.tp {
                let Some((global_offset, local_shape)) = t.box_on(g, model.tp) else {
                    continue;
                };
                let nbytes = local_shape.iter().product::<u64>() * t.itemsize;
                let rank = rank(dp, t.stage, g);
                let mut fragment = PlacementFragment {
                    aliases: Vec::new(),
                    global_offset,
                    local_shape,
                    nbytes,
                    placement_fragment_id: String::new(),
                    rank,
                    tensor_id: t.id.clone(),
                };
                fragment.placement_fragment_id = logical_fragment_id(&fragment);
                out.push(fragment);
            }
        }
    }
    out
}

/// The canonical placement manifest of `model`: sorted, with its placement_id.
///
/// # Panics
/// If the generated placement is invalid (a bug in the generator).
pub fn placement(model: &Model) -> PlacementManifest {
    let layout = tensors(model);
    let mut fragments = fragments(model, &layout);
    fragments.sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
    let mut descriptors: Vec<TensorDescriptor> = layout.iter().map(descriptor).collect();
    descriptors.sort_by(|a, b| a.tensor_id.cmp(&b.tensor_id));
    let mut manifest = PlacementManifest {
        fragments,
        model_id: model.model_id.clone(),
        placement_id: None,
        revision: REVISION.to_owned(),
        tensors: descriptors,
    };
    // The generator's layouts are valid by construction; validating also gives the id.
    let placement = weight_manifest::Placement::from_wire(&manifest)
        .expect("bench-data generates valid placements");
    manifest.placement_id = Some(placement.placement_id().to_owned());
    manifest
}

/// Writes the placement of `model` (see the module documentation for the layout).
pub fn write_placement(model: &Model, out: &mut dyn Write) -> io::Result<()> {
    write_python_style(&placement(model), out)
}

/// One runtime inventory record (contract §10.3), members in a framework's natural order.
#[derive(Serialize)]
struct Record<'a> {
    fragment_id: String,
    tensor_id: &'a str,
    global_shape: &'a [u64],
    global_offset: Vec<u64>,
    local_shape: &'a [u64],
    dtype: &'a str,
    itemsize: u64,
    partition_dim: Option<u64>,
    shard_dims: Vec<u64>,
    layer_id: Option<u64>,
    expert_id: Option<u64>,
    layout_fingerprint: &'a str,
    address: u64,
    nbytes: u64,
    worker_id: &'a str,
    endpoint: &'a str,
    device: &'a str,
    rank: ParallelRank,
    lease_generation: u64,
    aliases: [&'a str; 0],
    is_contiguous: bool,
    stride: Vec<u64>,
    storage_offset: u64,
    byte_offset: u64,
}

/// The records of every GPU, each GPU's fragments packed from one base address.
struct Records<'a> {
    model: &'a Model,
    tensors: &'a [Tensor],
}

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let model = self.model;
        let mut seq = serializer.serialize_seq(None)?;
        let mut gpu = 0u64;
        for dp in 0..model.dp {
            for pp in 0..model.pp {
                for g in 0..model.tp {
                    let worker = format!("worker-{gpu}");
                    let endpoint = format!("10.{dp}.{pp}.{}:17000", g + 1);
                    let device = format!("cuda:{g}");
                    let mut address = 0x7f00_0000_0000 + (gpu << 36);
                    for t in self.tensors.iter().filter(|t| t.stage == pp) {
                        let Some((global_offset, local_shape)) = t.box_on(g, model.tp) else {
                            continue;
                        };
                        let stride = row_major_strides(&local_shape)
                            .ok_or_else(|| serde::ser::Error::custom("a stride overflows"))?;
                        let nbytes = local_shape.iter().product::<u64>() * t.itemsize;
                        let d = descriptor(t);
                        seq.serialize_element(&Record {
                            fragment_id: format!("{worker}/{}", t.id),
                            tensor_id: &t.id,
                            global_shape: &t.shape,
                            global_offset,
                            local_shape: &local_shape,
                            dtype: t.dtype,
                            itemsize: t.itemsize,
                            partition_dim: d.partition_dim,
                            shard_dims: d.shard_dims.unwrap_or_default(),
                            layer_id: t.layer,
                            expert_id: t.expert,
                            layout_fingerprint: FINGERPRINT,
                            address,
                            nbytes,
                            worker_id: &worker,
                            endpoint: &endpoint,
                            device: &device,
                            rank: rank(dp, pp, g),
                            lease_generation: GENERATION,
                            aliases: [],
                            is_contiguous: true,
                            stride,
                            storage_offset: 0,
                            byte_offset: 0,
                        })?;
                        address += nbytes.next_multiple_of(512);
                    }
                    gpu += 1;
                }
            }
        }
        seq.end()
    }
}

/// The top level of a runtime inventory.
#[derive(Serialize)]
struct RuntimeInventory<'a> {
    model_id: &'a str,
    revision: &'a str,
    instance_id: &'a str,
    placement_id: Option<&'a str>,
    generation: u64,
    lease_id: &'a str,
    tensors: Records<'a>,
}

/// Writes the runtime inventory of `model` (§10.3): one record per fragment, GPU by GPU,
/// addresses packed per device. Streams: memory does not grow with the model.
pub fn write_runtime_inventory(model: &Model, out: &mut dyn Write) -> io::Result<()> {
    let layout = tensors(model);
    let document = RuntimeInventory {
        model_id: &model.model_id,
        revision: REVISION,
        instance_id: "rollout-instance-7",
        placement_id: None,
        generation: GENERATION,
        lease_id: "lease-rollout-7-12",
        tensors: Records {
            model,
            tensors: &layout,
        },
    };
    write_python_style(&document, out)
}

/// The quantization spec (contract §17.8) of `model`'s block-FP8 tensors: what a planner
/// needs to move them from a bfloat16 copy of the same layout (empty `tensors` unless
/// `block_fp8`).
#[derive(Serialize)]
struct QuantizationSpec {
    block_size: [u64; 2],
    fmt: &'static str,
    quant_method: &'static str,
    tensors: Vec<QuantizedTensor>,
}

#[derive(Serialize)]
struct QuantizedTensor {
    scale_tensor_id: String,
    tensor_id: String,
}

/// Writes the quantization spec of `model` (see [`quantized`]).
pub fn write_quantization(model: &Model, out: &mut dyn Write) -> io::Result<()> {
    let spec = QuantizationSpec {
        block_size: [BLOCK, BLOCK],
        fmt: "e4m3",
        quant_method: "fp8",
        tensors: quantized(model)
            .into_iter()
            .map(|(tensor_id, scale_tensor_id)| QuantizedTensor {
                scale_tensor_id,
                tensor_id,
            })
            .collect(),
    };
    write_python_style(&spec, out)
}

/// Python's default `json.dumps` spacing: `", "` between items, `": "` after keys.
struct PythonStyle;

impl serde_json::ser::Formatter for PythonStyle {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

fn write_python_style<T: Serialize>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    let mut writer = io::BufWriter::with_capacity(1 << 20, out);
    let mut serializer = serde_json::Serializer::with_formatter(&mut writer, PythonStyle);
    value.serialize(&mut serializer).map_err(io::Error::other)?;
    writer.write_all(b"\n")?;
    writer.flush()
}

#[cfg(test)]
mod tests;
