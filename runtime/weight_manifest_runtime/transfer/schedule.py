"""The executor's schedule of an update: which engine operations each executing worker
issues, in which order, in which staging round and batch, under which in-flight bound.

:func:`weight_manifest_runtime.transfer.execute` runs exactly this schedule (it asks
:func:`schedule` for its pairs' operations and :meth:`PairSchedule.rounds` for their
rounds and batches), and :mod:`weight_manifest_runtime.simulate` predicts the time of the same
schedule on a modelled network, so the two cannot drift apart.

- A worker runs its pairs one after another: the bound plan's order, rotated by the
  worker's position among the executing workers (the i-th of n starts i/n of the way into
  its list), so that workers sharing the same remote workers do not all start on the same
  one and queue on its link while the others idle.
- A pair's operations (:func:`.lowering.pair_operations`: runs merged, staged, a delta selected or
  packed) are cut into rounds whose staged bytes fit one staging half, and each round into
  batches of at most ``batch_segments`` operations.
- Batches are submitted in order with at most ``max_in_flight`` in flight; round k's
  batches go on the wire before round k-1 is waited for (its half is then free again).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

from weight_manifest import BoundPlan, CopyGroup
from .lowering import Changed, Operation, Relocate, pair_operations, staging_rounds
from .options import ExecuteOptions

__all__ = ["PairSchedule", "Schedule", "batches", "schedule", "staging_capacity"]


@dataclass
class PairSchedule:
    """One pair's operations as its executing worker issues them."""

    pair: CopyGroup
    #: The worker that runs the pair (push: the source, pull: the target).
    worker: str
    #: The worker on the other side (whose session the operations name).
    remote: str
    ops: list[Operation]
    #: Merged runs behind the operations (the report's ``runs``).
    runs: int

    @cached_property
    def bytes(self) -> int:
        """The tensor bytes the pair lands."""
        return sum(sum(p[2] for p in op.pieces) if op.pieces else op.length for op in self.ops)

    @cached_property
    def wire_bytes(self) -> int:
        """The bytes on the wire (a staged span may include gaps)."""
        return sum(op.length for op in self.ops)

    @cached_property
    def staged_bytes(self) -> int:
        """The bytes gathered into or scattered from the staging buffer."""
        return sum(sum(p[2] for p in op.pieces) for op in self.ops if op.pieces)

    @cached_property
    def staged_pieces(self) -> int:
        return sum(len(op.pieces) for op in self.ops if op.pieces)

    def rounds(self, half: int) -> list[list[Operation]]:
        """The operations in rounds whose staged bytes fit one staging half of ``half``
        bytes (a piece larger than that goes out unstaged)."""
        return list(staging_rounds(self.ops, half))


def batches(round_ops: Sequence[Operation], batch_segments: int) -> Iterator[list[Operation]]:
    """One round's operations in submission batches of at most ``batch_segments``."""
    for first in range(0, len(round_ops), batch_segments):
        yield list(round_ops[first: first + batch_segments])


@dataclass
class Schedule:
    """Every executing worker's pairs in order, and the bounds they run under."""

    mode: str
    pairs: list[PairSchedule]
    #: The options it was made with (its batches, its bound on batches in flight).
    options: ExecuteOptions = ExecuteOptions()
    #: Each executing worker's staging half in bytes (0: nothing staged).
    half: dict[str, int] = field(default_factory=dict)

    _counts: dict[int, tuple[int, int]] = field(default_factory=dict, repr=False)

    def counts(self, p: PairSchedule) -> tuple[int, int]:
        """How many operations and batches ``p`` submits (a staged operation larger than
        a staging half is cut into several)."""
        key = id(p)
        if key not in self._counts:
            rounds = p.rounds(self.half.get(p.worker, 0))
            self._counts[key] = (sum(len(r) for r in rounds),
                                 sum(sum(1 for _ in batches(r, self.options.batch_segments)) for r in rounds))
        return self._counts[key]

    def workers(self) -> dict[str, list[PairSchedule]]:
        """The executing workers' pairs, each list in execution order."""
        out: dict[str, list[PairSchedule]] = {}
        for p in self.pairs:
            out.setdefault(p.worker, []).append(p)
        return out

    def operations(self, worker: str) -> list[tuple[int, int, str, bool, list[tuple[int, int, bool]]]]:
        """``worker``'s batches in submission order: (pair index, round, remote worker,
        write, [(remote address, length, staged)]). What a test compares with the
        operations an executor submitted."""
        out: list[tuple[int, int, str, bool, list[tuple[int, int, bool]]]] = []
        for index, p in enumerate(self.pairs):
            if p.worker != worker:
                continue
            for k, round_ops in enumerate(p.rounds(self.half.get(worker, 0))):
                for chunk in batches(round_ops, self.options.batch_segments):
                    out.append((index, k, p.remote, self.mode == "push",
                                [(o.remote, o.length, o.pieces is not None) for o in chunk]))
        return out


def staging_capacity(pairs: Sequence[PairSchedule], staging_bytes: int) -> int:
    """The staging buffer the executor makes when none is given: sized to what the
    largest pair stages (two halves), within ``staging_bytes``; 0 when nothing is staged."""
    need = max((sum(op.length for op in p.ops if op.pieces is not None) for p in pairs), default=0)
    return min(staging_bytes, 2 * need) if need > 0 and staging_bytes >= 2 else 0


def staging_half(pairs: Sequence[PairSchedule], staging_bytes: int, given: Optional[int]) -> int:
    """The staging half the executor uses: a given buffer's, or its own's."""
    return given if given is not None else staging_capacity(pairs, staging_bytes) // 2


def schedule(bound: BoundPlan, *, mode: str = "push", worker: Optional[str] = None,
             options: ExecuteOptions = ExecuteOptions(), staged: bool = True, half: Optional[int] = None,
             changed: Optional[Changed] = None, landing: Optional[Mapping[tuple[str, str], int]] = None,
             read_gaps: bool = False, relocate: Optional[Relocate] = None) -> Schedule:
    """The operations of every pair of ``bound`` that ``worker`` runs in ``mode`` (every
    pair when None), as :func:`weight_manifest_runtime.transfer.execute` issues them under
    ``options``. ``staged``: whether a staging buffer exists (else nothing is staged); ``half``: its half in bytes
    when the caller holds one (a :class:`weight_manifest_runtime.group.Member`'s is
    ``staging_bytes // 2``), else sized as :func:`execute` sizes its own (one buffer for
    all the pairs chosen: give ``half`` to model workers that each hold their own). ``changed`` /
    ``landing``: a delta, as :func:`execute` takes them; ``read_gaps``: the backend reads
    gaps (a Store); ``relocate``: a pushing source's quantized forms (§17.8,
    :func:`.lowering.pair_operations`)."""
    push = mode == "push"
    chosen = _staggered(bound, push, worker)
    pairs: list[PairSchedule] = []
    for pair in chosen:
        here, there = ((pair.source_worker_id, pair.target_worker_id) if push
                       else (pair.target_worker_id, pair.source_worker_id))
        ops, runs = pair_operations(pair, push, options.stage_below if staged else 0, options.max_segments, changed,
                                    read_gaps, None if landing is None else landing.get((pair.source_worker_id,
                                                                                         pair.target_worker_id)),
                                    relocate if push else None)
        pairs.append(PairSchedule(pair, here, there, ops, runs))
    out = Schedule(mode, pairs, options)
    # One buffer for every pair run by one call (a worker's own, or execute's).
    h = (half if half is not None else staging_capacity(pairs, options.staging_bytes) // 2) if staged else 0
    out.half = {p.worker: h for p in pairs}
    return out


def _staggered(bound: BoundPlan, push: bool, worker: Optional[str]) -> list[CopyGroup]:
    """The pairs ``worker`` runs (every executing worker's when None), each worker's in the
    bound plan's order rotated by ``i * len // n`` for the i-th of the n executing workers
    (sorted ids): the module documentation's staggered start."""
    def runner(p: CopyGroup) -> str:
        return p.source_worker_id if push else p.target_worker_id

    executors = sorted({runner(p) for p in bound.pairs})
    position = {w: i for i, w in enumerate(executors)}
    by_worker: dict[str, list[CopyGroup]] = {}
    for p in bound.pairs:
        if worker is None or runner(p) == worker:
            by_worker.setdefault(runner(p), []).append(p)
    out: list[CopyGroup] = []
    for w, own in by_worker.items():
        shift = position[w] * len(own) // len(executors)
        out.extend(own[shift:] + own[:shift])
    return out
