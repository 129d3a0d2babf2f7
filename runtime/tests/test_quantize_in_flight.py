"""Quantizing in flight (contract §17.8): the FP8 bytes and scales that land equal vLLM's own
``per_block_cast_to_fp8`` on the gathered bfloat16 tensor, for every box of every layout;
each source quantizes exactly the blocks the target boxes hold; the content digests the
sources compute from what they quantized are the target's; a delta moves the changed blocks."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pytest
import torch

from conftest import ROOT, verified_example
from vllm.utils.deep_gemm import per_block_cast_to_fp8

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest.content import digests, partial_of_bytes
from weight_manifest_runtime.transfer.quantize import (BLOCK, QuantizingSource, changed_blocks, copy_region,
                                               region_bytes)

MODEL = "example/fp8"


def blocks(shape: list[int]) -> list[int]:
    return shape[:-2] + [-(-shape[-2] // BLOCK), -(-shape[-1] // BLOCK)]


def descriptor(tid: str, shape: list[int], dtype: str, itemsize: int) -> dict[str, Any]:
    return {"tensor_id": tid, "global_shape": shape, "dtype": dtype, "itemsize": itemsize, "partition_dim": None,
            "shard_dims": list(range(len(shape))), "layer_id": None, "expert_id": None,
            "layout_fingerprint": f"{dtype}:row-major"}


def fragment(fid: str, tid: str, offset: list[int], extent: list[int], itemsize: int, tp: int) -> dict[str, Any]:
    n = itemsize
    for e in extent:
        n *= e
    return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": offset, "local_shape": extent,
            "nbytes": n, "rank": {"dp": 0, "tp": tp, "pp": 0, "ep": 0}, "aliases": []}


def scale_box(offset: list[int], extent: list[int]) -> tuple[list[int], list[int]]:
    lo = offset[:-2] + [offset[-2] // BLOCK, offset[-1] // BLOCK]
    ends = [o + e for o, e in zip(offset, extent)]
    hi = ends[:-2] + [-(-ends[-2] // BLOCK), -(-ends[-1] // BLOCK)]
    return lo, [b - a for a, b in zip(lo, hi)]


def cut(shape: list[int], axis: int, edges: list[int]) -> list[tuple[list[int], list[int]]]:
    out = []
    for lo, hi in zip(edges, edges[1:]):
        offset, extent = [0] * len(shape), list(shape)
        offset[axis], extent[axis] = lo, hi - lo
        out.append((offset, extent))
    return out


# name: {tensor: (shape, source boxes, target boxes)}
LAYOUTS: dict[str, dict[str, tuple[list[int], Any, Any]]] = {
    "tp-rows-2-to-4": {"w.weight": ([512, 256], cut([512, 256], 0, [0, 256, 512]),
                                    cut([512, 256], 0, [0, 128, 256, 384, 512]))},
    "tp-rows-to-cols": {"w.weight": ([512, 256], cut([512, 256], 0, [0, 256, 512]), cut([512, 256], 1, [0, 128, 256]))},
    "ep-2-to-4": {"experts.weight": ([4, 256, 384], cut([4, 256, 384], 0, [0, 2, 4]),
                                     cut([4, 256, 384], 0, [0, 1, 2, 3, 4]))},
    "uneven-shards": {"w.weight": ([640, 384], cut([640, 384], 0, [0, 256, 640]), cut([640, 384], 0, [0, 384, 640]))},
    "box-smaller-than-block": {
        "w.weight": ([200, 72], cut([200, 72], 0, [0, 128, 200]), cut([200, 72], 0, [0, 128, 200])),
        "v.weight": ([64, 96], cut([64, 96], 0, [0, 64]), cut([64, 96], 0, [0, 64])),
    },
    "ragged-rows-to-cols": {"w.weight": ([300, 260], cut([300, 260], 0, [0, 256, 300]),
                                         cut([300, 260], 1, [0, 128, 260]))},
}


def placements(layout: dict[str, tuple[list[int], Any, Any]]) -> tuple[dict[str, Any], dict[str, Any], str]:
    src_t, src_f, tgt_t, tgt_f, pairs = [], [], [], [], []
    for tid in sorted(layout):
        shape, sources, targets = layout[tid]
        sid = tid.replace(".weight", ".weight_scale_inv")
        src_t.append(descriptor(tid, shape, "bfloat16", 2))
        tgt_t += [descriptor(tid, shape, "float8_e4m3fn", 1), descriptor(sid, blocks(shape), "float32", 4)]
        src_f += [fragment(f"{tid}/s{i}", tid, o, e, 2, i) for i, (o, e) in enumerate(sources)]
        tgt_f += [fragment(f"{tid}/t{i}", tid, o, e, 1, i) for i, (o, e) in enumerate(targets)]
        tgt_f += [fragment(f"{sid}/t{i}", sid, *scale_box(o, e), 4, i) for i, (o, e) in enumerate(targets)]
        pairs.append({"scale_tensor_id": sid, "tensor_id": tid})
    doc = lambda t, f: {"model_id": MODEL, "revision": "r1", "placement_id": None, "tensors": t, "fragments": f}  # noqa: E731
    spec = {"block_size": [128, 128], "fmt": "e4m3", "quant_method": "fp8", "tensors": pairs}
    return doc(src_t, src_f), doc(tgt_t, tgt_f), json.dumps(spec)


def weights(shape: list[int], seed: int) -> torch.Tensor:
    """bfloat16 values whose magnitude differs from block to block, one block all zeros."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    rows = torch.logspace(-3, 2, shape[-2]).reshape([1] * (len(shape) - 2) + [shape[-2], 1])
    x = x * rows
    x[..., :min(BLOCK, shape[-2]), BLOCK:2 * BLOCK] = 0.0
    return x.to(torch.bfloat16)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM's quantization of the gathered tensor (per leading index for stacked experts)."""
    if x.dim() == 2:
        values, scales = per_block_cast_to_fp8(x, [BLOCK, BLOCK])
        return values.view(torch.uint8), scales
    parts = [reference(x[i]) for i in range(x.shape[0])]
    return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])


def box(t: torch.Tensor, offset: list[int], extent: list[int]) -> torch.Tensor:
    return t[tuple(slice(o, o + e) for o, e in zip(offset, extent))]


def run_update(source: dict[str, Any], target: dict[str, Any], spec: str, tensors: dict[str, torch.Tensor],
               ) -> tuple[dict[str, Any], dict[str, QuantizingSource], dict[str, torch.Tensor]]:
    """Plans, stages and lands: the plan's regions, the sources and the target buffers."""
    planned = wm.plan(json.dumps(source), json.dumps(target), quantization=spec)
    plan = json.loads(planned.to_json())
    assert [r.transform for r in planned.regions] == [r.get("transform") for r in plan["regions"]]
    sources = {f["placement_fragment_id"]: QuantizingSource(f, box(tensors[f["tensor_id"]], f["global_offset"],
                                                                   f["local_shape"]).contiguous())
               for f in source["fragments"]}
    dtypes = {t["tensor_id"]: torch.float32 if t["itemsize"] == 4 else torch.uint8 for t in target["tensors"]}
    landed = {f["placement_fragment_id"]: torch.zeros(f["local_shape"], dtype=dtypes[f["tensor_id"]])
              for f in target["fragments"]}
    for region in plan["regions"]:
        assert region.get("transform") in ("fp8_e4m3_block_values", "fp8_e4m3_block_scales")
        copy_region(region, sources[region["source_fragment_id"]], landed[region["target_fragment_id"]])
    return plan, sources, landed


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_landed_bytes_equal_vllm_reference_and_digests_verify(name: str) -> None:
    layout = LAYOUTS[name]
    source, target, spec = placements(layout)
    tensors = {tid: weights(shape, seed) for seed, (tid, (shape, _, _)) in enumerate(sorted(layout.items()))}
    plan, sources, landed = run_update(source, target, spec, tensors)
    refs = {tid: reference(x) for tid, x in tensors.items()}
    by_id = {t["tensor_id"]: t for t in target["tensors"]}
    for f in target["fragments"]:
        tid = f["tensor_id"]
        values = tid.endswith(".weight")
        ref_values, ref_scales = refs[tid if values else tid.replace(".weight_scale_inv", ".weight")]
        want = box(ref_values if values else ref_scales, f["global_offset"], f["local_shape"])
        got = landed[f["placement_fragment_id"]]
        assert torch.equal(got.view(torch.uint8), want.contiguous().view(torch.uint8)), (name, f["placement_fragment_id"])
    # Each source quantized exactly the blocks the regions read from it, every block once.
    for fid, src in sources.items():
        read = set()
        for r in plan["regions"]:
            if r["source_fragment_id"] == fid and r["transform"] == "fp8_e4m3_block_scales":
                origin = src.fragment["global_offset"][:-2] + list(src.block_origin())
                lo = [g - o for g, o in zip(r["global_offset"], origin)]
                read |= {tuple(k) for k in torch.cartesian_prod(
                    *[torch.arange(a, a + n) for a, n in zip(lo, r["shape"])]).reshape(-1, len(lo)).tolist()}
        assert src.quantized == read, fid
    assert sum(len(s.quantized) for s in sources.values()) == sum(
        torch.Size(blocks(layout[t][0])).numel() for t in layout)
    # Digests: the sources' (of what they quantized and sent) equal the target's (of what
    # landed) and the reference's.
    sent = [{"tensor_id": r["tensor_id"], "global_shape": by_id[r["tensor_id"]]["global_shape"],
             "itemsize": by_id[r["tensor_id"]]["itemsize"], "global_offset": r["global_offset"],
             "local_shape": r["shape"],
             "partial": partial_of_bytes(region_bytes(r, sources[r["source_fragment_id"]]), r["tensor_id"],
                                         by_id[r["tensor_id"]]["global_shape"], by_id[r["tensor_id"]]["itemsize"],
                                         r["global_offset"], r["shape"])}
            for r in plan["regions"]]
    held = [{"tensor_id": f["tensor_id"], "global_shape": by_id[f["tensor_id"]]["global_shape"],
             "itemsize": by_id[f["tensor_id"]]["itemsize"], "global_offset": f["global_offset"],
             "local_shape": f["local_shape"],
             "partial": partial_of_bytes(landed[f["placement_fragment_id"]].reshape(-1).view(torch.uint8).numpy().tobytes(),
                                         f["tensor_id"], by_id[f["tensor_id"]]["global_shape"],
                                         by_id[f["tensor_id"]]["itemsize"], f["global_offset"], f["local_shape"])}
            for f in target["fragments"]]
    whole = []
    for tid, (values, scales) in refs.items():
        for t, data in ((tid, values), (tid.replace(".weight", ".weight_scale_inv"), scales)):
            d = by_id[t]
            whole.append({"tensor_id": t, "global_shape": d["global_shape"], "itemsize": d["itemsize"],
                          "global_offset": [0] * len(d["global_shape"]), "local_shape": d["global_shape"],
                          "partial": partial_of_bytes(data.contiguous().view(torch.uint8).numpy().tobytes(), t,
                                                      d["global_shape"], d["itemsize"], [0] * len(d["global_shape"]),
                                                      d["global_shape"])})
    assert digests(sent) == digests(held) == digests(whole)


def test_a_changed_element_moves_its_whole_block() -> None:
    shape = [384, 256]
    old = weights(shape, 7)
    new = old.clone()
    new[130, 5] = 1e4  # block (1, 0): a new maximum, so a new scale and new FP8 bytes
    new[300, 200] = (new[300, 200].float() * 1.001).to(torch.bfloat16)  # block (2, 1): may round to the same
    ref_old, ref_new = reference(old), reference(new)
    moved = changed_blocks(ref_old, ref_new)
    assert (1, 0) in moved
    assert set(moved) <= {(1, 0), (2, 1)}
    assert ref_old[1][1, 0] != ref_new[1][1, 0]
    # The target's old bytes, updated with only the moved blocks, equal the new quantization.
    layout = {"w.weight": (shape, cut(shape, 0, [0, 256, 384]), cut(shape, 1, [0, 128, 256]))}
    source, target, spec = placements(layout)
    _, _, before = run_update(source, target, spec, {"w.weight": old})
    _, sources_after, after = run_update(source, target, spec, {"w.weight": new})
    for f in target["fragments"]:
        fid = f["placement_fragment_id"]
        is_values = f["tensor_id"] == "w.weight"
        patched = before[fid].clone()
        for key in moved:
            if is_values:
                rows = slice(key[0] * BLOCK, (key[0] + 1) * BLOCK)
                cols = slice(key[1] * BLOCK - f["global_offset"][1], (key[1] + 1) * BLOCK - f["global_offset"][1])
                if cols.start >= 0 and cols.start < f["local_shape"][1]:
                    patched[rows, cols] = after[fid][rows, cols]
            else:
                j = key[1] - f["global_offset"][1]
                if 0 <= j < f["local_shape"][1]:
                    patched[key[0], j] = after[fid][key[0], j]
        assert torch.equal(patched.view(torch.uint8), after[fid].view(torch.uint8)), fid
    unmoved = [(i, j) for i in range(3) for j in range(2) if (i, j) not in moved]
    assert unmoved and all(torch.equal(box(ref_old[0], [i * BLOCK, j * BLOCK], [BLOCK, BLOCK]),
                                       box(ref_new[0], [i * BLOCK, j * BLOCK], [BLOCK, BLOCK])) for i, j in unmoved)
    assert sum(len(s.quantized) for s in sources_after.values()) == 6


# ---- through the executor: bound plans, Transfer Engine processes -------------------------

EXAMPLE = ROOT / "examples" / "fp8-update" / "fp8_update.py"
sys.path.insert(0, str(EXAMPLE.parent))
import executed  # noqa: E402


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_the_executor_lands_vllms_bytes_from_a_bound_plan(name: str) -> None:
    """The plan bound to live buffers and pushed by the executor (in process): the source
    quantizes in its registered forms the blocks the bound copies read, and what lands is
    vLLM's reference; the partials of what it sent and of what landed give equal digests."""
    layout = LAYOUTS[name]
    source, target, spec = placements(layout)
    tensors = {tid: weights(shape, seed) for seed, (tid, (shape, _, _)) in enumerate(sorted(layout.items()))}
    done = executed.update(source, target, spec, tensors, backend="local")
    for f in target["fragments"]:
        tid = f["tensor_id"]
        values = tid.endswith(".weight")
        ref_values, ref_scales = reference(tensors[tid if values else tid.replace(".weight_scale_inv", ".weight")])
        want = box(ref_values if values else ref_scales, f["global_offset"], f["local_shape"])
        got = done["landed"][f["placement_fragment_id"]]
        assert torch.equal(got.view(torch.uint8), want.contiguous().view(torch.uint8)), (name, f["placement_fragment_id"])
    assert done["blocks"] == sum(torch.Size(blocks(layout[t][0])).numel() for t in layout)
    assert digests(done["sent"]) == digests(done["held"])


def test_the_executor_refuses_transformed_copies_it_cannot_run() -> None:
    """Pulled (a target cannot read a form its source has not computed), without the
    source's bfloat16 tensors, or as a delta of changed byte ranges: each refused with
    plan_bind_transform_unsupported before any byte moves."""
    source, target, spec = placements(LAYOUTS["tp-rows-2-to-4"])
    x = {"w.weight": weights([512, 256], 0)}
    backend = transfer.LocalBackend()
    src, tgt = executed.Source(source, x, backend), executed.Target(target, {"w.weight_scale_inv"}, backend)
    planned = wm.plan(json.dumps(source), json.dumps(target), quantization=spec)
    bound = executed.bind(planned, source, target, (src.addresses(), "local"), (tgt.addresses(), "local"))
    sessions = {w: "local" for w in {*(p.source_worker_id for p in bound.pairs), *(p.target_worker_id for p in bound.pairs)}}
    changed = {(p.source_worker_id, "cpu"): np.array([[0, 1 << 62]], dtype=np.uint64) for p in bound.pairs}
    for options, why in [({"mode": "pull", "quantized": src.forms}, "pulled"),
                         ({"mode": "push"}, "no bfloat16 tensors"),
                         ({"mode": "push", "quantized": src.forms, "changed": changed}, "a delta")]:
        with pytest.raises(wm.ManifestError) as error:
            transfer.execute(bound, backend, sessions, **options)
        assert error.value.code == "plan_bind_transform_unsupported" and why in str(error.value)
    assert all(int(t.count_nonzero()) == 0 for t in tgt.buffers.values())


def test_make_fp8_update_pushes_through_transfer_engine_processes_into_vllm() -> None:
    """`make fp8-update`: every layout (TP rows, rows into columns, EP, uneven shards, boxes
    smaller than a block) through two Transfer Engine processes; the landed bytes equal
    vLLM's per_block_cast_to_fp8 on the gathered tensor, the digests verify, each block is
    quantized once. Then vLLM (in the example's process) serving a block-FP8 checkpoint is
    updated in flight through its layer-wise reload: the bytes it is given are the reference
    checkpoint's, its greedy tokens change and equal the same vLLM loading the reference
    checkpoint from disk, and are HF's greedy choices on the dequantized weights but at near
    ties (within 1 % of HF's top logit: vLLM quantizes the activations too)."""
    result = verified_example(EXAMPLE)
    assert result["executor"] == "te" and result["layouts"] == 5
    assert result["bytes_equal_reference"] and result["quantized_each_block_once"]
    assert result["delta_blocks_equal_reference"]
    assert result["engine"] == "vllm"
    assert result["engine_bytes_equal_reference"] and result["engine_tokens_changed"]
    assert result["engine_tokens_equal_disk"] and result["engine_tokens_equal_hf"]


def test_a_copy_reaching_past_its_sources_quantized_form_is_refused() -> None:
    """plan-bind bounds a scales copy by 2 x the bfloat16 fragment's bytes (it cannot know
    the block grid); the source knows its form exactly: a 256x256 fragment has 2 x 2 blocks,
    16 bytes of scales, so a copy ending at byte 16 is resolved and one ending at 17 is
    refused (transfer_arguments_invalid) before anything moves."""
    source, target, spec = placements(LAYOUTS["tp-rows-2-to-4"])
    backend = transfer.LocalBackend()
    src = executed.Source(source, {"w.weight": weights([512, 256], 0)}, backend)
    planned = wm.plan(json.dumps(source), json.dumps(target), quantization=spec)
    tgt = executed.Target(target, {"w.weight_scale_inv"}, backend)
    bound = executed.bind(planned, source, target, (src.addresses(), "local"), (tgt.addresses(), "local"))
    copy = next(c for p in bound.pairs for c in p.copies if c.get("transform") == "fp8_e4m3_block_scales")
    span = copy["run_bytes"] + sum((l["count"] - 1) * l["source_stride"] for l in copy["loops"])
    form = src.forms.sources[copy["source_fragment_id"]].scales
    assert form.numel() * 4 == 2 * 2 * 4
    at_end = dict(copy, source=dict(copy["source"], address=16 - span))
    assert src.forms.bases([at_end]) == [int(form.data_ptr())]
    with pytest.raises(wm.ManifestError) as error:
        src.forms.bases([dict(copy, source=dict(copy["source"], address=17 - span))])
    assert error.value.code == "transfer_arguments_invalid" and "fp8_e4m3_block_scales" in str(error.value)
