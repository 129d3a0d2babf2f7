"""The transports the executor moves bytes on: :class:`EngineBackend` (a Mooncake
``TransferEngine``) and :class:`LocalBackend` (copies within one process). Both refuse any
segment outside the memory registered with them, which is what keeps a bad binding from
becoming a stray write."""

from __future__ import annotations

import bisect
import ctypes
import threading
from typing import Any, Protocol

from weight_manifest.errors import manifest_error as _error

__all__ = ["Backend", "EngineBackend", "LocalBackend"]


class Backend(Protocol):
    """What the executor needs from a transport: registered memory, batches, statuses.
    A backend whose remote side can read any span between two runs of one session (a
    Store object) says so with a true ``reads_gaps`` attribute: pull then reads strided
    runs as whole spans through staging (:func:`pair_operations`)."""

    def register(self, address: int, length: int) -> None:
        """Make ``[address, address + length)`` of this process usable by transfers."""

    def unregister(self, address: int) -> None:
        """Undo :meth:`register` of the region starting at ``address``."""

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        """Start one batch (write: local -> remote; read: remote -> local) and return its
        handle; raise ``transfer_failed`` if it cannot start."""

    def wait(self, handle: int) -> bool:
        """Block until the batch ends; whether every segment of it succeeded."""



class LocalBackend:
    """Copies between buffers of this process (``ctypes.memmove``): colocated trainer and
    rollout, tests, and the in-process baseline. Sessions are names only; every segment
    must lie inside memory registered here on both sides, else its batch fails (no stray
    write, no crash)."""

    def __init__(self) -> None:
        # Pairs run on threads of their own (concurrent_pairs): the region map is replaced
        # whole under the lock, so a batch checking its segments reads one consistent map,
        # and handles are drawn under it, so two batches never share one.
        self._lock = threading.Lock()
        #: (length by start, the starts sorted): one value, swapped whole.
        self._map: tuple[dict[int, int], list[int]] = ({}, [])
        self._done: dict[int, bool] = {}
        self._next = 1

    def register(self, address: int, length: int) -> None:
        with self._lock:
            regions = dict(self._map[0])
            regions[int(address)] = max(int(length), regions.get(int(address), 0))
            self._map = (regions, sorted(regions))

    def unregister(self, address: int) -> None:
        with self._lock:
            regions = {start: n for start, n in self._map[0].items() if start != int(address)}
            self._map = (regions, sorted(regions))

    def _inside(self, address: int, length: int) -> bool:
        # Regions may nest or overlap (a staging buffer, views): any region starting at or
        # before address may hold the span, so scan back from the nearest start while the
        # spans could still reach.
        regions, starts = self._map
        i = bisect.bisect_right(starts, address)
        while i > 0:
            i -= 1
            start = starts[i]
            if address + length <= start + regions[start]:
                return True
            if i == 0 or address - starts[i - 1] > (1 << 40):
                break
        return False

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        ok = len(local) == len(remote) == len(lengths)
        if ok:
            ok = all(self._inside(a, n) and self._inside(b, n) for a, b, n in zip(local, remote, lengths))
        if ok:
            for a, b, n in zip(local, remote, lengths):
                if write:
                    ctypes.memmove(b, a, n)
                else:
                    ctypes.memmove(a, b, n)
        with self._lock:
            handle, self._next = self._next, self._next + 1
            self._done[handle] = ok
        return handle

    def wait(self, handle: int) -> bool:
        return self._done.pop(handle, False)


class EngineBackend:
    """A Mooncake ``TransferEngine`` (``mooncake.engine``), already initialised. A batch
    is ``batch_transfer_async_write`` / ``_read``; its status is
    ``get_batch_transfer_status``, which blocks. A batch id of 0 or below is a failed
    submission (the engine returns -1 for mismatched lists and 0 for an unknown
    session); any status but 0 is a failed batch."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def register(self, address: int, length: int) -> None:
        if self.engine.register_memory(int(address), int(length)) != 0:
            raise _error("transfer_failed", f"the engine refused to register {length} bytes at {address:#x}")

    def unregister(self, address: int) -> None:
        self.engine.unregister_memory(int(address))

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        call = self.engine.batch_transfer_async_write if write else self.engine.batch_transfer_async_read
        return int(call(session, local, remote, lengths))

    def wait(self, handle: int) -> bool:
        return handle > 0 and int(self.engine.get_batch_transfer_status([handle])) == 0

