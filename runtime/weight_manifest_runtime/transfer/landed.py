"""A pulling target hashes what has landed while its later pairs are still in flight.

A target that runs its own pairs (pull) knows when each pair's bytes are all in: a tensor
whose last writing pair has finished cannot change again in this update, so its partial
(:func:`weight_manifest.content.partials`) is computed then, on a thread of its own (the
hash runs in Rust without the GIL), while the next pairs move. The update's content check
then needs no second pass over the targets' memory. Tensors no pair writes are hashed
first; every tensor is hashed after its last write, so no landed byte escapes the check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional

from weight_manifest import CopyGroup, content
from weight_manifest.errors import manifest_error as _error

__all__ = ["LandedPartials"]


class LandedPartials:
    """The partials of a worker's tensors, each computed once every pair of ``pairs``
    that writes it is done: call :meth:`pair_done` after each pair, then :meth:`finish`."""

    def __init__(self, tensors: Mapping[Any, Any], inventory: Mapping[str, Any], pairs: Sequence[CopyGroup],
                 block_elements: int) -> None:
        self.tensors, self.block_elements = tensors, block_elements
        self._records = list(inventory["tensors"])
        writers: dict[str, set[tuple[str, str]]] = {}
        for pair in pairs:
            for copy in pair.copies:
                writers.setdefault(str(copy["tensor_id"]), set()).add(_key(pair))
        self._waiting = {p: set(writers.get(str(r["tensor_id"]), ())) for p, r in enumerate(self._records)}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="landed-hash")
        self._futures: dict[int, Future[list[dict[str, Any]]]] = {}
        self._release(None)

    def _release(self, key: Optional[tuple[str, str]]) -> None:  # None: none done yet
        for position, waiting in self._waiting.items():
            waiting.discard(key)
            if not waiting and position not in self._futures:
                record = {"tensors": [self._records[position]]}
                self._futures[position] = self._pool.submit(content.partials, self.tensors, record,
                                                            self.block_elements)

    def pair_done(self, pair: CopyGroup) -> None:
        """``pair`` has landed every byte."""
        self._release(_key(pair))

    def finish(self) -> list[dict[str, Any]]:
        """Every record's partial, in the inventory's order, once every pair is done;
        ``transfer_failed`` if a pair never reported."""
        try:
            missing = [self._records[p]["tensor_id"] for p in range(len(self._records)) if p not in self._futures]
            if missing:
                raise _error("transfer_failed", f"tensor {missing[0]} was never reported landed; it is not verified")
            return [self._futures[p].result()[0] for p in range(len(self._records))]
        finally:
            self._pool.shutdown(wait=True)

    def abandon(self) -> None:
        """The update failed: stop hashing (the partials are not used)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _key(pair: CopyGroup) -> tuple[str, str]:
    return pair.source_worker_id, pair.target_worker_id
