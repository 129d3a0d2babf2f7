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

Fail closed: :func:`weight_manifest_runtime.transfer.check_fences` (the core's fence rule) compares the bound plan's fences with the live bindings
before the first byte; any batch whose submission or status fails raises
:class:`ManifestError` ``transfer_failed`` naming the worker pair and the region (tensor and
fragments), after waiting for every batch still in flight. Nothing here marks a target
ready: the caller does that only when :func:`execute` returned. Re-running a failed update
is safe: a copy only writes target bytes, so running it again writes the same bytes.

- **Pairs at once.** A worker runs its pairs one after another in the schedule's staggered
  order, or with ``options.concurrent_pairs`` > 1 that many at once, each with its own
  staging buffer (:func:`_run_concurrently`), so a worker whose remotes get different
  amounts keeps all its links busy.

Bounded: a pair whose batches make no
progress for ``stall_seconds`` fails with ``transfer_timeout`` naming the pair; its
batches still in flight are abandoned (the engine may yet deliver them once the link is
back, so the pair's target bytes are unknown: it is not ready). ``progress`` is called
with each pair's bytes done after every batch.

Backends: :class:`EngineBackend` drives a Mooncake ``TransferEngine``; :class:`LocalBackend`
copies within one process (colocated trainer and rollout, tests, the baseline). Both refuse
any segment outside the memory registered with them, which is what keeps a bad binding
from becoming a stray write.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from weight_manifest import BoundPlan, CopyGroup, RuntimeBindingManifest
from weight_manifest.errors import manifest_error as _error
from .backends import Backend
from .fences import Fence, check_fences
from .lowering import Changed, Staging, Operation, region_of
from .options import ExecuteOptions
from .reports import PairReport, UpdateReport
from .schedule import PairSchedule, batches, schedule, staging_capacity

if TYPE_CHECKING:
    from .quantize import QuantizedForms

__all__ = ["Progress", "execute", "operation_count"]

#: Staging buffers of timed-out updates, kept alive for the batches abandoned in flight.
_ABANDONED: list[Staging] = []

#: ``progress(source_worker_id, target_worker_id, bytes_done, bytes_total)``.
Progress = Callable[[str, str, int, int], None]


def operation_count(bound: BoundPlan, mode: str, options: ExecuteOptions = ExecuteOptions()) -> int:
    """The engine operations :func:`execute` would issue for every pair of ``bound`` in
    ``mode`` under ``options`` (a coordinator's choice between push and pull)."""
    return sum(len(p.ops) for p in schedule(bound, mode=mode, options=options).pairs)


def execute(
    bound: BoundPlan,
    backend: Backend,
    sessions: Mapping[str, str],
    *,
    mode: str = "push",
    worker: Optional[str] = None,
    options: ExecuteOptions = ExecuteOptions(),
    staging: Optional[Staging] = None,
    changed: Optional[Changed] = None,
    landing: Optional[Mapping[tuple[str, str], int]] = None,
    source: Union[RuntimeBindingManifest, Fence, Sequence[Fence], None] = None,
    target: Union[RuntimeBindingManifest, Fence, Sequence[Fence], None] = None,
    progress: Optional[Progress] = None,
    on_pair: Optional[Callable[[CopyGroup], None]] = None,
    quantized: Optional[QuantizedForms] = None,
) -> UpdateReport:
    """Run the pairs of ``bound`` that ``worker`` executes in ``mode`` (every pair when
    ``worker`` is None) on ``backend`` under ``options`` (batches, staging, the stall
    bound: :class:`ExecuteOptions`). ``sessions`` maps each remote worker id to its
    session name. With ``source`` / ``target`` (the live bindings or fences), the fences
    are checked first (:func:`check_fences`). With ``changed`` ((source worker id, device)
    -> sorted disjoint [start, end) source address ranges, a (k, 2) uint64 array), only
    those source bytes move: a delta update over the same bound plan, each changed byte
    landing where the full update would put it. With ``landing`` too ((source worker,
    target worker) -> the address of the pair's packed area on its passive side, from
    :meth:`weight_manifest_runtime.transfer.Landing.prepare`), the delta's pieces shorter than
    ``options.stage_below`` move packed through staging (:mod:`.delta`). Returns the report, or raises
    ``transfer_failed`` / ``transfer_session_unknown`` / ``transfer_arguments_invalid``;
    it never returns after a failed batch. ``on_pair(pair)`` is called when a pair has
    landed every byte (a pulling target hashes it then: :mod:`.landed`). Copies carrying a
    ``transform`` (contract §17.8) run only pushed by their source with ``quantized`` (its
    :class:`QuantizedForms`): a thread quantizes the blocks of each pair's copies in order
    while the copies already quantized are on the wire, and each batch (and each round's
    gather of staged pieces) waits only for its own copies;
    otherwise, or in a delta, ``plan_bind_transform_unsupported``."""
    if mode not in ("push", "pull"):
        raise _error("transfer_arguments_invalid", f"mode must be 'push' or 'pull', not {mode!r}")
    if source is not None or target is not None:
        if source is None or target is None:
            raise _error("transfer_arguments_invalid", "give both source= and target= live bindings, or neither")
        check_fences(bound, source, target)
    push = mode == "push"
    pairs = [
        p for p in bound.pairs
        if worker is None or (p.source_worker_id if push else p.target_worker_id) == worker
    ]
    # A transformed pair's copies, by (source worker, target worker).
    copies: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pair in pairs:
        if pair.transformed:
            copies[(pair.source_worker_id, pair.target_worker_id)] = pair.copies
            why = ("pulled, a target cannot read a form its source has not computed" if not push else
                   "a delta of changed source bytes cannot say which blocks changed" if changed is not None else
                   "this source was given no bfloat16 tensors to quantize" if quantized is None else None)
            if why is not None:
                copy = next(c for c in copies[(pair.source_worker_id, pair.target_worker_id)] if "transform" in c)
                raise _error("plan_bind_transform_unsupported",
                             f"the bound plan's copy of tensor {copy['tensor_id']} carries the transform "
                             f"{copy['transform']}: its source computes its bytes, and {why}")
        remote = pair.target_worker_id if push else pair.source_worker_id
        if remote not in sessions:
            raise _error("transfer_session_unknown", f"no session for worker {remote} (pair {pair.source_worker_id} -> {pair.target_worker_id})")
    report = UpdateReport(mode=mode)
    started = time.perf_counter()
    staged = staging is not None or options.staging_bytes >= 2
    read_gaps = bool(getattr(backend, "reads_gaps", False))
    if landing is not None and (changed is None or not staged or options.stage_below == 0):
        raise _error("transfer_arguments_invalid", "a landing area needs a delta (changed=) and staging")
    forms = quantized

    def key(group: CopyGroup) -> tuple[str, str]:
        return (group.source_worker_id, group.target_worker_id)

    def relocate(group: CopyGroup) -> Optional[np.ndarray]:
        bases = None if forms is None or key(group) not in copies else forms.bases(copies[key(group)])
        return None if bases is None else np.array(bases, dtype=np.uint64)

    plan = schedule(bound, mode=mode, worker=worker, options=options, staged=staged,
                    half=None if staging is None else staging.half, changed=changed, landing=landing,
                    read_gaps=read_gaps, relocate=relocate if copies else None)
    quantizer = None if forms is None or not copies else _Quantizer(forms, [copies.get(key(p.pair), []) for p in plan.pairs])
    # Without a staging buffer given, one sized to what the largest pair stages (two
    # halves), within staging_bytes.
    if options.concurrent_pairs > 1 and len(plan.pairs) > 1 and quantizer is None and landing is None:
        report.prepare_seconds = time.perf_counter() - started
        report.pairs.extend(_run_concurrently(plan.pairs, backend, sessions, push, options, progress, on_pair))
        report.seconds = time.perf_counter() - started
        return report
    capacity = staging_capacity(plan.pairs, options.staging_bytes)
    own = staging is None and capacity > 0
    if own:
        staging = Staging(backend, capacity)
    report.prepare_seconds = time.perf_counter() - started
    try:
        for index, scheduled in enumerate(plan.pairs):
            ready = (None if quantizer is None or key(scheduled.pair) not in copies
                     else (lambda upto, i=index: quantizer.wait(i, upto)))
            report.pairs.append(_run_pair(scheduled, backend, sessions, push, options, staging, progress, ready))
            if on_pair is not None:
                on_pair(scheduled.pair)
    except BaseException as error:
        if quantizer is not None:
            quantizer.stop()
        if own and staging is not None and getattr(error, "code", None) == "transfer_timeout":
            # Batches were abandoned in flight and may still read or write the buffer:
            # it stays registered and alive.
            _ABANDONED.append(staging)
            own = False
        raise
    finally:
        if own and staging is not None:
            staging.close()
    report.seconds = time.perf_counter() - started
    return report


def _run_concurrently(pairs: Sequence[PairSchedule], backend: Backend, sessions: Mapping[str, str], push: bool,
                      options: ExecuteOptions, progress: Optional[Progress],
                      on_pair: Optional[Callable[[CopyGroup], None]]) -> list[PairReport]:
    """Up to ``options.concurrent_pairs`` pairs at once, each with a staging buffer of its
    own sized to what it stages (a buffer given to :func:`execute` is left alone): a worker
    whose remotes differ in speed or in what they are sent keeps every link it uses busy.
    The buffers are registered before the first pair starts and unregistered after the
    last ends: the engine's registry never changes under a batch in flight. Every pair runs
    to its end; the first failure (in the schedule's order) is raised after all ended."""
    lock = threading.Lock()
    stagings: list[Optional[Staging]] = []
    try:
        for scheduled in pairs:
            capacity = staging_capacity([scheduled], options.staging_bytes)
            stagings.append(Staging(backend, capacity) if capacity > 0 else None)
    except BaseException:
        for made in stagings:
            if made is not None:
                made.close()
        raise

    def locked_progress(*args: Any) -> None:
        assert progress is not None
        with lock:
            progress(*args)

    def run(index: int) -> PairReport:
        scheduled = pairs[index]
        result = _run_pair(scheduled, backend, sessions, push, options, stagings[index],
                           locked_progress if progress is not None else None)
        if on_pair is not None:
            with lock:
                on_pair(scheduled.pair)
        return result

    errors: list[Optional[BaseException]] = []
    try:
        with ThreadPoolExecutor(max_workers=min(options.concurrent_pairs, len(pairs)),
                                thread_name_prefix="transfer-pair") as pool:
            futures = [pool.submit(run, index) for index in range(len(pairs))]
            wait(futures)
        errors = [f.exception() for f in futures]
    finally:
        timed_out = any(getattr(e, "code", None) == "transfer_timeout" for e in errors)
        for made in stagings:
            if made is None:
                continue
            if timed_out:
                _ABANDONED.append(made)  # batches abandoned in flight may still use it
            else:
                made.close()
    for error in errors:
        if error is not None:
            raise error
    return [future.result() for future in futures]


class _Quantizer:
    """A thread quantizing each pair's transformed copies in order (the pairs in the
    schedule's order), one after another, while the executor sends what is ready."""

    def __init__(self, forms: QuantizedForms, copies: list[list[dict[str, Any]]]) -> None:
        self.forms, self.copies = forms, copies
        self.done = (-1, -1)  # the last (pair index, copy index) quantized
        self.error: Optional[BaseException] = None
        self.stopped = False
        self.changed = threading.Condition()
        forms.reset()
        threading.Thread(target=self._run, daemon=True, name="quantize").start()

    def _run(self) -> None:
        try:
            for i, pair in enumerate(self.copies):
                for j, copy in enumerate(pair):
                    if self.stopped:
                        return
                    self.forms.quantize(copy)
                    with self.changed:
                        self.done = (i, j)
                        self.changed.notify_all()
                with self.changed:
                    self.done = (i, len(pair))
                    self.changed.notify_all()
        except BaseException as error:  # noqa: BLE001 - handed to the sending thread
            with self.changed:
                self.error = error
                self.changed.notify_all()

    def wait(self, pair: int, upto: int) -> None:
        """Until copy ``upto`` of pair ``pair`` (and everything before it) is quantized."""
        with self.changed:
            self.changed.wait_for(lambda: self.error is not None or self.done >= (pair, upto))
            if self.error is not None:
                raise self.error

    def stop(self) -> None:
        self.stopped = True


def _wait_bounded(backend: Backend, handle: int, seconds: float) -> Optional[bool]:
    """``backend.wait(handle)``, or None when it has not returned within ``seconds``: the
    wait goes on in a daemon thread, abandoned (an engine's status call has no bound)."""
    verdict: list[bool] = []
    finished = threading.Event()

    def wait() -> None:
        try:
            verdict.append(backend.wait(handle))
        except Exception:  # noqa: BLE001 - a failed wait is a failed batch
            verdict.append(False)
        finished.set()

    threading.Thread(target=wait, daemon=True, name="transfer-wait").start()
    if not finished.wait(max(seconds, 0.0)):
        return None
    return verdict[0]


def _run_pair(
    scheduled: PairSchedule,
    backend: Backend,
    sessions: Mapping[str, str],
    push: bool,
    options: ExecuteOptions,
    staging: Optional[Staging],
    progress: Optional[Progress] = None,
    ready: Optional[Callable[[int], None]] = None,
) -> PairReport:
    """One pair's operations in rounds, pipelined: round k goes on the wire before round
    k-1 is finished (pull: scattered), at most ``max_in_flight`` batches in flight."""
    batch_segments, max_in_flight, stall_seconds = options.batch_segments, options.max_in_flight, options.stall_seconds
    started = time.perf_counter()
    pair = scheduled.pair
    session = sessions[scheduled.remote]
    result = PairReport(pair.source_worker_id, pair.target_worker_id, runs=scheduled.runs,
                        bytes=scheduled.bytes, wire_bytes=scheduled.wire_bytes)
    rounds = scheduled.rounds(staging.half if staging is not None else 0)
    in_flight: deque[tuple[int, list[Operation], int]] = deque()
    outstanding = [0] * len(rounds)
    failure: list[Operation] = []

    landed = [0]  # bytes landed
    last = [time.monotonic()]  # when the last batch ended

    def wait_one() -> None:
        clock = time.perf_counter()
        handle, chunk, k = in_flight[0]
        ok = _wait_bounded(backend, handle, last[0] + stall_seconds - time.monotonic())
        if ok is None:
            raise _error(
                "transfer_timeout",
                f"pair {pair.source_worker_id} -> {pair.target_worker_id}: no batch completed in "
                f"{stall_seconds:g} s ({landed[0]} of {result.bytes} bytes landed); the update failed "
                "and no target is ready",
            )
        in_flight.popleft()
        outstanding[k] -= 1
        last[0] = time.monotonic()
        if not ok and not failure:
            failure.append(chunk[0])
        if ok:
            landed[0] += sum(sum(p[2] for p in o.pieces) if o.pieces else o.length for o in chunk)
            if progress is not None:
                progress(pair.source_worker_id, pair.target_worker_id, landed[0], result.bytes)
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
        staged_ops = [op for op in round_ops if op.pieces is not None]
        if ready is not None and staged_ops:
            # The copies its staged operations gather must be quantized first.
            ready(max(op.upto for op in staged_ops))
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
        for chunk in batches(round_ops, batch_segments):
            if failure:
                break
            while len(in_flight) >= max_in_flight:
                wait_one()
            if ready is not None:
                # A batch goes out once its copies are quantized, while later ones are.
                ready(max(o.upto for o in chunk))
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
            f"{region_of(pair, failure[0], push)}; the update failed and no target is ready",
        )
    if rounds:
        finish(len(rounds) - 1)
    result.seconds = time.perf_counter() - started
    return result
