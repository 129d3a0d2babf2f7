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
ones. The whole blocks are hashed in one native call per fragment
(:func:`weight_manifest.content.block_values_at`), an edge piece is read as it is, and a
fragment the delta rewrote whole is hashed in one pass. The partials it returns are
exactly what hashing every byte would give when no byte outside those ranges changed
since the verification; a byte changed there (a fault, a stray write) is not seen by this
check, only by a full one (``status(check=True)``).

A check is a :class:`Check`: the partials, the bytes it hashed, and what the kept values
become if the generation it checked is activated (:meth:`Check.kept`: a delta's changes
applied in place, or a full hash's own values). The values cost 16 bytes per whole block
(with 64-element blocks of 2-byte elements, an eighth of the bytes held).
"""

from __future__ import annotations

import ctypes
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
    elements starting at global inner element ``o`` of rows of ``n``, each cut into the
    same *units*: its whole blocks and the pieces (edges) of the blocks its box cuts.
    ``cuts`` are the units' starts in a row (local elements, then ``m``); ``first`` is the
    first whole block of a row and ``per_row`` how many whole blocks a row holds."""

    def __init__(self, record: Mapping[str, Any], block: int) -> None:
        self.shape = [int(x) for x in record["global_shape"]] or [1]
        self.offset = [int(x) for x in record["global_offset"]] or [0]
        self.local = [int(x) for x in record["local_shape"]] or [1]
        self.address, self.itemsize = int(record["address"]), int(record["itemsize"])
        self.n, self.o, self.m = self.shape[-1], self.offset[-1], self.local[-1]
        self.rows = math.prod(self.local[:-1])
        self.block = block
        self.first = -(-self.o // block)
        end = self.o + self.m
        last = -(-self.n // block) if end == self.n else end // block
        self.per_row = max(last - self.first, 0)
        starts = sorted({self.o, *range(self.first * block, end, block)})
        self.cuts = np.array([c - self.o for c in starts] + [self.m], dtype=np.int64)
        lo, hi = self.cuts[:-1] + self.o, self.cuts[1:] + self.o
        #: Per unit of a row: its block index, and whether it is a whole block.
        self.unit_block = lo // block
        self.unit_whole = (lo % block == 0) & ((hi % block == 0) | (hi == self.n))

    @property
    def nbytes(self) -> int:
        return self.rows * self.m * self.itemsize

    def global_rows(self, local_rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The global (flat) rows of the box's local rows."""
        outer_local, outer_global = self.local[:-1], self.shape[:-1]
        if not outer_local:
            return np.zeros(len(local_rows), dtype=np.int64)
        index = np.unravel_index(local_rows, outer_local)
        moved = tuple(i + o for i, o in zip(index, self.offset[:-1]))
        return np.ravel_multi_index(moved, outer_global).astype(np.int64)

    def units(self, spans: U64) -> npt.NDArray[np.int64]:
        """The units (``local row * units per row + unit``, sorted, distinct) that
        ``spans`` (sorted [start, end) addresses) touch."""
        lo, hi = self.address, self.address + self.nbytes
        none = np.zeros(0, dtype=np.int64)
        if len(spans) == 0 or self.m == 0 or self.rows == 0:
            return none
        starts, ends = spans[:, 0].astype(np.int64), spans[:, 1].astype(np.int64)
        keep = (ends > lo) & (starts < hi)
        if not keep.any():
            return none
        a = np.maximum(starts[keep], lo) - lo
        b = np.minimum(ends[keep], hi) - lo
        s, m, per = self.itemsize, self.m, len(self.cuts) - 1
        first_element, last_element = a // s, (-(-b // s)) - 1
        # The unit of an element: its row's units before it, plus the unit it lies in.
        first = (first_element // m) * per + np.searchsorted(self.cuts, first_element % m, side="right") - 1
        last = (last_element // m) * per + np.searchsorted(self.cuts, last_element % m, side="right") - 1
        order = np.argsort(first, kind="stable")
        first, last = first[order], np.maximum.accumulate(last[order])
        first = np.maximum(first, np.concatenate(([0], last[:-1] + 1)))  # each unit once
        counts = np.maximum(last - first + 1, 0)
        offsets = np.repeat(first - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        units: npt.NDArray[np.int64] = np.arange(int(counts.sum()), dtype=np.int64) + offsets
        return units


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
        only the units those ranges touch are hashed (whole blocks in one native call per
        fragment, edge pieces read as they are)."""
        partials = list(self.records)
        changes: dict[int, tuple[npt.NDArray[np.int64], U64, int, list[dict[str, Any]]]] = {}
        hashed = 0
        for position, fragment in enumerate(self.fragments):
            shape = _Geometry(fragment.record, self.block)
            units = shape.units(spans)
            if len(units) == 0:
                continue
            per = len(shape.cuts) - 1
            if len(units) == shape.rows * per:  # every unit: the fragment in one pass
                fresh = hash_all(tensors, {"tensors": [fragment.record]}, self.block, generation)
                kept = fresh.fresh.fragments[0] if fresh.fresh is not None else fragment
                changes[position] = (np.arange(len(kept.values), dtype=np.int64), kept.values, kept.sum, kept.edges)
                partials[position] = fresh.partials[0]
                hashed += shape.nbytes
                continue
            row, unit = units // per, units % per
            start, stop = shape.cuts[unit], shape.cuts[unit + 1]
            whole = shape.unit_whole[unit]
            rows = shape.global_rows(row)
            at = (row * shape.m + start) * shape.itemsize
            length = (stop - start) * shape.itemsize
            hashed += int(length.sum())
            # Whole blocks: the kept values of those replaced by new ones.
            where = row[whole] * shape.per_row + (shape.unit_block[unit[whole]] - shape.first)
            values = content.block_values_at(tensor_of(tensors, fragment.record), str(fragment.record["tensor_id"]),
                                             at[whole], length[whole], rows[whole], shape.unit_block[unit[whole]])
            total = (fragment.sum - _sum128(fragment.values[where]) + _sum128(values)) & MASK128
            # Edge pieces: their bytes as they are now.
            edges = list(fragment.edges)
            cut = ~whole
            for r, j, a, n, c in zip(rows[cut].tolist(), shape.unit_block[unit[cut]].tolist(), at[cut].tolist(),
                                     length[cut].tolist(), start[cut].tolist()):
                edges[fragment.edge_at[(r, j)]] = {"block": j, "bytes": ctypes.string_at(shape.address + a, n).hex(),
                                                   "row": r, "start": shape.o + c}
            changes[position] = (where, values, total, edges)
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
