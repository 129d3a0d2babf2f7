"""A coalesced delta over members in one process (LocalGroup, LocalBackend): the changed
blocks of each pair move packed through its passive side's landing area.

The oracle is test_transfer.py's: numpy slices of the global tensors, changed here at
random words; which (source, target) pairs a change crosses is found by brute force over
the boxes the test itself cut, not from the plan."""

from __future__ import annotations

import ctypes
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Coordinator, Member

from test_group import group_of
from test_transfer import GLOBAL, MODEL, Instance

SPLIT = [n for n, (_, split, _) in MODEL.items() if split is not None]  # not the replicated norm


@pytest.fixture()
def world() -> Iterator[tuple[Instance, Instance, Coordinator, dict[str, Member]]]:
    saved = {n: t.copy() for n, t in GLOBAL.items()}
    source, target = Instance("src", 2, 1), Instance("dst", 1, 2, fill=False)
    coordinator, _, members = group_of(source, target, transfer.LocalBackend())
    yield source, target, coordinator, members
    GLOBAL.update(saved)


def inside(box: tuple[slice, ...], index: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    return all(s.indices(n)[0] <= i < s.indices(n)[1] for s, i, n in zip(box, index, shape))


def change(source: Instance, words_per_tensor: int, seed: int) -> set[tuple[str, str]]:
    """Flip random words of the split tensors in every source (and in GLOBAL); the
    (source worker, target-side global element) pairs are returned as the pairs of source
    worker and tensor name + flat global index."""
    rng = np.random.default_rng(seed)
    touched: set[tuple[str, str]] = set()
    for name in SPLIT:
        shape = MODEL[name][0]
        for flat in rng.choice(int(np.prod(shape)), size=words_per_tensor, replace=False).tolist():
            index = np.unravel_index(flat, shape)
            GLOBAL[name].view(np.uint32)[index] ^= 0x00FF00FF
            for (worker, tensor), box in source.boxes.items():
                if tensor == name and inside(box, index, shape):
                    local = tuple(i - s.indices(n)[0] for s, i, n in zip(box, index, shape))
                    source.workers[worker][name].view(np.uint32)[local] = GLOBAL[name].view(np.uint32)[index]
                    touched.add((worker, f"{name}:{flat}"))
    return touched


def crossing(source: Instance, target: Instance, touched: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (source worker, target worker) pairs some changed element goes through."""
    pairs = set()
    for worker, key in touched:
        name, flat = key.split(":")
        index = np.unravel_index(int(flat), MODEL[name][0])
        for (holder, tensor), box in target.boxes.items():
            if tensor == name and inside(box, index, MODEL[name][0]):
                pairs.add((worker, holder))
    return pairs


def based(source: Instance, coordinator: Coordinator, mode: str, seed: int) -> tuple[wm.BoundPlan, set[tuple[str, str]]]:
    """A full update in ``mode``, the sources' snapshot of it, then a change: a delta's
    starting point. The bound plan and the change's touched elements."""
    bound = coordinator.bind(coordinator.plan())
    coordinator.update(bound, mode=mode)
    coordinator.snapshot()
    return bound, change(source, 40, seed=seed)


def targets_bytes(target: Instance) -> dict[tuple[str, str], bytes]:
    return {(w, n): t.tobytes() for w, held in target.workers.items() for n, t in held.items()}


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_a_coalesced_delta_lands_every_changed_byte_in_one_operation_per_pair(world: Any, mode: str) -> None:
    source, target, coordinator, _ = world
    bound, touched = based(source, coordinator, mode, seed=3)
    pairs = crossing(source, target, touched)
    assert target.wrong() != []
    result = coordinator.update(bound, mode=mode, delta=True)
    assert target.wrong() == []
    # One packed operation per pair a change crosses (each fits one staging round), and
    # nothing on the wire but the changed blocks.
    assert result["segments"] == len(pairs) and len(pairs) >= 3
    assert result["wire_bytes"] == result["bytes"] > 0
    # The same delta, not coalesced, costs an operation per changed run.
    coordinator.snapshot()
    change(source, 40, seed=4)
    plain = coordinator.update(bound, mode=mode, delta=True, coalesce=False)
    assert target.wrong() == []
    assert plain["segments"] > 4 * result["segments"]


class FailingWrites(transfer.LocalBackend):
    """Every batch fails: a link that drops each write."""

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        handle = super().submit(session, write, [], [], [0])
        return handle


def test_a_push_delta_that_fails_in_flight_leaves_every_target_tensor_untouched(world: Any) -> None:
    source, target, coordinator, members = world
    bound, _ = based(source, coordinator, "push", seed=5)
    before = targets_bytes(target)
    failing = FailingWrites()
    for member in members.values():
        for address, length in member.registered:
            failing.register(address, length)
        member.backend = failing
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound, mode="push", delta=True)
    assert caught.value.code == "transfer_failed"
    assert targets_bytes(target) == before


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_the_passive_side_refuses_pieces_outside_its_registered_memory_before_a_copy(world: Any, mode: str) -> None:
    source, target, coordinator, members = world
    bound, _ = based(source, coordinator, mode, seed=6)
    before = targets_bytes(target)
    # The passive side (push: a target, pull: a source) registered only part of a tensor.
    side = "target" if mode == "push" else "source"
    victim = coordinator.workers(side)[0]
    members[victim].registered = [(a, n // 2) for a, n in members[victim].registered]
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound, mode=mode, delta=True)
    assert caught.value.code == "transfer_failed" and victim in str(caught.value)
    assert targets_bytes(target) == before


def test_the_passive_side_checks_its_own_fence_and_applies_only_what_it_prepared(world: Any) -> None:
    source, target, coordinator, members = world
    bound, _ = based(source, coordinator, "push", seed=7)
    changed = [e for w in coordinator.workers("source")
               for e in members[w].call("changed", {})["changed"]]
    victim = coordinator.workers("target")[0]
    request = {"bound_plan": bound.to_json(), "mode": "push", "changed": changed, "token": "t1"}
    members[victim].where["lease_id"] = "lease-2"  # its lease moved on after the bind
    reply = members[victim].reply("delta_prepare", request)
    assert reply["ok"] is False and reply["error"]["code"] == "transfer_fence_mismatch"
    members[victim].where["lease_id"] = "lease-1"
    assert members[victim].reply("delta_prepare", request)["ok"]
    before = targets_bytes(target)
    reply = members[victim].reply("delta_apply", {"token": "another"})
    assert reply["ok"] is False and reply["error"]["code"] == "transfer_arguments_invalid"
    assert targets_bytes(target) == before


GEOMETRIES = [
    ((5, 7, 150), (1, 2, 37), (3, 4, 90)),  # cut blocks at both ends of every row
    ((4, 128), (0, 0), (4, 128)),  # whole rows of whole blocks
    ((3, 100), (1, 64), (2, 36)),  # to the row's end, whose last block is short
    ((1000,), (100,), (500,)),  # 1-D
]


@pytest.mark.parametrize("shape,offset,local", GEOMETRIES)
def test_the_changed_ranges_are_the_changed_elements_blocks_by_brute_force(
        shape: tuple[int, ...], offset: tuple[int, ...], local: tuple[int, ...]) -> None:
    """The oracle walks every changed element: its block of its row, clipped to the box
    (a cut block's piece), in the fragment's own memory."""
    from weight_manifest import content, live

    b = 16
    rng = np.random.default_rng(sum(shape))
    fragment = rng.integers(0, 2**32, size=local, dtype=np.uint32).view(np.float32)
    held = {"w": fragment}
    inventory = live.runtime_inventory(
        held, worker_id="w0", endpoint="w0", instance_id="i", lease_id="l", generation=1, rank=wm.ParallelRank(),
        descriptors={"w": wm.TensorDescriptor(tensor_id="w", global_shape=shape, dtype="float32", itemsize=4,
                                              partition_dim=None, layout_fingerprint="test:v1")},
        offsets={"w": list(offset)}, model_id="m", revision="r")
    snapshot = content.Snapshot(held, inventory, b)
    flat = fragment.view(np.uint32).reshape(-1)
    picked = rng.choice(flat.size, size=max(8, flat.size // 50), replace=False)
    flat[picked] ^= 1
    want = set()
    n, o, m = shape[-1], offset[-1], local[-1]
    for i in picked.tolist():
        row, col = divmod(i, m)  # the local row, the local column
        j = (o + col) // b
        start, stop = max(j * b, o) - o, min((j + 1) * b, n, o + m) - o
        base = fragment.ctypes.data + row * m * 4
        want.add((base + 4 * start, base + 4 * stop))
    merged: list[list[int]] = []
    for a, c in sorted(want):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], c)
        else:
            merged.append([a, c])
    (got,) = snapshot.changed(held).values()
    assert got.tolist() == merged
    # The same pass gave the partials of the bytes now held.
    assert snapshot.partials == content.partials(held, inventory, b)


def test_changed_ranges_travel_as_base64_and_a_malformed_entry_is_refused_with_its_pointer() -> None:
    ranges = np.array([[16, 32], [2**40, 2**40 + 256]], dtype=np.uint64)
    wire = transfer.ranges_to_wire(ranges)
    (back,) = transfer.changed_from_wire([["w", "cpu", wire]]).values()
    assert back.tolist() == ranges.tolist()
    (listed,) = transfer.changed_from_wire([["w", "cpu", ranges.tolist()]]).values()
    assert listed.tolist() == ranges.tolist()
    for index, bad in ((0, ["w", "cpu", wire[:-4]]), (0, ["w", "cpu", "not base64!"]), (0, ["w", "cpu"])):
        with pytest.raises(wm.ManifestError) as caught:
            transfer.changed_from_wire([bad])
        assert caught.value.code == "transfer_arguments_invalid" and caught.value.path == f"/changed/{index}"


class CorruptingLast(transfer.LocalBackend):
    """One worker's view of the shared local backend: it counts its batches and, at batch
    ``at``, waits a moment (so that a hash begun too early would finish first), then flips
    a byte of what that batch just delivered."""

    def __init__(self, base: transfer.LocalBackend, at: int = 0) -> None:
        super().__init__()
        self.base, self.at, self.count, self.flipped = base, at, 0, False
        self.last: dict[int, int] = {}

    def register(self, address: int, length: int) -> None:
        self.base.register(address, length)

    def unregister(self, address: int) -> None:
        self.base.unregister(address)

    def _inside(self, address: int, length: int) -> bool:
        return self.base._inside(address, length)  # the shared backend's registry

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        handle = super().submit(session, write, local, remote, lengths)
        self.last[handle] = local[-1] + lengths[-1] - 1
        return handle

    def wait(self, handle: int) -> bool:
        ok = super().wait(handle)
        self.count += 1
        if ok and self.count == self.at:
            time.sleep(0.3)
            ctypes.c_uint8.from_address(self.last[handle]).value ^= 0x5A
            self.flipped = True
        return ok


def test_a_byte_corrupted_in_the_last_round_of_a_pull_fails_the_verification(world: Any) -> None:
    """The targets hash each tensor once its last pair is in, while other pairs move; a
    byte of the very last batch is still covered."""
    source, target, coordinator, members = world
    bound = coordinator.bind(coordinator.plan())
    victim = coordinator.workers("target")[0]
    shared = members[victim].backend
    counting = CorruptingLast(shared)
    members[victim].backend = counting
    coordinator.update(bound, mode="pull")
    assert target.wrong() == [] and counting.count >= 2
    for held in target.workers.values():
        for tensor in held.values():
            tensor[...] = 0
    members[victim].backend = last = CorruptingLast(shared, at=counting.count)
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound, mode="pull")
    assert last.flipped and caught.value.code == "transfer_verify_failed"
    assert victim in str(caught.value)


def test_an_advanced_snapshot_is_the_bytes_the_delta_sent_not_what_the_sources_hold_later(world: Any) -> None:
    source, target, coordinator, _ = world
    bound, _ = based(source, coordinator, "pull", seed=8)
    first = coordinator.update(bound, mode="pull", delta=True)
    assert target.wrong() == []
    # The trainer moves on before the base is taken: those words were not sent.
    change(source, 2, seed=9)
    coordinator.snapshot(advance=True)
    second = coordinator.update(bound, mode="pull", delta=True)
    # Only the later words moved (the first delta's are in the base), and they did move.
    assert target.wrong() == []
    assert 0 < second["bytes"] < first["bytes"]
