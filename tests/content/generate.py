#!/usr/bin/env python3
"""Writes the content-digest fixtures ``tests/content/*.json`` (contract §19) from the
plain-Python oracle (``oracle.py``, over the C reference xxHash of the PyPI package
``xxhash``). ``--check`` writes nothing and exits 1 listing every file that would change.

Each fixture is one tensor (tensor_id, global_shape, itemsize, block_elements, its
row-major bytes as hex) and fragments (global_offset, local_shape, partial, and the
``values`` of the blocks wholly inside the box: row, block, value as 32 hex digits). ``expect`` is
``{"digest": ...}`` (the partials are each box's, and combine to the digest) or
``{"error": code}`` (combining the partials as written is rejected with that code). The
Rust test ``crates/content/tests/fixtures.rs`` runs them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402

HERE = Path(__file__).resolve().parent


def data_for(name: str, size: int) -> bytes:
    """Deterministic bytes: SHA-256 in counter mode over the fixture's name."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{name}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def grid(shape: list[int], cuts: list[list[int]]) -> list[tuple[list[int], list[int]]]:
    out: list[tuple[list[int], list[int]]] = [([], [])]
    for d, axis_cuts in zip(shape, cuts):
        edges = [0, *axis_cuts, d]
        out = [(o + [a], l + [b - a]) for o, l in out for a, b in zip(edges, edges[1:])]
    return out


def accepting(name: str, description: str, tensor_id: str, shape: list[int], itemsize: int,
              block: int, cuts: list[list[int]], replicas: tuple[int, ...] = ()) -> dict[str, Any]:
    size = itemsize
    for d in shape:
        size *= d
    data = data_for(name, size)
    fragments = []
    for offset, local in grid(shape, cuts):
        piece = oracle.cut(shape, itemsize, data, offset, local)
        values = oracle.block_values(tensor_id, shape, itemsize, block, offset, local, piece)
        fragments.append({
            "global_offset": offset,
            "local_shape": local,
            "partial": oracle.partial(tensor_id, shape, itemsize, block, offset, local, piece),
            "values": [{"block": j, "row": r, "value": f"{v:032x}"} for r, j, v in values],
        })
    for index in replicas:
        fragments.append(copy.deepcopy(fragments[index]))
    return {
        "name": name,
        "description": description,
        "tensor_id": tensor_id,
        "global_shape": shape,
        "itemsize": itemsize,
        "block_elements": block,
        "data": data.hex(),
        "fragments": fragments,
        "expect": {"digest": oracle.digest(tensor_id, shape, itemsize, block, data)},
    }


def rejecting(base: dict[str, Any], name: str, description: str, code: str, edit: Any) -> dict[str, Any]:
    case = copy.deepcopy(base)
    case["name"] = name
    case["description"] = description
    edit(case["fragments"])
    case["expect"] = {"error": code}
    return case


def cases() -> list[dict[str, Any]]:
    tp_cols = accepting("tp-columns-cut-inside-blocks",
                        "A [4, 10] float32 tensor split on columns at 3 and 7 with B = 4: every row's blocks 0 and 1 are cut, so the partials carry edges.",
                        "layers.0.mlp.down_proj.weight", [4, 10], 4, 4, [[], [3, 7]])
    grid3 = accepting("grid-3d-uneven",
                      "A [3, 4, 9] uint16 tensor cut on all three axes, offsets not multiples of B = 2, with a replica of two boxes (counted once).",
                      "model.embed", [3, 4, 9], 2, 2, [[1], [3], [4, 5]], replicas=(0, 3))
    out = [
        tp_cols,
        grid3,
        accepting("whole-tensor", "One fragment holding the whole tensor: no edges; the partial's sum is the digest.",
                  "w", [3, 5], 1, 2, [[], []]),
        accepting("one-dimensional", "A 1-D int8 tensor (R = 1) cut at 1, 2 and 11 with B = 5.",
                  "bias", [17], 1, 5, [[1, 2, 11]]),
        accepting("block-wider-than-row", "B = 100 above the row length 9: one short block per row, cut at column 4.",
                  "norm.weight", [2, 9], 8, 100, [[1], [4]]),
        accepting("rows-only", "Cuts on the outer axis only (PP- or TP-by-rows): whole rows, no edges.",
                  "lm_head.weight", [6, 8], 2, 4, [[2, 5], []]),
        accepting("unicode-tensor-id", "A tensor_id outside ASCII: the key hashes its UTF-8 bytes.",
                  "层.0.权重", [2, 6], 1, 4, [[], [5]]),
        accepting("ep-experts-4d", "A [4, 2, 3, 10] bfloat16 expert stack split on the expert axis (EP) and on columns at 6 with B = 4.",
                  "layers.3.mlp.experts.w13", [4, 2, 3, 10], 2, 4, [[2], [], [], [6]]),
        accepting("block-of-one", "B = 1: every element is its own block, so no box has edges.",
                  "scale", [3, 4], 4, 1, [[1], [1, 3]]),
        accepting("row-cut-at-block-end", "Columns cut at 8 and 16 with B = 8, exactly on block boundaries, the last block short (n = 19).",
                  "lm_head.bias", [2, 19], 8, 8, [[], [8, 16]]),
    ]
    out += [
        rejecting(tp_cols, "gap", "The last fragment is missing: the distinct boxes hold 28 of 40 elements.",
                  "content_partition_invalid", lambda f: f.pop()),
        rejecting(tp_cols, "overlap", "The second box is widened by one column into the first.",
                  "content_partition_invalid",
                  lambda f: (f[1]["global_offset"].__setitem__(1, 2), f[1]["local_shape"].__setitem__(1, 5))),
        rejecting(tp_cols, "missing-edge", "One edge piece dropped: its block's pieces leave a gap.",
                  "content_partition_invalid", lambda f: f[0]["partial"]["edges"].pop(0)),
        rejecting(tp_cols, "edge-outside-box", "An edge's start moved outside its fragment's columns.",
                  "content_partition_invalid", lambda f: f[0]["partial"]["edges"][0].__setitem__("start", 4)),
        rejecting(grid3, "replica-mismatch", "A replica whose sum differs from the box's other copy.",
                  "content_replica_mismatch",
                  lambda f: f[-1]["partial"].__setitem__("sum", "0" * 32)),
    ]
    return out


LANDING = HERE.parents[1] / "examples" / "content-landing"


def landing_example() -> dict[Path, bytes]:
    """examples/content-landing/: the content manifest of a small TP2 layer (a bfloat16 QKV
    projection split on columns at 5, cutting a block of B = 4, and a replicated norm), and
    what TP rank 1 received: its two fragments' bytes in one file (``landed.bin``, at the
    offsets of ``landing.txt``) and the same with one bit flipped (``landed-torn.bin``), for
    the C++ example ``verify_landed`` (bindings/cpp/examples/consumer)."""
    block = 4
    tensors = [("layers.0.attn.qkv_proj.weight", [6, 10], [[], [5]]), ("layers.0.input_layernorm.weight", [10], [[]])]
    entries, fragments, landed, landing = [], [], b"", []
    for tensor_id, shape, cuts in sorted(tensors):
        data = data_for(f"landing:{tensor_id}", 2 * shape[0] * (shape[1] if len(shape) > 1 else 1))
        entries.append({"tensor_id": tensor_id, "global_shape": shape, "dtype": "bfloat16", "itemsize": 2,
                        "digest": oracle.digest(tensor_id, shape, 2, block, data)})
        boxes = grid(shape, cuts)
        for tp in (0, 1):
            offset, local = boxes[tp] if len(boxes) > 1 else boxes[0]
            piece = oracle.cut(shape, 2, data, offset, local)
            fragment_id = f"{tensor_id}/tp{tp}"
            fragments.append({"placement_fragment_id": fragment_id, "tensor_id": tensor_id,
                              "rank": {"dp": 0, "ep": 0, "pp": 0, "tp": tp}, "global_offset": offset,
                              "local_shape": local,
                              "partial": oracle.partial(tensor_id, shape, 2, block, offset, local, piece)})
            if tp == 1:
                landing.append(f"{fragment_id} {len(landed)}")
                landed += piece
    fragments.sort(key=lambda f: f["placement_fragment_id"].encode())
    manifest = {"algorithm": "xxh3-block-sum-v1", "block_elements": block, "model_id": "example/landing",
                "revision": "r1", "placement_digest": None, "generation": 2, "tensors": entries,
                "fragments": fragments}
    torn = bytearray(landed)
    torn[len(landed) - 7] ^= 0x10  # one bit of the last fragment (element 6 of the norm, in its second block)
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    return {LANDING / "content-manifest.json": (canonical + "\n").encode(),
            LANDING / "landing.txt": ("\n".join(landing) + "\n").encode(),
            LANDING / "landed.bin": landed, LANDING / "landed-torn.bin": bytes(torn)}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    wanted = {}
    for path, data in landing_example().items():
        if not path.exists() or path.read_bytes() != data:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    for case in cases():
        text = json.dumps(case, indent=1, ensure_ascii=False) + "\n"
        wanted[HERE / f"{case['name']}.json"] = text
    for path, text in wanted.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    for path in HERE.glob("*.json"):
        if path not in wanted:
            stale.append(path)
            if not check:
                path.unlink()
    if check and stale:
        for path in stale:
            print(f"stale: {path.relative_to(HERE.parents[1])}")
        return 1
    if not check:
        print(f"wrote {len(stale)} of {len(wanted)} fixtures and the landing example")
    return 0


if __name__ == "__main__":
    sys.exit(main())
