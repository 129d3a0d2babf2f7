"""The block values a target keeps of the generation it last verified, so that a delta's
check re-hashes only the blocks the delta wrote.

A fragment's partial (contract §19.3) is the sum, modulo 2^128, of the values of its whole
blocks, and its edges (the pieces of the blocks its box cuts). :class:`VerifiedBlocks`
keeps, for every fragment a target holds, the value of each whole block, the sum and the
edges, as they were when the target verified its generation. For a delta that wrote the
address ranges ``spans`` on this target, :meth:`VerifiedBlocks.rehash` hashes only the
*units* those ranges touch (a whole block, or an edge piece: the ranges rounded out to
whole blocks of the target's own fragments) and takes every other block's value from what
it keeps: the new sum is the kept one minus the touched blocks' kept values plus their new
ones. The partials it returns are exactly what hashing every byte would give when no byte
outside those ranges changed since the verification; a byte changed there (a fault, a
stray write) is not seen by this check, only by a full one (``status(check=True)``).

A check is a :class:`Check`: the partials, the bytes it hashed, and what the kept values
become if the generation it checked is activated (:meth:`Check.kept`: a delta's changes
applied in place, or a full hash's own values). The values cost 16 bytes per whole block
(with 64-element blocks of 2-byte elements, an eighth of the bytes held).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from weight_manifest import content
from weight_manifest.live import tensor_of

__all__ = ["Check", "VerifiedBlocks", "hash_all"]

U64 = npt.NDArray[np.uint64]
MASK128 = (1 << 128) - 1


def _sum128(values: U64) -> int:
    """Σ of (lo, hi) 128-bit values modulo 2^128 (32-bit halves summed without overflow)."""
    if len(values) == 0:
        return 0
    low32 = np.uint64(0xFFFFFFFF)
    lo, hi = values[:, 0], values[:, 1]
    parts = [int((lo & low32).sum(dtype=np.uint64)), int((lo >> np.uint64(32)).sum(dtype=np.uint64)),
             int((hi & low32).sum(dtype=np.uint64)), int((hi >> np.uint64(32)).sum(dtype=np.uint64))]
    return sum(p << (32 * i) for i, p in enumerate(parts)) & MASK128


def _blocks(tensor: Any, tensor_id: str, global_shape: Sequence[int], global_offset: Sequence[int],
            local_shape: Sequence[int], itemsize: int, block: int) -> tuple[dict[str, Any], U64]:
    """One pass over a live box (a view of a fragment's rows): its partial and its whole
    blocks' values (lo, hi), by row, then block."""
    record: dict[str, Any] = {"tensor_id": tensor_id, "global_shape": list(global_shape),
                              "global_offset": list(global_offset), "local_shape": list(local_shape),
                              "itemsize": itemsize}
    look = content.Snapshot({tensor_id: tensor}, {"tensors": [record]}, block)
    values, _ = look.values[(tensor_id, tuple(int(x) for x in global_offset))]
    return dict(look.partials[0]["partial"]), values


@dataclass
class _Fragment:
    """One fragment's kept state: its inventory record, the values of its whole blocks (by
    local row, then block), their sum, and its edges (by row, then block)."""

    record: Mapping[str, Any]
    values: U64
    sum: int
    edges: list[dict[str, Any]]
    #: (global row, block) -> position in ``edges``.
    edge_at: dict[tuple[int, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.edge_at = {(int(e["row"]), int(e["block"])): i for i, e in enumerate(self.edges)}

    def partial_record(self, block: int) -> dict[str, Any]:
        """The record :func:`weight_manifest.content.partials` gives (with ``block``)."""
        r = self.record
        return {"tensor_id": r["tensor_id"], "global_shape": list(r["global_shape"]), "itemsize": int(r["itemsize"]),
                "global_offset": list(r["global_offset"]), "local_shape": list(r["local_shape"]),
                "partial": {"edges": self.edges, "sum": f"{self.sum:032x}"}, "block": block}


class _Geometry:
    """A fragment read as rows of its tensor (contract §19.1): ``rows`` local rows of ``m``
    elements starting at global inner element ``o`` of rows of ``n``; ``first`` is its first
    whole block of a row and ``per_row`` how many whole blocks a row holds."""

    def __init__(self, record: Mapping[str, Any], block: int) -> None:
        self.shape = [int(x) for x in record["global_shape"]] or [1]
        self.offset = [int(x) for x in record["global_offset"]] or [0]
        self.local = [int(x) for x in record["local_shape"]] or [1]
        self.address, self.itemsize = int(record["address"]), int(record["itemsize"])
        self.n, self.o, self.m = self.shape[-1], self.offset[-1], self.local[-1]
        self.rows = math.prod(self.local[:-1])
        self.global_rows = math.prod(self.shape[:-1])
        self.block = block
        self.first = -(-self.o // block)
        end = self.o + self.m
        last = -(-self.n // block) if end == self.n else end // block
        self.per_row = max(last - self.first, 0)
        # Consecutive local rows are consecutive global rows within runs of ``run`` rows:
        # up to the innermost outer axis the box does not span whole.
        outer_local, outer_global = self.local[:-1], self.shape[:-1]
        cut = max((i for i in range(len(outer_local)) if outer_local[i] != outer_global[i]), default=-1)
        self.run = math.prod(outer_local[cut:]) if cut >= 0 else max(self.rows, 1)

    @property
    def nbytes(self) -> int:
        return self.rows * self.m * self.itemsize

    def global_row(self, local_row: int) -> int:
        """The global (flat) row of the box's local row ``local_row``."""
        index = []
        for extent in reversed(self.local[:-1]):
            index.append(local_row % extent)
            local_row //= extent
        index.reverse()
        row = 0
        for i, extent in enumerate(self.shape[:-1]):
            row = row * extent + index[i] + self.offset[i]
        return row

    def units(self, spans: U64) -> list[tuple[int, int, int, int]]:
        """The boxes (local row, rows, inner start, inner end; inner in global elements) of
        the units that ``spans`` (sorted [start, end) addresses) touch: whole blocks and
        edge pieces, merged, each box a run of rows that are consecutive globally."""
        lo, hi = self.address, self.address + self.nbytes
        if len(spans) == 0 or self.m == 0 or self.rows == 0:
            return []
        starts, ends = spans[:, 0].astype(np.int64), spans[:, 1].astype(np.int64)
        keep = (ends > lo) & (starts < hi)
        if not keep.any():
            return []
        a = np.maximum(starts[keep], lo) - lo
        b = np.minimum(ends[keep], hi) - lo
        s, m, o, B = self.itemsize, self.m, self.o, self.block
        ea, eb = a // s, -(-b // s)
        ia, ca = ea // m, ea % m
        ib, cb = (eb - 1) // m, (eb - 1) % m + 1
        ga = np.maximum(o, ((o + ca) // B) * B)
        gb = np.minimum(o + m, -(-(o + cb) // B) * B)
        x, y = ia * m + (ga - o), ib * m + (gb - o)
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        reach = np.maximum.accumulate(y)
        new = np.ones(len(x), dtype=bool)
        new[1:] = x[1:] > reach[:-1]
        first = np.flatnonzero(new)
        merged_x = x[first]
        merged_y = np.maximum.reduceat(y, first)
        boxes: list[tuple[int, int, int, int]] = []
        for start, stop in zip(merged_x.tolist(), merged_y.tolist()):
            boxes.extend(self._boxes(start, stop))
        return boxes

    def _boxes(self, x: int, y: int) -> list[tuple[int, int, int, int]]:
        """[x, y) (local flat elements at unit boundaries) as row boxes."""
        m, o = self.m, self.o
        row_a, col_a = divmod(x, m)
        row_b, col_b = divmod(y - 1, m)
        col_b += 1
        if row_a == row_b:
            return [(row_a, 1, o + col_a, o + col_b)]
        out: list[tuple[int, int, int, int]] = []
        if col_a:
            out.append((row_a, 1, o + col_a, o + m))
            row_a += 1
        tail = None
        if col_b != m:
            tail = (row_b, 1, o, o + col_b)
            row_b -= 1
        row = row_a
        while row <= row_b:  # whole rows, cut where the next local row is not the next global one
            stop = min(row_b + 1, (row // self.run + 1) * self.run)
            out.append((row, stop - row, o, o + m))
            row = stop
        if tail is not None:
            out.append(tail)
        return out


@dataclass
class Check:
    """The partials of one check of a generation, the bytes it hashed, and what the kept
    values become when that generation activates."""

    generation: int
    block: int
    partials: list[dict[str, Any]]
    hashed_bytes: int
    #: A full hash: the new kept values; a delta: None (``changes`` apply to the base).
    fresh: Optional["VerifiedBlocks"] = None
    base: Optional["VerifiedBlocks"] = None
    #: fragment position -> (value positions, their new values, new sum, new edges).
    changes: dict[int, tuple[npt.NDArray[np.int64], U64, int, list[dict[str, Any]]]] = field(default_factory=dict)

    def kept(self) -> "VerifiedBlocks":
        """The values of the generation this check hashed, to keep once it activates (a
        delta's changes written into its base's values)."""
        if self.fresh is not None:
            return self.fresh
        assert self.base is not None
        base = self.base
        for position, (where, values, total, edges) in self.changes.items():
            fragment = base.fragments[position]
            fragment.values[where] = values
            # The edges replaced keep their (row, block): ``edge_at`` stays right.
            fragment.sum, fragment.edges = total, edges
        base.generation = self.generation
        base.records = [f.partial_record(base.block) for f in base.fragments]
        return base


def _identity(records: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """What must not move for kept values to describe a fragment's memory."""
    return [(r["tensor_id"], tuple(r["global_shape"]), tuple(r["global_offset"]), tuple(r["local_shape"]),
             int(r["itemsize"]), int(r["address"])) for r in records]


class VerifiedBlocks:
    """The kept block values of every fragment a target holds at ``generation``."""

    def __init__(self, generation: int, block: int, fragments: list[_Fragment]) -> None:
        self.generation, self.block, self.fragments = generation, block, fragments
        self.identity = _identity([f.record for f in fragments])
        self.records = [f.partial_record(block) for f in fragments]

    @property
    def nbytes(self) -> int:
        """The memory its block values take (the edges' bytes aside)."""
        return sum(int(f.values.nbytes) for f in self.fragments)

    def fits(self, inventory: Mapping[str, Any], block: int) -> bool:
        """Whether these values describe ``inventory``'s fragments hashed in ``block``s."""
        return block == self.block and _identity(inventory["tensors"]) == self.identity

    def rehash(self, tensors: Mapping[Any, Any], spans: U64, generation: int) -> Check:
        """The partials after a delta that wrote ``spans`` (sorted [start, end) addresses):
        only the units those ranges touch are hashed."""
        partials = list(self.records)
        changes: dict[int, tuple[npt.NDArray[np.int64], U64, int, list[dict[str, Any]]]] = {}
        hashed = 0
        for position, fragment in enumerate(self.fragments):
            shape = _Geometry(fragment.record, self.block)
            boxes = shape.units(spans)
            if not boxes:
                continue
            tensor = tensor_of(tensors, fragment.record)
            rows_view = tensor.reshape(shape.rows, shape.m)
            edges = list(fragment.edges)
            total = fragment.sum
            where_parts: list[npt.NDArray[np.int64]] = []
            value_parts: list[U64] = []
            for row, count, start, end in boxes:
                piece = rows_view[row:row + count, start - shape.o:end - shape.o]
                partial, values = _blocks(piece, fragment.record["tensor_id"], [shape.global_rows, shape.n],
                                          [shape.global_row(row), start], [count, end - start], shape.itemsize,
                                          self.block)
                hashed += count * (end - start) * shape.itemsize
                j0 = -(-start // self.block)
                whole = len(values) // count if count else 0
                if whole:
                    where = ((np.arange(row, row + count, dtype=np.int64)[:, None] * shape.per_row)
                             + (j0 - shape.first + np.arange(whole, dtype=np.int64))[None, :]).reshape(-1)
                    total = (total - _sum128(fragment.values[where]) + int(partial["sum"], 16)) & MASK128
                    where_parts.append(where)
                    value_parts.append(values)
                for edge in partial["edges"]:
                    edges[fragment.edge_at[(int(edge["row"]), int(edge["block"]))]] = edge
            where_all = np.concatenate(where_parts) if where_parts else np.zeros(0, dtype=np.int64)
            values_all = np.concatenate(value_parts) if value_parts else np.zeros((0, 2), dtype=np.uint64)
            changes[position] = (where_all, values_all, total, edges)
            partials[position] = {**fragment.partial_record(self.block), "partial": {"edges": edges,
                                                                                    "sum": f"{total:032x}"}}
        return Check(generation, self.block, partials, hashed, base=self, changes=changes)


def hash_all(tensors: Mapping[Any, Any], inventory: Mapping[str, Any], block: int, generation: int) -> Check:
    """Every byte a target holds hashed: its partials and the values to keep."""
    look = content.Snapshot(tensors, inventory, block)
    fragments = []
    hashed = 0
    for record, partial in zip(inventory["tensors"], look.partials):
        values, _ = look.values[(str(record["tensor_id"]), tuple(record["global_offset"]))]
        fragments.append(_Fragment(record, values.copy(), int(partial["partial"]["sum"], 16),
                                   list(partial["partial"]["edges"])))
        hashed += _Geometry(record, block).nbytes
    kept = VerifiedBlocks(generation, block, fragments)
    return Check(generation, block, list(kept.records), hashed, fresh=kept)
