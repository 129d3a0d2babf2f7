"""A coalesced delta: the small changed pieces of each pair packed into one contiguous area.

A delta's changed blocks lie scattered on both sides of a pair, so one engine operation per
block would pay the engine's per-operation cost tens of thousands of times. Instead both
sides agree on one packing (:func:`packing`: the pair's selected pieces shorter than
``stage_below``, in the order of the pair's segments, back to back) and the pair's passive
side holds a registered :class:`Landing` area for it:

- push: the source gathers the pieces into its staging buffer and writes them to the
  target's landing area in one operation per staging round; the target then scatters them
  into its tensors (:meth:`Landing.apply`). A push delta that fails before the apply leaves
  every target's tensors untouched.
- pull: the source gathers the pieces into its landing area first (:meth:`Landing.prepare`);
  the target reads it in one operation per staging round and scatters it from staging.

Pieces of ``stage_below`` bytes or more move directly, as in a full update. The passive
side checks the bound plan's fence and that every piece lies inside the memory it
registered before it copies a byte.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from weight_manifest import BoundPlan
from weight_manifest.errors import manifest_error as _error
from .backends import Backend
from .lowering import Changed, packing

__all__ = ["Landing"]

U64 = npt.NDArray[np.uint64]


def _covered(addresses: U64, lengths: U64, regions: Sequence[tuple[int, int]]) -> bool:
    """Whether every [address, address + length) lies inside the union of ``regions``."""
    if len(addresses) == 0:
        return True
    spans = sorted((int(a), int(a) + int(n)) for a, n in regions if n > 0)
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    if not merged:
        return False
    starts = np.array([m[0] for m in merged], dtype=np.uint64)
    ends = np.array([m[1] for m in merged], dtype=np.uint64)
    at = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
    if (at < 0).any():
        return False
    return bool((addresses + lengths <= ends[at]).all())


class Landing:
    """A passive worker's registered area for the packed pieces of its pairs, reused (and
    grown when a delta needs more) from one delta to the next."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.buffer: Optional[np.ndarray] = None
        self._scatter: list[tuple[int, int, int]] = []
        self.token: Optional[str] = None

    def _reserve(self, nbytes: int) -> int:
        if self.buffer is None or self.buffer.nbytes < nbytes:
            self.close()
            self.buffer = np.ones(max(nbytes, 1), dtype=np.uint8)  # touched: no page faults later
            self.backend.register(int(self.buffer.ctypes.data), self.buffer.nbytes)
        return int(self.buffer.ctypes.data)

    def prepare(self, bound: BoundPlan, changed: Changed, worker: str, push: bool, stage_below: int,
                max_segments: int, registered: Sequence[tuple[int, int]], token: str) -> list[list[Any]]:
        """Reserve the area for every pair whose passive side ``worker`` is (push: its
        target, pull: its source); pull: gather the sources' pieces into it now. Returns
        ``[source worker, target worker, address]`` per pair with packed pieces. Refuses
        (``transfer_failed``) a piece outside ``registered``, before any copy."""
        pairs = [p for p in bound.pairs if (p.target_worker_id if push else p.source_worker_id) == worker]
        packings = [(p, packing(p, changed, stage_below, max_segments)) for p in pairs]
        packings = [(p, k) for p, k in packings if len(k.length)]
        for pair, k in packings:
            mine = k.target if push else k.source
            if not _covered(mine, k.length, registered):
                raise _error("transfer_failed",
                             f"pair {pair.source_worker_id} -> {pair.target_worker_id}: the delta's pieces lie "
                             f"outside the memory {worker} registered; nothing was copied")
        base = self._reserve(sum(k.nbytes for _, k in packings))
        entries: list[list[Any]] = []
        scatter: list[tuple[int, int, int]] = []
        at = 0
        for pair, k in packings:
            entries.append([pair.source_worker_id, pair.target_worker_id, base + at])
            for address, offset, n in zip(((k.target if push else k.source)).tolist(), k.offset.tolist(),
                                          k.length.tolist()):
                if push:
                    scatter.append((address, base + at + offset, n))
                else:
                    ctypes.memmove(base + at + offset, address, n)
            at += k.nbytes
        self._scatter, self.token = scatter, token
        return entries

    def apply(self, token: str) -> int:
        """Push: scatter the landed pieces of the delta ``token`` into the tensors (once);
        the bytes written."""
        if token != self.token:
            raise _error("transfer_arguments_invalid", f"no delta {token!r} was prepared here")
        written = 0
        for address, landed, n in self._scatter:
            ctypes.memmove(address, landed, n)
            written += n
        self._scatter, self.token = [], None
        return written

    def close(self) -> None:
        """Unregister and drop the area (idempotent)."""
        if self.buffer is not None:
            self.backend.unregister(int(self.buffer.ctypes.data))
            self.buffer = None
