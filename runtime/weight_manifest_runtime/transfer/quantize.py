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

from weight_manifest.errors import manifest_error as _error

__all__ = ["BLOCK", "FP8_MAX", "QuantizedForms", "QuantizingSource", "changed_blocks", "copy_region",
           "region_bytes"]

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


def _copy_runs(copy: Mapping[str, Any]) -> list[int]:
    """The first source offset of every run of a bound copy (offsets in its source's
    quantized form), in the copy's order."""
    starts = [int(copy["source"]["address"])]
    for loop in reversed(copy["loops"]):
        starts = [s + i * int(loop["source_stride"]) for i in range(int(loop["count"])) for s in starts]
    return starts


class QuantizedForms:
    """A pushing source worker's quantized forms (contract §17.8) of its bfloat16 fragments:
    each fragment's FP8 values and float32 scales, in memory registered with ``backend``,
    filled block by block as the copies that read them are quantized (:meth:`quantize`),
    every block once per update (:meth:`reset` forgets them when the weights changed).
    ``fragments``: placement_fragment_id -> (its placement fragment record, its live
    bfloat16 tensor). The executor resolves a transformed copy's source offsets against
    :meth:`bases` (:func:`weight_manifest_runtime.transfer.execute`'s ``quantized``)."""

    def __init__(self, backend: Any, fragments: Mapping[str, tuple[Mapping[str, Any], torch.Tensor]]) -> None:
        self.backend = backend
        self.sources = {fid: QuantizingSource(record, tensor) for fid, (record, tensor) in fragments.items()}
        self._registered: list[int] = []
        for source in self.sources.values():
            for held in (source.values, source.scales):
                if held.numel():
                    backend.register(int(held.data_ptr()), held.numel() * held.element_size())
                    self._registered.append(int(held.data_ptr()))

    def reset(self) -> None:
        """Forget every quantized block: the next update quantizes from the live tensors."""
        for source in self.sources.values():
            source.quantized.clear()

    def _form(self, copy: Mapping[str, Any]) -> tuple[QuantizingSource, torch.Tensor]:
        fid, transform = copy["source_fragment_id"], copy.get("transform")
        source = self.sources.get(fid)
        if source is None or transform not in (VALUES, SCALES):
            raise _error("plan_bind_transform_unsupported",
                         f"the bound plan's copy of tensor {copy['tensor_id']} carries the transform {transform}: "
                         f"this source holds no bfloat16 tensor of fragment {fid} to quantize")
        return source, (source.values if transform == VALUES else source.scales)

    def bases(self, copies: Sequence[Mapping[str, Any]]) -> Optional[list[int]]:
        """Per copy of a pair, the address its source offsets are relative to: its
        quantized form for a transformed copy, 0 for the others (already addresses); None
        when no copy is transformed. A transformed copy must lie inside its form."""
        if not any("transform" in c for c in copies):
            return None
        out = []
        for copy in copies:
            if "transform" not in copy:
                out.append(0)
                continue
            _, form = self._form(copy)
            size = form.numel() * form.element_size()
            end = int(copy["source"]["address"]) + int(copy["run_bytes"]) + sum(
                (int(l["count"]) - 1) * int(l["source_stride"]) for l in copy["loops"])
            if end > size:
                raise _error("transfer_arguments_invalid",
                             f"the bound plan's copy of tensor {copy['tensor_id']} reads {end} bytes of the "
                             f"{copy['transform']} of fragment {copy['source_fragment_id']}, which has {size}")
            out.append(int(form.data_ptr()))
        return out

    def quantize(self, copy: Mapping[str, Any]) -> None:
        """Quantizes the blocks a transformed copy reads (its runs' blocks), if not yet."""
        if "transform" not in copy:
            return
        source, _ = self._form(copy)
        run = int(copy["run_bytes"])
        if copy["transform"] == VALUES:
            shape = list(source.local.shape)
            rows_per_lead, cols = shape[-2], shape[-1]
            keys: set[tuple[int, ...]] = set()
            for start in _copy_runs(copy):
                first_row, last_row = start // cols, (start + run - 1) // cols
                if first_row == last_row:
                    block_cols = range((start % cols) // BLOCK, ((start + run - 1) % cols) // BLOCK + 1)
                else:
                    block_cols = range(source.grid[-1])
                for row in range(first_row, last_row + 1, 1):
                    lead = row // rows_per_lead
                    index = tuple(int(i) for i in _unravel(lead, shape[:-2]))
                    keys.update(index + (row % rows_per_lead // BLOCK, j) for j in block_cols)
        else:
            keys = set()
            for start in _copy_runs(copy):
                for element in range(start // 4, (start + run) // 4):
                    keys.add(tuple(int(i) for i in _unravel(element, source.grid)))
        for key in sorted(keys):
            if key not in source.quantized:
                source._quantize(key)

    def close(self) -> None:
        """Unregister the forms (idempotent)."""
        for address in self._registered:
            self.backend.unregister(address)
        self._registered = []


def _unravel(index: int, dims: Sequence[int]) -> list[int]:
    """``index`` as row-major coordinates over ``dims``."""
    out = []
    for d in reversed(dims):
        out.append(index % d)
        index //= d
    return out[::-1]
