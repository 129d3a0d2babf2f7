"""A source quantizing in flight (contract §17.8): block FP8 from bfloat16, in its staging.

A region of a quantized plan carries a ``transform``: its source offsets and strides address
the source fragment as quantized (``fp8_e4m3_block_values``: its local_shape, one byte per
element) or the scales of its blocks (``fp8_e4m3_block_scales``: float32, row-major over its
block grid). :class:`QuantizingSource` holds one source fragment's bfloat16 tensor and those
two staging buffers, and quantizes a block only when a region reads it, once: exactly the
blocks the target boxes hold. The arithmetic is the DeepGEMM reference's
(``vllm.utils.deep_gemm.per_block_cast_to_fp8``): scale = max(max|x|, 1e-4) / 448 in float32,
values = (x * (1 / scale)) cast to e4m3. :func:`copy_region` moves one region's runs from a
source buffer into a target buffer, as the plan states them; :func:`changed_blocks` names the
blocks a delta must move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import itertools

import torch

__all__ = ["BLOCK", "FP8_MAX", "QuantizingSource", "changed_blocks", "copy_region", "region_bytes"]

BLOCK = 128
FP8_MAX = 448.0
VALUES = "fp8_e4m3_block_values"
SCALES = "fp8_e4m3_block_scales"


class QuantizingSource:
    """One source fragment (``fragment``: its placement record) and its bfloat16 tensor
    ``local`` (its local_shape), with the FP8 values and scales of the blocks quantized so
    far. The fragment must be whole on the blocks (the planner checked it)."""

    def __init__(self, fragment: Mapping[str, Any], local: torch.Tensor) -> None:
        if local.dtype != torch.bfloat16 or list(local.shape) != list(fragment["local_shape"]):
            raise ValueError("a quantizing source needs its fragment's bfloat16 tensor")
        self.fragment = fragment
        self.local = local
        lead, rows, cols = list(local.shape[:-2]), local.shape[-2], local.shape[-1]
        self.grid = lead + [-(-rows // BLOCK), -(-cols // BLOCK)]
        self.values = torch.zeros(local.shape, dtype=torch.uint8)
        self.scales = torch.zeros(self.grid, dtype=torch.float32)
        self.quantized: set[tuple[int, ...]] = set()

    def block_origin(self) -> tuple[int, int]:
        """The fragment's first block, in the tensor's block grid (last two axes)."""
        offset = self.fragment["global_offset"]
        return offset[-2] // BLOCK, offset[-1] // BLOCK

    def ensure(self, lo: Sequence[int], shape: Sequence[int], in_blocks: bool) -> None:
        """Quantizes the blocks of the box (``lo``, ``shape``: local coordinates, of
        elements, or of blocks with ``in_blocks``) that are not yet."""
        if not in_blocks:
            first = [lo[-2] // BLOCK, lo[-1] // BLOCK]
            past = [-(-(lo[-2] + shape[-2]) // BLOCK), -(-(lo[-1] + shape[-1]) // BLOCK)]
            lo = list(lo[:-2]) + first
            shape = list(shape[:-2]) + [b - a for a, b in zip(first, past)]
        for key in itertools.product(*[range(a, a + n) for a, n in zip(lo, shape)]):
            if key not in self.quantized:
                self._quantize(key)

    def _quantize(self, key: tuple[int, ...]) -> None:
        lead, (bi, bj) = key[:-2], key[-2:]
        rows = slice(bi * BLOCK, (bi + 1) * BLOCK)
        cols = slice(bj * BLOCK, (bj + 1) * BLOCK)
        block = self.local[lead + (rows, cols)]
        amax = block.abs().float().amax().clamp(1e-4)
        scale = amax / FP8_MAX
        # float32 arithmetic, as the reference's bfloat16 x float32 product promotes.
        fp8 = (block.float() * (1.0 / scale)).to(torch.float8_e4m3fn)
        self.values[lead + (rows, cols)] = fp8.view(torch.uint8)
        self.scales[key] = scale
        self.quantized.add(key)

    def buffer(self, transform: str) -> torch.Tensor:
        """The staging buffer a region of ``transform`` reads, as flat bytes."""
        held = self.values if transform == VALUES else self.scales
        return held.reshape(-1).view(torch.uint8)


def _runs(region: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(source offset, target offset) of every run of a region, outermost loop slowest:
    the order of the region's box, row-major."""
    runs = [(int(region["source_offset"]), int(region["target_offset"]))]
    for loop in reversed(region["loops"]):
        runs = [(s + i * int(loop["source_stride"]), t + i * int(loop["target_stride"]))
                for i in range(int(loop["count"])) for s, t in runs]
    return runs


def region_bytes(region: Mapping[str, Any], source: torch.Tensor | QuantizingSource) -> bytes:
    """The bytes a region sends, in its box's row-major order: read from the source's
    staging (a quantized region; its blocks quantized first) or its tensor's bytes."""
    transform: Optional[str] = region.get("transform")
    if transform is None:
        held = source.local if isinstance(source, QuantizingSource) else source
        flat = held.reshape(-1).view(torch.uint8)
    else:
        if not isinstance(source, QuantizingSource):
            raise ValueError(f"region of {region['tensor_id']} is quantized; its source is not")
        offset = source.fragment["global_offset"]
        lo = list(region["global_offset"])
        if transform == VALUES:
            source.ensure([g - o for g, o in zip(lo, offset)], region["shape"], in_blocks=False)
        else:
            origin = list(offset[:-2]) + list(source.block_origin())
            source.ensure([g - o for g, o in zip(lo, origin)], region["shape"], in_blocks=True)
        flat = source.buffer(transform)
    run = int(region["run_bytes"])
    return b"".join(flat[s:s + run].numpy().tobytes() for s, _ in _runs(region))


def copy_region(region: Mapping[str, Any], source: torch.Tensor | QuantizingSource, target: torch.Tensor) -> None:
    """Writes a region's bytes into ``target`` (a fragment's buffer, any dtype) at the
    target offsets and strides the plan gives."""
    data = torch.frombuffer(bytearray(region_bytes(region, source)), dtype=torch.uint8)
    flat = target.reshape(-1).view(torch.uint8)
    run = int(region["run_bytes"])
    for i, (_, t) in enumerate(_runs(region)):
        flat[t:t + run] = data[i * run:(i + 1) * run]


def changed_blocks(old: tuple[torch.Tensor, torch.Tensor], new: tuple[torch.Tensor, torch.Tensor]) -> list[tuple[int, ...]]:
    """The blocks (indices in the block grid) whose FP8 bytes or scale differ between two
    quantizations (values as uint8 or float8, scales float32) of one tensor: what a delta
    moves."""
    (old_values, old_scales), (new_values, new_scales) = old, new
    differs = (old_values.view(torch.uint8) != new_values.view(torch.uint8))
    rows, cols = differs.shape[-2], differs.shape[-1]
    pad = torch.zeros(list(differs.shape[:-2]) + [-(-rows // BLOCK) * BLOCK, -(-cols // BLOCK) * BLOCK], dtype=torch.bool)
    pad[..., :rows, :cols] = differs
    grid = pad.reshape(list(differs.shape[:-2]) + [pad.shape[-2] // BLOCK, BLOCK, pad.shape[-1] // BLOCK, BLOCK])
    by_block = grid.any(dim=-1).any(dim=-2) | (old_scales.view(torch.int32) != new_scales.view(torch.int32))
    return [tuple(int(i) for i in index) for index in by_block.nonzero()]
