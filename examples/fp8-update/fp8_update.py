"""A bfloat16 trainer updating block-FP8 targets (contract §17.8), every byte verified.

For each layout (TP row and column splits, EP, uneven shards, boxes smaller than a block):
the planner gets the two placements and the quantization spec; the plan is bound to the live
buffers of two Transfer Engine processes and pushed by the executor (``executed.py``): the
source quantizes the blocks its copies read, in its registered staging, and writes them into
the target's memory. Then:

- ``bytes_equal_reference``: every target fragment's FP8 bytes and scales equal vLLM's own
  ``per_block_cast_to_fp8`` on the gathered bfloat16 tensor;
- ``verified``: the content digests the source computed from what it quantized equal the
  digests the target computed from what landed;
- a delta (in process): a few bfloat16 elements change; the sources find the
  ``delta_blocks`` of ``full_blocks`` blocks whose FP8 bytes or scale differ from what they
  quantized before (the reference's differences name the same blocks), only those move, and
  the target then equals the new reference.

Then an engine (``engine.py``): vLLM in this process serving a block-FP8 checkpoint, updated
in flight through the same path and its layer-wise reload; its greedy tokens equal the same
vLLM loading the reference-quantized checkpoint from disk and HF transformers on the
dequantized weights (``engine``: "vllm"; ``--no-engine``: "none").

``--backend local``: both sides in this process. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

# The engine runs in this process (engine.py): set before vLLM is first imported.
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

import torch
from vllm.utils.deep_gemm import per_block_cast_to_fp8

sys.path.insert(0, str(Path(__file__).resolve().parent))

import executed  # noqa: E402
import weight_manifest as wm
from weight_manifest.content import digests, partial_of_bytes
from weight_manifest_runtime.transfer.quantize import BLOCK, QuantizingSource, changed_blocks, copy_region, region_bytes

Box = tuple[list[int], list[int]]


def cut(shape: list[int], axis: int, edges: list[int]) -> list[Box]:
    boxes = []
    for lo, hi in zip(edges, edges[1:]):
        offset, extent = [0] * len(shape), list(shape)
        offset[axis], extent[axis] = lo, hi - lo
        boxes.append((offset, extent))
    return boxes


LAYOUTS: dict[str, tuple[list[int], list[Box], list[Box]]] = {
    "tp-rows-4-to-8": ([1024, 512], cut([1024, 512], 0, [0, 256, 512, 768, 1024]),
                       cut([1024, 512], 0, list(range(0, 1025, 128)))),
    "tp-rows-to-cols": ([768, 512], cut([768, 512], 0, [0, 384, 768]), cut([768, 512], 1, [0, 128, 256, 384, 512])),
    "ep-2-to-4": ([8, 256, 384], cut([8, 256, 384], 0, [0, 4, 8]), cut([8, 256, 384], 0, [0, 2, 4, 6, 8])),
    "uneven-shards": ([896, 384], cut([896, 384], 0, [0, 256, 896]), cut([896, 384], 0, [0, 640, 896])),
    "box-smaller-than-block": ([328, 200], cut([328, 200], 0, [0, 128, 328]), cut([328, 200], 1, [0, 128, 200])),
}
TID, SID = "w.weight", "w.weight_scale_inv"


def grid(shape: list[int]) -> list[int]:
    return shape[:-2] + [-(-shape[-2] // BLOCK), -(-shape[-1] // BLOCK)]


def scale_box(offset: list[int], extent: list[int]) -> Box:
    lo = offset[:-2] + [offset[-2] // BLOCK, offset[-1] // BLOCK]
    end = [o + e for o, e in zip(offset, extent)]
    hi = end[:-2] + [-(-end[-2] // BLOCK), -(-end[-1] // BLOCK)]
    return lo, [b - a for a, b in zip(lo, hi)]


def documents(shape: list[int], sources: list[Box], targets: list[Box]) -> tuple[dict[str, Any], dict[str, Any], str]:
    def tensor(tid: str, dims: list[int], dtype: str, itemsize: int) -> dict[str, Any]:
        return {"tensor_id": tid, "global_shape": dims, "dtype": dtype, "itemsize": itemsize, "partition_dim": None,
                "shard_dims": list(range(len(dims))), "layer_id": None, "expert_id": None,
                "layout_fingerprint": dtype}

    def fragment(fid: str, tid: str, box: Box, itemsize: int, rank: int) -> dict[str, Any]:
        return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": box[0], "local_shape": box[1],
                "nbytes": itemsize * int(torch.Size(box[1]).numel()),
                "rank": {"dp": 0, "tp": rank, "pp": 0, "ep": 0}, "aliases": []}

    def placement(tensors: list[dict[str, Any]], fragments: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model_id": "example/fp8", "revision": "r1", "placement_id": None, "tensors": tensors,
                "fragments": fragments}

    source = placement([tensor(TID, shape, "bfloat16", 2)],
                       [fragment(f"s{i}", TID, b, 2, i) for i, b in enumerate(sources)])
    target = placement([tensor(TID, shape, "float8_e4m3fn", 1), tensor(SID, grid(shape), "float32", 4)],
                       [fragment(f"t{i}", TID, b, 1, i) for i, b in enumerate(targets)]
                       + [fragment(f"t{i}s", SID, scale_box(*b), 4, i) for i, b in enumerate(targets)])
    spec = {"block_size": [BLOCK, BLOCK], "fmt": "e4m3", "quant_method": "fp8",
            "tensors": [{"scale_tensor_id": SID, "tensor_id": TID}]}
    return source, target, json.dumps(spec)


def take(t: torch.Tensor, box: Box) -> torch.Tensor:
    return t[tuple(slice(o, o + e) for o, e in zip(*box))]


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() == 2:
        values, scales = per_block_cast_to_fp8(x, [BLOCK, BLOCK])
        return values.view(torch.uint8), scales
    parts = [reference(x[i]) for i in range(x.shape[0])]
    return torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts])


def update(layout: tuple[list[int], list[Box], list[Box]], x: torch.Tensor,
           landed: dict[str, torch.Tensor] | None = None,
           only: set[tuple[int, ...]] | None = None) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]], int]:
    """Plans and moves; with ``only``, only the regions' parts in those blocks (a delta)
    into the given ``landed`` buffers. Returns the buffers, the sources' partials and the
    blocks quantized."""
    shape, sources, targets = layout
    source, target, spec = documents(shape, sources, targets)
    plan = json.loads(wm.plan(json.dumps(source), json.dumps(target), quantization=spec).to_json())
    staged = {f["placement_fragment_id"]: QuantizingSource(f, take(x, (f["global_offset"], f["local_shape"])).contiguous())
              for f in source["fragments"]}
    if landed is None:
        landed = {f["placement_fragment_id"]: torch.zeros(f["local_shape"],
                                                          dtype=torch.float32 if f["tensor_id"] == SID else torch.uint8)
                  for f in target["fragments"]}
    kept = {t["tensor_id"]: t for t in target["tensors"]}
    partials = []
    for region in plan["regions"]:
        box = (region["global_offset"], region["shape"])
        if only is not None:
            # A delta plan is the full plan's regions cut to the changed blocks.
            region_blocks = scale_box(*box) if region["transform"] == "fp8_e4m3_block_values" else box
            lo, ext = region_blocks
            hits = [b for b in only if all(lo[k] <= b[k] < lo[k] + ext[k] for k in range(len(b)))]
            for b in hits:
                delta_region(region, b, staged[region["source_fragment_id"]], landed[region["target_fragment_id"]],
                             target, shape)
            continue
        copy_region(region, staged[region["source_fragment_id"]], landed[region["target_fragment_id"]])
        d = kept[region["tensor_id"]]
        partials.append({"tensor_id": region["tensor_id"], "global_shape": d["global_shape"], "itemsize": d["itemsize"],
                         "global_offset": box[0], "local_shape": box[1],
                         "partial": partial_of_bytes(region_bytes(region, staged[region["source_fragment_id"]]),
                                                     region["tensor_id"], d["global_shape"], d["itemsize"], *box)})
    return landed, partials, sum(len(s.quantized) for s in staged.values())


def delta_region(region: dict[str, Any], block: tuple[int, ...], source: QuantizingSource, into: torch.Tensor,
                 target: dict[str, Any], shape: list[int]) -> None:
    """Moves one changed block of a region: the block's FP8 bytes, or its one scale."""
    lead, (bi, bj) = list(block[:-2]), block[-2:]
    frag = next(f for f in target["fragments"] if f["placement_fragment_id"] == region["target_fragment_id"])
    if region["transform"] == "fp8_e4m3_block_values":
        lo = lead + [bi * BLOCK, bj * BLOCK]
        ext = [1] * len(lead) + [min(BLOCK, shape[-2] - lo[-2]), min(BLOCK, shape[-1] - lo[-1])]
        source.ensure([g - o for g, o in zip(lo, source.fragment["global_offset"])], ext, in_blocks=False)
        src = take(source.values, ([g - o for g, o in zip(lo, source.fragment["global_offset"])], ext))
    else:
        lo, ext = list(block), [1] * len(block)
        origin = source.fragment["global_offset"][:-2] + list(source.block_origin())
        local = [g - o for g, o in zip(lo, origin)]
        source.ensure(local, ext, in_blocks=True)
        src = take(source.scales, (local, ext))
    take(into, ([g - o for g, o in zip(lo, frag["global_offset"])], ext))[...] = src


def landed_partials(landed: dict[str, torch.Tensor], target: dict[str, Any]) -> list[dict[str, Any]]:
    kept = {t["tensor_id"]: t for t in target["tensors"]}
    out = []
    for f in target["fragments"]:
        d = kept[f["tensor_id"]]
        data = landed[f["placement_fragment_id"]].reshape(-1).view(torch.uint8).numpy().tobytes()
        out.append({"tensor_id": f["tensor_id"], "global_shape": d["global_shape"], "itemsize": d["itemsize"],
                    "global_offset": f["global_offset"], "local_shape": f["local_shape"],
                    "partial": partial_of_bytes(data, f["tensor_id"], d["global_shape"], d["itemsize"],
                                                f["global_offset"], f["local_shape"])})
    return out


def equal_reference(landed: dict[str, torch.Tensor], target: dict[str, Any], ref: tuple[torch.Tensor, torch.Tensor]) -> bool:
    for f in target["fragments"]:
        want = take(ref[1] if f["tensor_id"] == SID else ref[0], (f["global_offset"], f["local_shape"]))
        if not torch.equal(landed[f["placement_fragment_id"]].view(torch.uint8), want.contiguous().view(torch.uint8)):
            return False
    return True


def quantized_by_sources(layout: tuple[list[int], list[Box], list[Box]], x: torch.Tensor,
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """The whole tensor as the sources quantize it (each its own fragment, every block)."""
    shape, sources, _ = layout
    values = torch.zeros(shape, dtype=torch.uint8)
    scales = torch.zeros(grid(shape), dtype=torch.float32)
    for box in sources:
        source = QuantizingSource({"global_offset": box[0], "local_shape": box[1]}, take(x, box).contiguous())
        source.ensure([0] * len(shape), source.grid, in_blocks=True)
        take(values, box)[...] = source.values
        take(scales, scale_box(*box))[...] = source.scales
    return values, scales


def weights(shape: list[int], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    rows = torch.logspace(-3, 2, shape[-2]).reshape([1] * (len(shape) - 2) + [shape[-2], 1])
    return (torch.randn(shape, generator=g) * rows).to(torch.bfloat16)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("te", "local"), default="te",
                        help="the executor's transport: two Transfer Engine processes, or this process")
    parser.add_argument("--timeout", type=float, default=600.0, help="(accepted for the test harness)")
    parser.add_argument("--no-engine", action="store_true", help="skip the vLLM engine (engine: none)")
    args = parser.parse_args(argv)
    equal, verified, quantized_once = True, True, True
    tensors = [weights(layout[0], seed) for seed, layout in enumerate(LAYOUTS.values())]
    runs = executed.update_all([(*documents(*layout), {TID: x}) for layout, x in zip(LAYOUTS.values(), tensors)],
                               backend=args.backend)
    for (name, layout), x, done in zip(LAYOUTS.items(), tensors, runs):
        _, target, _ = documents(*layout)
        ref = reference(x)
        equal &= equal_reference(done["landed"], target, ref)
        verified &= digests(done["sent"]) == digests(done["held"]) == digests(landed_partials(done["landed"], target))
        quantized_once &= done["blocks"] == int(torch.Size(grid(layout[0])).numel())
        print(f"[fp8-update] {name}: bytes equal {equal}, verified {verified}, blocks {done['blocks']}",
              file=sys.stderr, flush=True)
    # A delta on the first layout: three elements change.
    layout = LAYOUTS["tp-rows-4-to-8"]
    _, target, _ = documents(*layout)
    old = weights(layout[0], 0)
    new = old.clone()
    new[5, 3] = 500.0
    new[700, 300] = -new[700, 300]
    new[1000, 511] = new[1000, 511] * 2
    landed, _, _ = update(layout, old)
    old_ref, new_ref = reference(old), reference(new)
    # The sources know what they sent before and what they quantize now; the reference
    # checks the blocks they name.
    moved = set(changed_blocks(quantized_by_sources(layout, old), quantized_by_sources(layout, new)))
    delta_matches = moved == set(changed_blocks(old_ref, new_ref))
    landed, _, _ = update(layout, new, landed, moved)
    equal &= equal_reference(landed, target, new_ref)
    full = int(torch.Size(grid(layout[0])).numel())
    served: dict[str, Any] = {"engine": "none"}
    if not args.no_engine:
        import engine

        with tempfile.TemporaryDirectory() as work:
            served = engine.run(Path(work))
        print(f"[fp8-update] engine: {served}", file=sys.stderr, flush=True)
    engine_ok = served["engine"] == "none" or all(served[k] for k in (
        "engine_bytes_equal_reference", "engine_tokens_equal_disk", "engine_tokens_equal_hf", "engine_tokens_changed"))
    print(json.dumps({"layouts": len(LAYOUTS), "executor": args.backend, "bytes_equal_reference": equal,
                      "verified": verified,
                      "quantized_each_block_once": quantized_once, "delta_blocks": len(moved), "full_blocks": full,
                      "delta_blocks_equal_reference": delta_matches,
                      "delta_changed": sorted(list(b) for b in moved), **served}))
    return 0 if equal and verified and quantized_once and delta_matches and engine_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
