"""The content digest of contract §19, written out in plain Python over the C reference
xxHash (the PyPI package ``xxhash``): an oracle independent of the Rust implementation.

Tensors are given as raw row-major bytes with their shape and itemsize; nothing here
imports weight_manifest.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import xxhash

MASK = (1 << 128) - 1


def h(data: bytes) -> int:
    """XXH3-128, seed 0, as an integer."""
    return int(xxhash.xxh3_128_intdigest(data))


def value(key: int, row: int, block: int, content: int) -> int:
    """value(r, j) of §19.2: XXH3-128(key ‖ r ‖ j ‖ content), all little-endian."""
    data = key.to_bytes(16, "little") + row.to_bytes(8, "little")
    data += block.to_bytes(8, "little") + content.to_bytes(16, "little")
    return h(data)


def rows_of(shape: Sequence[int]) -> int:
    return math.prod(shape[:-1])


def digest(tensor_id: str, shape: Sequence[int], itemsize: int, block: int, data: bytes) -> str:
    """The digest text of the whole tensor from its row-major bytes."""
    key = h(tensor_id.encode())
    n = shape[-1]
    total = 0
    for r in range(rows_of(shape)):
        row = data[r * n * itemsize : (r + 1) * n * itemsize]
        for j in range((n + block - 1) // block):
            piece = row[j * block * itemsize : min(n, (j + 1) * block) * itemsize]
            total = (total + value(key, r, j, h(piece))) & MASK
    return f"xxh3sum128:{total:032x}"


def box_rows(shape: Sequence[int], offset: Sequence[int], local: Sequence[int]) -> list[int]:
    """The global row indices of a box's rows, in row-major order of the box."""
    out = [0]
    for axis in range(len(shape) - 1):
        out = [r * shape[axis] + offset[axis] + i for r in out for i in range(local[axis])]
    return out


def partial(
    tensor_id: str,
    shape: Sequence[int],
    itemsize: int,
    block: int,
    offset: Sequence[int],
    local: Sequence[int],
    data: bytes,
) -> dict[str, Any]:
    """The partial of §19.3 of the box (offset, local) whose contiguous bytes are ``data``."""
    key = h(tensor_id.encode())
    n, a, width = shape[-1], offset[-1], local[-1]
    total = 0
    edges = []
    for i, r in enumerate(box_rows(shape, offset, local)):
        row = data[i * width * itemsize : (i + 1) * width * itemsize]
        for j in range(a // block, (a + width - 1) // block + 1):
            lo, hi = j * block, min(n, (j + 1) * block)
            start, stop = max(lo, a), min(hi, a + width)
            piece = row[(start - a) * itemsize : (stop - a) * itemsize]
            if (start, stop) == (lo, hi):
                total = (total + value(key, r, j, h(piece))) & MASK
            else:
                edges.append({"block": j, "bytes": piece.hex(), "row": r, "start": start})
    return {"edges": edges, "sum": f"{total:032x}"}


def block_values(
    tensor_id: str,
    shape: Sequence[int],
    itemsize: int,
    block: int,
    offset: Sequence[int],
    local: Sequence[int],
    data: bytes,
) -> list[tuple[int, int, int]]:
    """(row, block, value) of the blocks wholly inside the box, by row, then block."""
    key = h(tensor_id.encode())
    n, a, width = shape[-1], offset[-1], local[-1]
    out = []
    for i, r in enumerate(box_rows(shape, offset, local)):
        row = data[i * width * itemsize : (i + 1) * width * itemsize]
        for j in range(a // block, (a + width - 1) // block + 1):
            lo, hi = j * block, min(n, (j + 1) * block)
            if lo >= a and hi <= a + width:
                piece = row[(lo - a) * itemsize : (hi - a) * itemsize]
                out.append((r, j, value(key, r, j, h(piece))))
    return out


def cut(shape: Sequence[int], itemsize: int, data: bytes, offset: Sequence[int], local: Sequence[int]) -> bytes:
    """The contiguous bytes of a box of a row-major tensor."""
    n = shape[-1]
    out = bytearray()
    for r in box_rows(shape, offset, local):
        start = (r * n + offset[-1]) * itemsize
        out += data[start : start + local[-1] * itemsize]
    return bytes(out)
