"""Execute a bound plan's copies: move the bytes of a weight update, failing closed.

:func:`execute` takes a :class:`BoundPlan` (from :func:`bind_plan`), a backend and a map
from worker id to the backend's session name, and issues each (source worker, target
worker) pair's segments (:meth:`CopyGroup.segments`: runs adjacent on both sides already
merged) in bounded batches with a bounded number of batches in flight:

- ``mode="push"``: the source worker runs the pairs it is the source of and writes;
  ``mode="pull"``: the target worker runs the pairs it is the target of and reads. With
  ``worker=None`` every pair runs here (one process holding both sides, or tests).
- **Staging.** Runs that are contiguous on the remote side but split on the local side (a
  row-parallel weight read whole from one rank and written as every other row slice of
  another) would cost one engine operation each. They are gathered into (push) or
  scattered from (pull) a registered local staging buffer instead, so the engine sees one
  operation per remote-contiguous run; the report counts both.

Fail closed: :func:`check_fences` compares the bound plan's fences with the live bindings
before the first byte; any batch whose submission or status fails raises
:class:`ManifestError` ``transfer_failed`` naming the worker pair and the region (tensor and
fragments), after waiting for every batch still in flight. Nothing here marks a target
ready: the caller does that only when :func:`execute` returned. Re-running a failed update
is safe: a copy only writes target bytes, so running it again writes the same bytes.

Backends: :class:`EngineBackend` drives a Mooncake ``TransferEngine``; :class:`LocalBackend`
copies within one process (colocated trainer and rollout, tests, the baseline). Both refuse
any segment outside the memory registered with them, which is what keeps a bad binding
from becoming a stray write.
"""

from __future__ import annotations

import bisect
import ctypes
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Union

import numpy as np
import numpy.typing as npt

from ._errors import manifest_error as _error
from ._manifests import RuntimeBindingManifest
from ._native import BoundPlan, CopyGroup

__all__ = [
    "Backend",
    "EngineBackend",
    "LocalBackend",
    "PairReport",
    "Staging",
    "UpdateReport",
    "check_fences",
    "execute",
    "fence_of",
    "operation_count",
]

FENCE_MEMBERS = ("placement_id", "placement_digest", "instance_id", "lease_id", "generation")
DEFAULT_BATCH_SEGMENTS = 256
# The engine's TCP lanes reject work beyond their queue (measured: 4 x 1,024 segments in
# flight fail with "queue-full"); 4 x 256 stays below it.
DEFAULT_MAX_IN_FLIGHT = 4
DEFAULT_STAGE_BELOW = 256 << 10
DEFAULT_STAGING_BYTES = 64 << 20


# ---- fences ----------------------------------------------------------------------------

Fence = Mapping[str, Any]


def fence_of(binding: Union[RuntimeBindingManifest, Fence]) -> dict[str, Any]:
    """The fence members of a live binding (a :class:`RuntimeBindingManifest` or a mapping
    with at least the members of a bound plan's ``source`` / ``target``)."""
    if isinstance(binding, RuntimeBindingManifest):
        return {m: getattr(binding, m) for m in FENCE_MEMBERS}
    return {m: binding.get(m) for m in FENCE_MEMBERS}


def check_fences(
    bound: BoundPlan,
    source: Union[RuntimeBindingManifest, Fence, Sequence[Fence]],
    target: Union[RuntimeBindingManifest, Fence, Sequence[Fence]],
) -> None:
    """Raise ``transfer_fence_mismatch`` (pointer ``/source/generation`` and the like, into
    the bound plan) unless every live binding of each side still has the bound plan's
    placement, digest, instance, lease and generation. A side may be given as one binding
    or as one fence per worker (what each worker reports now)."""
    for side, live in (("source", source), ("target", target)):
        expected = bound.source if side == "source" else bound.target
        fences = [live] if isinstance(live, (RuntimeBindingManifest, Mapping)) else list(live)
        for fence in fences:
            now = fence_of(fence)
            for member in FENCE_MEMBERS:
                if now[member] != expected[member]:
                    who = now.get("worker_id") or (fence.get("worker_id") if isinstance(fence, Mapping) else None)
                    worker = f" (worker {who})" if who else ""
                    raise _error(
                        "transfer_fence_mismatch",
                        f"the live {side} binding{worker} has {member} {now[member]!r}, the bound "
                        f"plan was bound at {expected[member]!r}: the binding changed, bind again",
                        f"/{side}/{member}",
                    )


# ---- backends --------------------------------------------------------------------------


class Backend(Protocol):
    """What the executor needs from a transport: registered memory, batches, statuses.
    A backend whose remote side can read any span between two runs of one session (a
    Store object) says so with a true ``reads_gaps`` attribute: pull then reads strided
    runs as whole spans through staging (:func:`_ops`)."""

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
        self._regions: dict[int, int] = {}
        self._starts: list[int] = []
        self._done: dict[int, bool] = {}
        self._next = 1

    def register(self, address: int, length: int) -> None:
        self._regions[int(address)] = max(int(length), self._regions.get(int(address), 0))
        self._starts = sorted(self._regions)

    def unregister(self, address: int) -> None:
        self._regions.pop(int(address), None)
        self._starts = sorted(self._regions)

    def _inside(self, address: int, length: int) -> bool:
        # Regions may nest or overlap (a staging buffer, views): any region starting at or
        # before address may hold the span, so scan back from the nearest start while the
        # spans could still reach.
        i = bisect.bisect_right(self._starts, address)
        while i > 0:
            i -= 1
            start = self._starts[i]
            if address + length <= start + self._regions[start]:
                return True
            if i == 0 or address - self._starts[i - 1] > (1 << 40):
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


# ---- reports ---------------------------------------------------------------------------


@dataclass
class PairReport:
    """What one (source worker, target worker) pair moved."""

    source_worker_id: str
    target_worker_id: str
    #: Bytes delivered to the copies' destinations.
    bytes: int = 0
    #: Bytes on the wire: ``bytes`` plus the gaps of spans read whole (``read_gaps``).
    wire_bytes: int = 0
    #: Contiguous runs of the pair's copies after merging (what a plain executor issues).
    runs: int = 0
    #: Operations handed to the backend.
    segments: int = 0
    #: Local copies into or out of the staging buffer.
    staged_pieces: int = 0
    batches: int = 0
    seconds: float = 0.0
    #: Of ``seconds``: waiting for batches, and copying into or out of staging.
    wait_seconds: float = 0.0
    staging_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class UpdateReport:
    """The pairs an :func:`execute` call ran, with totals."""

    mode: str
    pairs: list[PairReport] = field(default_factory=list)
    seconds: float = 0.0
    #: Of ``seconds``: lowering the copies to operations and setting up staging.
    prepare_seconds: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.pairs)

    @property
    def segments(self) -> int:
        return sum(p.segments for p in self.pairs)

    @property
    def batches(self) -> int:
        return sum(p.batches for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "bytes": self.bytes,
            "segments": self.segments,
            "batches": self.batches,
            "seconds": self.seconds,
            "prepare_seconds": self.prepare_seconds,
            "pairs": [p.to_dict() for p in self.pairs],
        }


# ---- lowering --------------------------------------------------------------------------

U64 = npt.NDArray[np.uint64]


@dataclass
class _Op:
    """One engine operation: local and remote first byte and length, and, when staged,
    the local pieces (local address, offset in the staged run, length) behind it."""

    local: int
    remote: int
    length: int
    pieces: Optional[list[tuple[int, int, int]]] = None


Changed = Mapping[tuple[str, str], npt.NDArray[np.uint64]]


def _select(source: U64, target: U64, length: U64, device: npt.NDArray[np.uint32],
            devices: list[tuple[str, str]], worker: str, changed: Changed) -> tuple[U64, U64, U64, npt.NDArray[np.uint32]]:
    """The parts of the segments whose source bytes lie in ``changed[(worker, device)]``
    (sorted, disjoint [start, end) source address ranges, shape (k, 2))."""
    keep: list[tuple[U64, U64, U64, npt.NDArray[np.uint32]]] = []
    for index, (source_device, _) in enumerate(devices):
        ranges = changed.get((worker, source_device))
        if ranges is None or len(ranges) == 0:
            continue
        mine = np.flatnonzero(device == index)
        s, t, n = source[mine], target[mine], length[mine]
        first = np.searchsorted(ranges[:, 1], s, side="right")  # first range ending after s
        last = np.searchsorted(ranges[:, 0], s + n, side="left")  # ranges starting before the end
        count = np.maximum(last - first, 0)
        which = np.repeat(np.arange(len(mine)), count)
        k = np.repeat(first, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
        a = np.maximum(s[which], ranges[k, 0])
        b = np.minimum(s[which] + n[which], ranges[k, 1])
        keep.append((a, t[which] + (a - s[which]), b - a, np.full(len(a), index, dtype=np.uint32)))
    if not keep:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty, empty, np.zeros(0, dtype=np.uint32)
    return (np.concatenate([k[0] for k in keep]), np.concatenate([k[1] for k in keep]),
            np.concatenate([k[2] for k in keep]), np.concatenate([k[3] for k in keep]))


def _ops(group: CopyGroup, push: bool, stage_below: int, max_segments: int,
         changed: Optional[Changed] = None, read_gaps: bool = False) -> tuple[list[_Op], int]:
    """The pair's operations and its merged run count. Runs contiguous on the remote side
    become one staged operation when their mean length is below ``stage_below``. With
    ``read_gaps`` (pull only: a backend whose remote side reads any span between two runs
    of one session, as a Store object does), runs separated by a forward gap no longer
    than the run after it join too, and the span is read whole (at most half of it is
    gap). With ``changed``, only the changed source bytes are moved (a delta update)."""
    lowered = group.segments(max_segments)
    source, target, length, device = lowered.source, lowered.target, lowered.length, lowered.device
    if changed is not None:
        source, target, length, device = _select(source, target, length, device, lowered.devices,
                                                 group.source_worker_id, changed)
    n = len(length)
    local: U64 = source if push else target
    remote: U64 = target if push else source
    if n == 0:
        return [], 0
    # Group boundaries: where the remote side (or the device pair) is not contiguous.
    starts = np.ones(n, dtype=bool)
    if n > 1:
        ends = remote[:-1] + length[:-1]
        if read_gaps and not push:
            forward = remote[1:] >= ends
            gap = np.where(forward, remote[1:] - np.minimum(ends, remote[1:]), 0)
            starts[1:] = ~forward | (gap > length[1:]) | (device[:-1] != device[1:])
        else:
            starts[1:] = (ends != remote[1:]) | (device[:-1] != device[1:])
    bounds = np.append(np.flatnonzero(starts), n)
    ops: list[_Op] = []
    loc, rem, lens = local.tolist(), remote.tolist(), length.tolist()
    for g in range(len(bounds) - 1):
        a, b = int(bounds[g]), int(bounds[g + 1])
        if b - a == 1 or sum(lens[a:b]) >= stage_below * (b - a):
            ops.extend(_Op(loc[i], rem[i], lens[i]) for i in range(a, b))
            continue
        pieces = [(loc[i], rem[i] - rem[a], lens[i]) for i in range(a, b)]
        ops.append(_Op(0, rem[a], rem[b - 1] + lens[b - 1] - rem[a], pieces))
    return ops, n


def _region_of(group: CopyGroup, op: _Op, push: bool) -> str:
    """The copy (tensor, fragments) a failed operation belongs to, for the message."""
    target_address = op.remote if push else (op.pieces[0][0] if op.pieces else op.local)
    for copy in group.copies:
        start = int(copy["target"]["address"])
        span = int(copy["run_bytes"]) + sum((int(l["count"]) - 1) * int(l["target_stride"]) for l in copy["loops"])
        if start <= target_address < start + span:
            return (
                f"tensor {copy['tensor_id']} ({copy['source_fragment_id']} -> "
                f"{copy['target_fragment_id']})"
            )
    return "an unknown region"


class Staging:
    """A registered local buffer in two halves that staged operations are packed into:
    while one half's round is on the wire, the other's is gathered (push) or scattered
    (pull). A worker keeps one for all its updates (:class:`weight_manifest.worker.Worker`
    registers it with its tensors); :func:`execute` makes one per call otherwise."""

    def __init__(self, backend: Backend, capacity: int) -> None:
        self.half = capacity // 2
        # Touched once here, so no round pays the page faults of fresh memory.
        self.buffer = np.zeros(max(capacity, 1), dtype=np.uint8)
        self.buffer.fill(1)
        self.address = int(self.buffer.ctypes.data)
        self.backend = backend
        backend.register(self.address, max(capacity, 1))

    def base(self, round_index: int) -> int:
        """The first byte of the half that round ``round_index`` uses."""
        return self.address + (round_index % 2) * self.half

    def close(self) -> None:
        self.backend.unregister(self.address)


def _piece_span(op: _Op, pieces: list[tuple[int, int, int]]) -> _Op:
    """The staged operation reading ``pieces`` (offsets into ``op``) of ``op``."""
    first = pieces[0][1]
    end = pieces[-1][1] + pieces[-1][2]
    return _Op(0, op.remote + first, end - first, [(a, o - first, n) for a, o, n in pieces])


def _fit(op: _Op, capacity: int) -> Iterator[_Op]:
    """A staged operation cut at piece boundaries into operations of at most
    ``capacity`` staged bytes; a piece larger than that goes out unstaged."""
    if op.pieces is None or op.length <= capacity:
        yield op
        return
    chunk: list[tuple[int, int, int]] = []
    for address, offset, n in op.pieces:
        if n > capacity:
            if chunk:
                yield _piece_span(op, chunk)
                chunk = []
            yield _Op(address, op.remote + offset, n)
            continue
        if chunk and offset + n - chunk[0][1] > capacity:
            yield _piece_span(op, chunk)
            chunk = []
        chunk.append((address, offset, n))
    if chunk:
        yield _piece_span(op, chunk)


def _rounds(ops: list[_Op], capacity: int) -> Iterator[list[_Op]]:
    """The operations in rounds whose staged bytes fit one staging half (in order)."""
    batch: list[_Op] = []
    used = 0
    for whole in ops:
        for op in _fit(whole, capacity):
            if op.pieces is not None:
                if used + op.length > capacity:
                    yield batch
                    batch, used = [], 0
                used += op.length
            batch.append(op)
    if batch:
        yield batch


def operation_count(bound: BoundPlan, mode: str, stage_below: int = DEFAULT_STAGE_BELOW,
                    max_segments: int = 1 << 32) -> int:
    """The engine operations :func:`execute` would issue for every pair of ``bound`` in
    ``mode`` (a coordinator's choice between push and pull)."""
    return sum(len(_ops(pair, mode == "push", stage_below, max_segments)[0]) for pair in bound.pairs)


def execute(
    bound: BoundPlan,
    backend: Backend,
    sessions: Mapping[str, str],
    *,
    mode: str = "push",
    worker: Optional[str] = None,
    batch_segments: int = DEFAULT_BATCH_SEGMENTS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    stage_below: int = DEFAULT_STAGE_BELOW,
    staging_bytes: int = DEFAULT_STAGING_BYTES,
    max_segments: int = 1 << 32,
    staging: Optional[Staging] = None,
    changed: Optional[Changed] = None,
    source: Union[RuntimeBindingManifest, Fence, Sequence[Fence], None] = None,
    target: Union[RuntimeBindingManifest, Fence, Sequence[Fence], None] = None,
) -> UpdateReport:
    """Run the pairs of ``bound`` that ``worker`` executes in ``mode`` (every pair when
    ``worker`` is None) on ``backend``. ``sessions`` maps each remote worker id to its
    session name. With ``source`` / ``target`` (the live bindings or fences), the fences
    are checked first (:func:`check_fences`). With ``changed`` ((source worker id, device)
    -> sorted disjoint [start, end) source address ranges, a (k, 2) uint64 array), only
    those source bytes move: a delta update over the same bound plan, each changed byte
    landing where the full update would put it. Returns the report, or raises
    ``transfer_failed`` / ``transfer_session_unknown`` / ``transfer_arguments_invalid``;
    it never returns after a failed batch."""
    if mode not in ("push", "pull"):
        raise _error("transfer_arguments_invalid", f"mode must be 'push' or 'pull', not {mode!r}")
    if batch_segments < 1 or max_in_flight < 1 or staging_bytes < 0 or stage_below < 0:
        raise _error("transfer_arguments_invalid", "batch_segments and max_in_flight must be >= 1, sizes >= 0")
    if source is not None or target is not None:
        if source is None or target is None:
            raise _error("transfer_arguments_invalid", "give both source= and target= live bindings, or neither")
        check_fences(bound, source, target)
    push = mode == "push"
    pairs = [
        p for p in bound.pairs
        if worker is None or (p.source_worker_id if push else p.target_worker_id) == worker
    ]
    for pair in pairs:
        remote = pair.target_worker_id if push else pair.source_worker_id
        if remote not in sessions:
            raise _error("transfer_session_unknown", f"no session for worker {remote} (pair {pair.source_worker_id} -> {pair.target_worker_id})")
    report = UpdateReport(mode=mode)
    started = time.perf_counter()
    staged = staging is not None or staging_bytes >= 2
    read_gaps = bool(getattr(backend, "reads_gaps", False))
    lowered = [_ops(pair, push, stage_below if staged else 0, max_segments, changed, read_gaps) for pair in pairs]
    # Without a staging buffer given, one sized to what the largest pair stages (two
    # halves), within staging_bytes.
    need = max((sum(op.length for op in ops if op.pieces is not None) for ops, _ in lowered), default=0)
    own = staging is None and need > 0 and staging_bytes >= 2
    if own:
        staging = Staging(backend, min(staging_bytes, 2 * need))
    report.prepare_seconds = time.perf_counter() - started
    try:
        for pair, (ops, runs) in zip(pairs, lowered):
            report.pairs.append(_run_pair(pair, ops, runs, backend, sessions, push, batch_segments,
                                          max_in_flight, staging))
    finally:
        if own and staging is not None:
            staging.close()
    report.seconds = time.perf_counter() - started
    return report


def _run_pair(
    pair: CopyGroup,
    ops: list[_Op],
    runs: int,
    backend: Backend,
    sessions: Mapping[str, str],
    push: bool,
    batch_segments: int,
    max_in_flight: int,
    staging: Optional[Staging],
) -> PairReport:
    """One pair's operations in rounds, pipelined: round k goes on the wire before round
    k-1 is finished (pull: scattered), at most ``max_in_flight`` batches in flight."""
    started = time.perf_counter()
    session = sessions[pair.target_worker_id if push else pair.source_worker_id]
    result = PairReport(pair.source_worker_id, pair.target_worker_id, runs=runs,
                        bytes=sum(sum(p[2] for p in op.pieces) if op.pieces else op.length for op in ops),
                        wire_bytes=sum(op.length for op in ops))
    rounds = list(_rounds(ops, staging.half if staging is not None else 0))
    in_flight: deque[tuple[int, list[_Op], int]] = deque()
    outstanding = [0] * len(rounds)
    failure: list[_Op] = []

    def wait_one() -> None:
        clock = time.perf_counter()
        handle, chunk, k = in_flight.popleft()
        ok = backend.wait(handle)
        outstanding[k] -= 1
        if not ok and not failure:
            failure.append(chunk[0])
        result.wait_seconds += time.perf_counter() - clock

    def finish(k: int) -> None:
        while outstanding[k] > 0:
            wait_one()
        if not push and not failure:
            clock = time.perf_counter()
            for op in rounds[k]:
                for address, piece, n in op.pieces or ():
                    ctypes.memmove(address, op.local + piece, n)
            result.staging_seconds += time.perf_counter() - clock

    for k, round_ops in enumerate(rounds):
        clock = time.perf_counter()
        offset = 0
        for op in round_ops:
            if op.pieces is None:
                continue
            assert staging is not None
            op.local = staging.base(k) + offset
            if push:
                for address, piece, n in op.pieces:
                    ctypes.memmove(op.local + piece, address, n)
            result.staged_pieces += len(op.pieces)
            offset += op.length
        result.staging_seconds += time.perf_counter() - clock
        for first in range(0, len(round_ops), batch_segments):
            if failure:
                break
            chunk = round_ops[first : first + batch_segments]
            while len(in_flight) >= max_in_flight:
                wait_one()
            handle = backend.submit(session, push, [o.local for o in chunk], [o.remote for o in chunk],
                                    [o.length for o in chunk])
            result.batches += 1
            result.segments += len(chunk)
            if handle <= 0:
                failure.append(chunk[0])
                break
            in_flight.append((handle, chunk, k))
            outstanding[k] += 1
        if failure:
            break
        if k >= 1:
            finish(k - 1)
    # Every batch still in flight is waited for, success or not: no write may land after
    # this function has returned.
    while in_flight:
        wait_one()
    if failure:
        raise _error(
            "transfer_failed",
            f"pair {pair.source_worker_id} -> {pair.target_worker_id}: a batch failed moving "
            f"{_region_of(pair, failure[0], push)}; the update failed and no target is ready",
        )
    if rounds:
        finish(len(rounds) - 1)
    result.seconds = time.perf_counter() - started
    return result
