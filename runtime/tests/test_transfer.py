"""weight_manifest_runtime.transfer on the local backend: a reshard executed in one process.

The oracle is numpy: every global tensor is random bytes, each rank holds the slice its
box selects, and after an update each target must equal the slice of the same global
tensor (computed here, not by the planner). Failures are injected with a backend wrapper
and the checks are that nothing is reported, every batch was waited for, and untouched
targets stay untouched."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Optional

import numpy as np
import pytest

import lifecycle_world

import weight_manifest as wm
from weight_manifest import live
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Side
from weight_manifest_runtime.transfer.schedule import schedule

RNG = np.random.default_rng(7)


def descriptor(name: str, shape: tuple[int, ...], split: Optional[int]) -> wm.TensorDescriptor:
    return wm.TensorDescriptor(tensor_id=name, global_shape=shape, dtype="float32", itemsize=4,
                               partition_dim=split, layout_fingerprint="test:v1")


# name -> (global shape, split dim over tp or None, pipeline layer or None)
MODEL: dict[str, tuple[tuple[int, ...], Optional[int], int]] = {
    "qkv": ((48, 16), 0, 0),
    "out": ((16, 16), 1, 0),
    "up": ((64, 16), 0, 1),
    "down": ((16, 64), 1, 1),
    "norm": ((16,), None, 1),
}
GLOBAL = {n: RNG.integers(0, 2**32, size=s, dtype=np.uint32).view(np.float32) for n, (s, _, _) in MODEL.items()}


def box(name: str, tp: int, t: int) -> tuple[list[int], tuple[slice, ...]]:
    return lifecycle_world.box(MODEL, name, tp, t)


class Instance:
    """One side: one worker per (dp, pp, tp) rank holding its slices (filled or zero)."""

    def __init__(self, prefix: str, tp: int, pp: int, dp: int = 1, fill: bool = True,
                 generation: int = 1, lease: str = "lease-1") -> None:
        self.workers: dict[str, dict[str, np.ndarray]] = {}
        self.boxes: dict[tuple[str, str], tuple[slice, ...]] = {}
        self.descriptors: dict[str, dict[str, wm.TensorDescriptor]] = {}
        self.offsets: dict[str, dict[str, list[int]]] = {}
        inventories: list[dict[str, Any]] = []
        for d in range(dp):
            for p in range(pp):
                for t in range(tp):
                    rank = wm.ParallelRank(dp=d, pp=p, tp=t)
                    worker = f"{prefix}-d{d}p{p}t{t}"
                    held, descriptors, offsets = {}, {}, {}
                    for name, (shape, split, layer) in MODEL.items():
                        if layer * pp // 2 != p:
                            continue
                        offset, index = box(name, tp, t)
                        data = GLOBAL[name][index]
                        held[name] = np.ascontiguousarray(data).copy() if fill else np.zeros(data.shape, np.float32)
                        descriptors[name] = descriptor(name, shape, split)
                        offsets[name] = offset
                        self.boxes[(worker, name)] = index
                    self.workers[worker] = held
                    self.descriptors[worker], self.offsets[worker] = descriptors, offsets
                    inventories.append(live.runtime_inventory(
                        held, worker_id=worker, endpoint=worker, instance_id=prefix, lease_id=lease,
                        generation=generation, rank=rank, descriptors=descriptors, offsets=offsets,
                        model_id="model", revision="r1"))
        self.inventories = inventories
        self.side = Side(inventories)

    def register(self, backend: transfer.Backend) -> None:
        for held in self.workers.values():
            for tensor in held.values():
                backend.register(int(tensor.ctypes.data), tensor.nbytes)

    def wrong(self) -> list[str]:
        """The (worker, tensor) pairs whose bytes are not the global tensor's slice."""
        return [
            f"{w}/{n}" for w, held in self.workers.items() for n, t in held.items()
            if not np.array_equal(t.view(np.uint32), GLOBAL[n][self.boxes[(w, n)]].view(np.uint32))
        ]

    def untouched(self) -> bool:
        return all(not t.view(np.uint32).any() for held in self.workers.values() for t in held.values())


def update(source: Instance, target: Instance) -> tuple[wm.BoundPlan, transfer.LocalBackend, dict[str, str]]:
    reshard = wm.plan(source.side.placement, target.side.placement)
    bound = wm.bind_plan(reshard, source.side.binding, target.side.binding,
                         source_generation=source.side.binding.generation,
                         target_generation=target.side.binding.generation)
    backend = transfer.LocalBackend()
    source.register(backend)
    target.register(backend)
    sessions = {w: w for w in [*source.workers, *target.workers]}
    return bound, backend, sessions


LAYOUTS = [
    ((2, 1, 1), (1, 1, 1)),  # TP2 -> TP1: dim-0 and dim-1 splits merge
    ((1, 1, 1), (2, 1, 1)),  # TP1 -> TP2
    ((4, 2, 1), (2, 1, 1)),  # TP4/PP2 -> TP2
    ((2, 1, 2), (1, 2, 1)),  # DP replicas -> PP2
    ((2, 2, 1), (4, 1, 2)),  # to DP2: each replica filled
]


@pytest.mark.parametrize("mode", ["push", "pull"])
@pytest.mark.parametrize("stage_below", [0, transfer.DEFAULT_STAGE_BELOW])
@pytest.mark.parametrize("layouts", LAYOUTS, ids=lambda l: f"{l[0]}->{l[1]}")
def test_every_target_byte_is_the_global_tensors(mode: str, stage_below: int, layouts: Any) -> None:
    (stp, spp, sdp), (ttp, tpp, tdp) = layouts
    source = Instance("src", stp, spp, sdp)
    target = Instance("dst", ttp, tpp, tdp, fill=False)
    bound, backend, sessions = update(source, target)
    report = transfer.execute(bound, backend, sessions, mode=mode, options=transfer.ExecuteOptions(stage_below=stage_below),
                              source=source.side.binding, target=target.side.binding)
    assert target.wrong() == []
    assert report.bytes == sum(t.nbytes for held in target.workers.values() for t in held.values())
    assert sum(p.bytes for p in report.pairs) == sum(p.bytes for p in bound.pairs)
    # Running the same update again is safe: the same bytes land again.
    transfer.execute(bound, backend, sessions, mode=mode, options=transfer.ExecuteOptions(stage_below=stage_below))
    assert target.wrong() == []


def test_runs_merge_and_staging_cuts_operations() -> None:
    """TP2 -> TP1: a dim-0 split is one run per region; a dim-1 split of R rows costs R
    runs, which staging turns into one operation per remote-contiguous run."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    plain = transfer.execute(bound, backend, sessions, mode="pull", options=transfer.ExecuteOptions(stage_below=0))
    rows = MODEL["out"][0][0] + MODEL["down"][0][0]
    # Brute force: the regions of dim-0 and replicated tensors are one run each; a dim-1
    # tensor's region is one run per row (2 sources).
    dim0 = sum(1 for n, (_, split, _) in MODEL.items() if split != 1)
    assert plain.segments == sum(p.runs for p in plain.pairs)
    assert plain.segments >= 2 * rows
    staged = transfer.execute(bound, backend, sessions, mode="pull")
    assert staged.segments < plain.segments and staged.segments <= 2 * (dim0 + 2)
    assert sum(p.staged_pieces for p in staged.pairs) >= 2 * rows
    assert target.wrong() == []
    assert transfer.operation_count(bound, "pull") == staged.segments


class Faulty(transfer.LocalBackend):
    """Fails the batch numbered ``fail`` (1-based) at submission or at its status, and
    records the batches in flight and the bytes of those that succeeded."""

    def __init__(self, fail: int = 0, at: str = "wait") -> None:
        super().__init__()
        self.fail, self.at = fail, at
        self.count = 0
        self.open: set[int] = set()
        self.max_open = 0
        self.sizes: list[int] = []
        self.bytes: dict[int, int] = {}
        self.landed = 0

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        self.count += 1
        self.sizes.append(len(lengths))
        if self.count == self.fail and self.at == "submit":
            return 0
        handle = super().submit(session, write, local, remote, lengths)
        if self.count == self.fail:
            self._done[handle] = False
        self.open.add(handle)
        self.max_open = max(self.max_open, len(self.open))
        self.bytes[handle] = sum(lengths)
        return handle

    def wait(self, handle: int) -> bool:
        self.open.discard(handle)
        ok = super().wait(handle)
        self.landed += self.bytes.pop(handle, 0) if ok else 0
        return ok


def failing_update(fail: int, at: str, **options: Any) -> tuple[Instance, Instance, wm.BoundPlan, Faulty, dict[str, str]]:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, sessions = update(source, target)
    backend = Faulty(fail, at)
    source.register(backend)
    target.register(backend)
    return source, target, bound, backend, sessions


@pytest.mark.parametrize("at", ["wait", "submit"])
@pytest.mark.parametrize("fail", [1, 3, 10**9])
def test_a_failed_batch_fails_the_update_and_a_retry_works(at: str, fail: int) -> None:
    source, target, bound, backend, sessions = failing_update(fail, at)
    options: dict[str, Any] = dict(mode="push", options=transfer.ExecuteOptions(stage_below=0, batch_segments=4, max_in_flight=2))
    if fail == 10**9:
        # The last batch fails: nothing may report success after it.
        counting = Faulty()
        source.register(counting)
        target.register(counting)
        transfer.execute(bound, counting, sessions, **options)
        backend.fail = counting.count
        for tensor in target.workers["dst-d0p0t0"].values():
            tensor.fill(0)
    done: dict[tuple[str, str], int] = {}
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, progress=lambda s, t, n, total: done.update({(s, t): n}),
                         **options)
    # Each pair's progress counts only the bytes of its batches that succeeded.
    assert sum(done.values()) == backend.landed
    error = caught.value
    assert error.code == "transfer_failed", error
    assert "src-d0p0t" in str(error) and "-> dst-d0p0t0" in str(error) and "tensor " in str(error)
    assert not backend.open, "a batch was left in flight"
    if at == "submit":
        assert backend.count == backend.fail, "a batch was submitted after a failed submission"
    else:
        # At most the batches already in flight, and the one waited for before it, follow.
        assert backend.count <= backend.fail + 2, "batches were submitted after a failed one"
    assert backend.max_open <= 2 and max(backend.sizes) <= 4
    # The retry on a healthy backend completes the update.
    healthy = transfer.LocalBackend()
    source.register(healthy)
    target.register(healthy)
    transfer.execute(bound, healthy, sessions, mode="push")
    assert target.wrong() == []


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_unregistered_memory_fails_the_batch_and_writes_nothing_outside(mode: str) -> None:
    """The last 8 bytes of the target's ``down`` are not registered: the batch writing
    them fails (push: the remote side's check; pull: the local side's) and those bytes
    stay zero."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, sessions = update(source, target)
    backend = transfer.LocalBackend()
    source.register(backend)
    held = target.workers["dst-d0p0t0"]
    for name, tensor in held.items():
        backend.register(int(tensor.ctypes.data), tensor.nbytes - (8 if name == "down" else 0))
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, mode=mode, options=transfer.ExecuteOptions(stage_below=0, batch_segments=1))
    assert caught.value.code == "transfer_failed"
    # down (16, 64) is split on dim 1: its last 8 bytes (row 15, columns 62-63) come from
    # the second source.
    assert str(caught.value).startswith("pair src-d0p0t1 -> dst-d0p0t0: a batch failed moving tensor down")
    assert not held["down"].view(np.uint8).reshape(-1)[-8:].any(), "a byte outside the registered memory was written"


def test_a_batch_of_mismatched_lists_fails() -> None:
    backend = transfer.LocalBackend()
    buffer = np.zeros(16, dtype=np.uint8)
    backend.register(int(buffer.ctypes.data), 16)
    address = int(buffer.ctypes.data)
    assert backend.wait(backend.submit("s", True, [address], [address + 8], [4])) is True
    assert backend.wait(backend.submit("s", True, [address, address], [address + 8], [4, 4])) is False
    assert backend.wait(backend.submit("s", True, [address], [address + 8], [4, 4])) is False


def test_the_local_backend_serves_batches_and_registrations_from_many_threads() -> None:
    # Concurrent pairs submit, wait and (their staging) register on threads of their own:
    # every batch gets a handle of its own and a true status, whatever the interleaving.
    import sys

    backend = transfer.LocalBackend()
    buffer = np.zeros(64, dtype=np.uint8)
    address = int(buffer.ctypes.data)
    backend.register(address, 64)
    failed: list[int] = []
    handles: list[int] = []

    def batches() -> None:
        mine = [backend.submit("s", True, [address], [address + 32], [8]) for _ in range(10000)]
        handles.extend(mine)
        failed.extend(h for h in mine if backend.wait(h) is not True)

    def registrations() -> None:
        for _ in range(10000):
            spare = np.zeros(8, dtype=np.uint8)
            backend.register(int(spare.ctypes.data), 8)
            backend.unregister(int(spare.ctypes.data))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show at once
    try:
        threads = [threading.Thread(target=batches) for _ in range(4)] + [threading.Thread(target=registrations) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(set(handles)) == len(handles) == 4 * 10000
    assert failed == []


class FakeEngine:
    """The calls of Mooncake's TransferEngine that EngineBackend makes, answering as
    upstream documents them: register 0 or an error, a batch id (<= 0: not started), a
    status (0: every segment done)."""

    def __init__(self, register: int = 0, status: int = 0) -> None:
        self.register, self.status, self.asked = register, status, 0

    def register_memory(self, address: int, length: int) -> int:
        return self.register

    def get_batch_transfer_status(self, handles: list[int]) -> int:
        self.asked += 1
        return self.status


def test_the_engine_backend_reads_statuses_as_upstream_defines_them() -> None:
    assert transfer.EngineBackend(FakeEngine(status=0)).wait(7) is True
    assert transfer.EngineBackend(FakeEngine(status=1)).wait(7) is False
    assert transfer.EngineBackend(FakeEngine(status=-1)).wait(7) is False
    idle = FakeEngine(status=0)
    assert transfer.EngineBackend(idle).wait(0) is False and transfer.EngineBackend(idle).wait(-1) is False
    assert idle.asked == 0, "a batch that never started has no status to ask for"
    with pytest.raises(wm.ManifestError) as caught:
        transfer.EngineBackend(FakeEngine(register=-1)).register(4096, 8)
    assert caught.value.code == "transfer_failed"


class RaisingWait(transfer.LocalBackend):
    """Copies, but asking for the status of batch ``at`` raises (an engine error)."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.count = at, 0

    def wait(self, handle: int) -> bool:
        self.count += 1
        if self.count == self.at:
            super().wait(handle)
            raise RuntimeError("the status call failed")
        return super().wait(handle)


def test_a_status_call_that_raises_is_a_failed_batch() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, sessions = update(source, target)
    backend = RaisingWait(at=2)
    source.register(backend)
    target.register(backend)
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, mode="push", options=transfer.ExecuteOptions(stage_below=0, batch_segments=4))
    assert caught.value.code == "transfer_failed"


FENCES: list[tuple[str, Callable[[], Instance]]] = [
    ("generation", lambda: Instance("dst", 1, 1, fill=False, generation=2)),
    ("lease_id", lambda: Instance("dst", 1, 1, fill=False, lease="lease-2")),
]


@pytest.mark.parametrize("member,changed", FENCES, ids=[f[0] for f in FENCES])
def test_a_changed_binding_stops_the_update_before_its_first_byte(member: str, changed: Callable[[], Instance]) -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    now = changed()
    now.register(backend)
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, source=source.side.binding, target=now.side.binding)
    assert caught.value.code == "transfer_fence_mismatch"
    assert caught.value.path == f"/target/{member}"
    assert now.untouched() and target.untouched()


def test_a_changed_source_binding_stops_the_update_before_its_first_byte() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    now = Instance("src", 2, 1, generation=2)
    now.register(backend)
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, source=now.side.binding, target=target.side.binding)
    assert caught.value.code == "transfer_fence_mismatch"
    assert caught.value.path == "/source/generation"
    assert target.untouched()


CHANGED = {
    "placement_id": "sha256:" + "e" * 64,
    "placement_digest": "sha256:" + "d" * 64,
    "instance_id": "restarted",
    "lease_id": "lease-9",
    "generation": 9,
}


@pytest.mark.parametrize("side", ["source", "target"])
@pytest.mark.parametrize("member", list(CHANGED))
def test_each_fence_member_of_each_side_is_compared(side: str, member: str) -> None:
    """One member of one side's fence changed, everything else as bound: the contract's
    rule (§17.7) names exactly that member of that side."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, _ = update(source, target)
    fences = {"source": transfer.fence_of(source.side.binding), "target": transfer.fence_of(target.side.binding)}
    transfer.check_fences(bound, fences["source"], fences["target"])
    fences[side] = {**fences[side], member: CHANGED[member]}
    with pytest.raises(wm.ManifestError) as caught:
        transfer.check_fences(bound, fences["source"], fences["target"])
    assert caught.value.code == "transfer_fence_mismatch"
    assert caught.value.path == f"/{side}/{member}"


def test_another_placement_is_a_fence_mismatch() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    other = Instance("dst", 2, 1, fill=False)  # same instance and lease, another layout
    with pytest.raises(wm.ManifestError) as caught:
        transfer.check_fences(bound, source.side.binding, other.side.binding)
    assert caught.value.code == "transfer_fence_mismatch"
    assert caught.value.path == "/target/placement_id"
    # Per-worker fences (what each worker reports) are checked one by one.
    fence = {**transfer.fence_of(target.side.binding), "worker_id": "dst-d0p0t0"}
    transfer.check_fences(bound, [transfer.fence_of(source.side.binding)], [fence])
    with pytest.raises(wm.ManifestError) as caught:
        transfer.check_fences(bound, source.side.binding, [fence, {**fence, "generation": 9}])
    assert "dst-d0p0t0" in str(caught.value)


def test_arguments_and_sessions_are_checked() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    for options in ({"mode": "both"}, {"source": source.side.binding}):
        with pytest.raises(wm.ManifestError) as caught:
            transfer.execute(bound, backend, sessions, **options)
        assert caught.value.code == "transfer_arguments_invalid", options
    for bad in ({"batch_segments": 0}, {"max_in_flight": 0}):
        with pytest.raises(wm.ManifestError) as caught:
            transfer.execute(bound, backend, sessions, options=transfer.ExecuteOptions(**bad))
        assert (caught.value.code, caught.value.path) == ("transfer_arguments_invalid", f"/{next(iter(bad))}")
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, {"src-d0p0t0": "x"}, mode="push")
    assert caught.value.code == "transfer_session_unknown"
    assert "dst-d0p0t0" in str(caught.value)
    assert target.untouched()


def test_a_worker_runs_only_its_own_pairs() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    report = transfer.execute(bound, backend, sessions, mode="push", worker="src-d0p0t1")
    assert {p.source_worker_id for p in report.pairs} == {"src-d0p0t1"}
    assert target.wrong() and not target.untouched()
    transfer.execute(bound, backend, sessions, mode="push", worker="src-d0p0t0")
    assert target.wrong() == []


def test_a_delta_moves_only_the_changed_source_bytes() -> None:
    """Changed source ranges (a delta) move exactly those bytes to where the full update
    puts them: every target byte is then the new global tensor's, the others untouched."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, sessions = update(source, target)
    transfer.execute(bound, backend, sessions, mode="push")
    assert target.wrong() == []
    # Change a few words of two source tensors (in place) and name their byte ranges.
    changed: dict[tuple[str, str], Any] = {}
    moved = 0
    saved = {name: GLOBAL[name].copy() for name in ("down", "qkv")}
    for worker, name, words in (("src-d0p0t0", "down", [3, 4, 5, 40]), ("src-d0p0t1", "qkv", [0, 100])):
        tensor = source.workers[worker][name]
        flat = tensor.view(np.uint32).reshape(-1)
        base = int(tensor.ctypes.data)
        for w in words:
            flat[w] ^= 0xFFFF
        ranges = np.array(sorted({(base + 4 * w, base + 4 * w + 4) for w in words}), dtype=np.uint64)
        # Adjacent ranges merged, as the delta's producer gives them.
        merged: list[list[int]] = []
        for a, b in ranges.tolist():
            if merged and merged[-1][1] == a:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        changed[(worker, "cpu")] = np.array(merged, dtype=np.uint64)
        moved += 4 * len(words)
        GLOBAL[name][source.boxes[(worker, name)]] = tensor  # the new global tensor
    assert target.wrong() != []
    try:
        for mode in ("push", "pull"):
            report = transfer.execute(bound, backend, sessions, mode=mode, changed=changed)
            assert report.bytes == moved, mode
            assert target.wrong() == []
        # Nothing changed: nothing moves.
        assert transfer.execute(bound, backend, sessions, changed={}).bytes == 0
    finally:
        GLOBAL.update(saved)


class GapReading(transfer.LocalBackend):
    """A local backend whose remote side reads any span of its registered memory (as a
    Store object is read): the executor may then read strided runs as whole spans."""

    reads_gaps = True


def packed_tp1(fill: bool) -> tuple[Side, dict[str, np.ndarray], np.ndarray]:
    """TP1 holding every tensor as a view of one buffer (a Store object's layout)."""
    sizes = {n: int(np.prod(s)) for n, (s, _, _) in MODEL.items()}
    buffer = np.zeros(sum(sizes.values()), dtype=np.float32)
    held, offset = {}, 0
    for name, (shape, _, _) in MODEL.items():
        view = buffer[offset:offset + sizes[name]].reshape(shape)
        if fill:
            view[...] = GLOBAL[name]
        held[name] = view
        offset += sizes[name]
    inventory = live.runtime_inventory(
        held, worker_id="packed", endpoint="packed", instance_id="packed", lease_id="l", generation=1,
        rank=wm.ParallelRank(), descriptors={n: descriptor(n, s, sp) for n, (s, sp, _) in MODEL.items()},
        offsets={n: [0] * len(s) for n, (s, _, _) in MODEL.items()}, model_id="model", revision="r1")
    return Side([inventory]), held, buffer


def test_gap_reads_turn_strided_remote_runs_into_few_spans() -> None:
    """TP1 -> TP2 pull: each target row slice of a dim-1 split is every other half row of
    the source, strided on the remote side; a gap-reading backend reads each whole span
    once (at most twice the bytes) and scatters it, instead of one operation per row."""
    source, _, buffer = packed_tp1(True)
    target = Instance("dst", 2, 1, fill=False)
    reshard = wm.plan(source.placement, target.side.placement)
    bound = wm.bind_plan(reshard, source.binding, target.side.binding, source_generation=1, target_generation=1)
    sessions = {w: w for w in ["packed", *target.workers]}
    plain_backend = transfer.LocalBackend()
    plain_backend.register(int(buffer.ctypes.data), buffer.nbytes)
    target.register(plain_backend)
    plain = transfer.execute(bound, plain_backend, sessions, mode="pull")
    assert target.wrong() == []
    for held in target.workers.values():
        for t in held.values():
            t[...] = 0
    gaps = GapReading()
    gaps.register(int(buffer.ctypes.data), buffer.nbytes)
    target.register(gaps)
    spans = transfer.execute(bound, gaps, sessions, mode="pull")
    assert target.wrong() == []
    rows = MODEL["out"][0][0] + MODEL["down"][0][0]
    assert plain.segments >= 2 * rows and spans.segments <= len(MODEL) * 2
    assert spans.bytes == plain.bytes
    assert spans.bytes < sum(p.wire_bytes for p in spans.pairs) <= 2 * spans.bytes
    # Push writes the remote side: it must never write the bytes between runs.
    pushed = transfer.execute(bound, gaps, sessions, mode="push")
    assert pushed.segments == transfer.execute(bound, plain_backend, sessions, mode="push").segments
    assert sum(p.wire_bytes for p in pushed.pairs) == pushed.bytes


class Overlapping(transfer.LocalBackend):
    """Holds the first status call until a batch of another pair (another remote session)
    is submitted, or ``hold`` seconds: ``overlapped`` says whether pairs ran at once."""

    def __init__(self, hold: float) -> None:
        super().__init__()
        self.hold = hold
        self.first: Optional[str] = None
        self.other = threading.Event()
        self.overlapped: Optional[bool] = None
        self.lock = threading.Lock()

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        with self.lock:
            if self.first is None:
                self.first = session
            elif session != self.first:
                self.other.set()
        return super().submit(session, write, local, remote, lengths)

    def wait(self, handle: int) -> bool:
        with self.lock:
            first, self.overlapped = self.overlapped is None, self.overlapped if self.overlapped is not None else False
        if first:
            self.overlapped = self.other.wait(self.hold)
        return super().wait(handle)


@pytest.mark.parametrize("mode", ["push", "pull"])
@pytest.mark.parametrize("concurrent", [1, 4])
@pytest.mark.parametrize("given", [False, True], ids=["own-staging", "member-staging"])
def test_concurrent_pairs_run_at_once_and_land_every_byte(mode: str, concurrent: int, given: bool) -> None:
    # The executing worker has two pairs with two remotes: push TP1 -> TP2, pull TP2 -> TP1.
    source, target = Instance("src", 1, 1, 1), Instance("dst", 2, 1, 1, fill=False)
    if mode == "pull":
        source, target = Instance("src", 2, 1, 1), Instance("dst", 1, 1, 1, fill=False)
    bound, _, sessions = update(source, target)
    # Pairs at once: the other pair's thread may start late on a loaded machine, so wait
    # long for it; one at a time, it cannot start before the first pair ends.
    backend = Overlapping(hold=60.0 if concurrent > 1 else 1.0)
    source.register(backend)
    target.register(backend)
    landed: list[tuple[str, str]] = []
    # A member's own staging buffer (a worker keeps one across updates) changes nothing.
    staging = transfer.Staging(backend, 1 << 20) if given else None
    report = transfer.execute(bound, backend, sessions, mode=mode, worker=None, staging=staging,
                              on_pair=lambda p: landed.append((p.source_worker_id, p.target_worker_id)),
                              options=transfer.ExecuteOptions(concurrent_pairs=concurrent))
    assert target.wrong() == []
    assert sorted(landed) == sorted((p.source_worker_id, p.target_worker_id) for p in bound.pairs)
    # The report keeps the schedule's order, whatever order the pairs ended in.
    assert [(p.source_worker_id, p.target_worker_id) for p in report.pairs] == \
        [(p.pair.source_worker_id, p.pair.target_worker_id) for p in schedule(bound, mode=mode).pairs]
    assert len(bound.pairs) > 1
    assert backend.overlapped is (concurrent > 1)


def test_a_failed_pair_among_concurrent_ones_fails_the_update_after_all_ended() -> None:
    source, target, bound, backend, sessions = failing_update(2, "wait")
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, sessions, mode="push",
                         options=transfer.ExecuteOptions(stage_below=0, batch_segments=4, concurrent_pairs=4))
    assert caught.value.code == "transfer_failed"
    assert not backend.open, "a batch was left in flight"
