"""weight_manifest_runtime.lifecycle.blocks: a delta's check re-hashes only the blocks it wrote.

Oracles: the partials of every byte hashed again by ``weight_manifest.content.partials``
(brute force, over the whole fragments), and the bytes a check must hash counted from an
element mask of the written ranges, each row cut at its block boundaries here (not by the
module's arithmetic)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from weight_manifest import content
from weight_manifest_runtime.lifecycle import blocks

# (global shape, box offset, box shape, dtype, block elements)
GEOMETRIES = [
    ((8, 64), (0, 0), (8, 64), np.float32, 16),        # whole tensor, aligned
    ((6, 50), (2, 0), (3, 50), np.float16, 16),        # rows of a tensor, the last block short
    ((5, 70), (1, 13), (3, 40), np.float32, 16),       # a column cut off the blocks: edges
    ((3, 5, 37), (1, 2, 5), (2, 3, 20), np.float16, 8),  # 3-D: local rows not consecutive globally
    ((4, 6, 33), (0, 0, 11), (4, 6, 11), np.uint8, 4),   # outer axes whole, inner cut
    ((100,), (10,), (45,), np.float32, 8),              # 1-D
    ((9, 10), (3, 2), (1, 3), np.int64, 4),             # narrower than a block
]


def fragment(rng: np.random.Generator, spec: Any, name: str) -> tuple[np.ndarray, dict[str, Any]]:
    shape, offset, local, dtype, _ = spec
    data = rng.integers(0, 255, size=math.prod(local) * np.dtype(dtype).itemsize, dtype=np.uint8)
    tensor = data.view(dtype).reshape(local)
    record = {"tensor_id": name, "global_shape": list(shape), "global_offset": list(offset),
              "local_shape": list(local), "itemsize": np.dtype(dtype).itemsize, "address": tensor.ctypes.data}
    return tensor, record


def expected_hashed(tensor: np.ndarray, record: dict[str, Any], spans: np.ndarray, block: int) -> int:
    """The bytes of the units (whole blocks, edge pieces) of the box that the spans touch."""
    itemsize, local = int(record["itemsize"]), record["local_shape"]
    m, o = local[-1], record["global_offset"][-1]
    touched = np.zeros(tensor.nbytes, dtype=bool)
    for start, end in spans.tolist():
        a, b = max(start - tensor.ctypes.data, 0), min(end - tensor.ctypes.data, tensor.nbytes)
        if b > a:
            touched[a:b] = True
    elements = touched.reshape(-1, itemsize).any(axis=1).reshape(-1, m)
    cuts = sorted({0, m} | {j * block - o for j in range(o // block + 1, (o + m) // block + 1) if 0 < j * block - o < m})
    hashed = 0
    for row in elements:
        for a, b in zip(cuts, cuts[1:]):
            if row[a:b].any():
                hashed += (b - a) * itemsize
    return hashed


@pytest.mark.parametrize("spec", GEOMETRIES, ids=[f"{s[0]}@{s[1]}+{s[2]}" for s in GEOMETRIES])
def test_a_rehash_of_the_written_ranges_equals_a_full_hash(spec: Any) -> None:
    rng = np.random.default_rng(len(spec[0]) * 31 + spec[4])
    block = spec[4]
    tensor, record = fragment(rng, spec, "t")
    other, other_record = fragment(rng, GEOMETRIES[0], "u")  # untouched: kept as it was
    tensors, inventory = {"t": tensor, "u": other}, {"tensors": [record, other_record]}
    kept = blocks.hash_all(tensors, inventory, block, 1)
    assert kept.partials == [{**p, "block": block} for p in content.partials(tensors, inventory, block)]
    assert kept.hashed_bytes == tensor.nbytes + other.nbytes
    base = kept.kept()
    raw = tensor.reshape(-1).view(np.uint8)
    for generation in range(2, 7):
        # 1-4 random ranges (bytes), some cutting elements, written with new bytes.
        spans = []
        for _ in range(int(rng.integers(1, 5))):
            a = int(rng.integers(0, raw.size))
            b = min(raw.size, a + int(rng.integers(1, max(2, raw.size // 3))))
            raw[a:b] = rng.integers(0, 255, size=b - a, dtype=np.uint8)
            spans.append((tensor.ctypes.data + a, tensor.ctypes.data + b))
        merged = np.array(sorted(spans), dtype=np.uint64)
        check = base.rehash(tensors, merged, generation)
        assert check.partials == [{**p, "block": block} for p in content.partials(tensors, inventory, block)]
        assert check.hashed_bytes == expected_hashed(tensor, record, merged, block)
        assert check.hashed_bytes < tensor.nbytes or len(spans) > 1 or raw.size < 64
        base = check.kept()
        assert base.generation == generation


def test_a_byte_changed_outside_the_written_ranges_is_not_seen_by_a_rehash() -> None:
    """What the delta's check does not see (the full check does: test_lifecycle)."""
    rng = np.random.default_rng(5)
    tensor, record = fragment(rng, GEOMETRIES[0], "t")
    tensors, inventory = {"t": tensor}, {"tensors": [record]}
    base = blocks.hash_all(tensors, inventory, 16, 1).kept()
    tensor.reshape(-1).view(np.uint8)[-1] ^= 1  # outside the range below
    tensor.reshape(-1).view(np.uint8)[0] ^= 1
    check = base.rehash(tensors, np.array([[tensor.ctypes.data, tensor.ctypes.data + 1]], dtype=np.uint64), 2)
    assert check.hashed_bytes == 16 * 4
    assert check.partials != [{**p, "block": 16} for p in content.partials(tensors, inventory, 16)]


@pytest.mark.parametrize("spec", GEOMETRIES, ids=[f"{s[0]}@{s[1]}+{s[2]}" for s in GEOMETRIES])
def test_a_delta_that_rewrites_a_whole_fragment_hashes_it_once(spec: Any) -> None:
    rng = np.random.default_rng(11)
    tensor, record = fragment(rng, spec, "t")
    tensors, inventory, block = {"t": tensor}, {"tensors": [record]}, spec[4]
    base = blocks.hash_all(tensors, inventory, block, 1).kept()
    for generation in (2, 3):
        raw = tensor.reshape(-1).view(np.uint8)
        raw[:] = rng.integers(0, 255, size=raw.size, dtype=np.uint8)
        span = np.array([[tensor.ctypes.data, tensor.ctypes.data + tensor.nbytes]], dtype=np.uint64)
        check = base.rehash(tensors, span, generation)
        assert check.partials == [{**p, "block": block} for p in content.partials(tensors, inventory, block)]
        assert check.hashed_bytes == tensor.nbytes
        base = check.kept()
    # The values kept after two whole rewrites serve a small delta right.
    raw[0] ^= 1
    check = base.rehash(tensors, np.array([[tensor.ctypes.data, tensor.ctypes.data + 1]], dtype=np.uint64), 4)
    assert check.partials == [{**p, "block": block} for p in content.partials(tensors, inventory, block)]
