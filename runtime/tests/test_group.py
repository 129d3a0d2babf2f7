"""weight_manifest_runtime.group in one process (LocalGroup, LocalBackend): the coordinator's update
over members, each target byte checked against numpy slices of the global tensors (the
oracle of test_transfer.py, not the planner); a member's own fence check before its first
byte; the group key; membership; and the executor's stall bound (transfer_timeout)."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest.errors import manifest_error
from weight_manifest_runtime.group import Coordinator, LocalGroup, Member
from weight_manifest_runtime.group.ray import GroupRole, _digest

from test_transfer import MODEL, Instance


def group_of(source: Instance, target: Instance, backend: transfer.Backend) -> tuple[Coordinator, LocalGroup, dict[str, Member]]:
    group = LocalGroup()
    members = {}
    for side, instance in (("source", source), ("target", target)):
        for worker, held in instance.workers.items():
            inventory = next(i for i in instance.inventories if i["tensors"][0]["worker_id"] == worker)
            where = {k: inventory[k] for k in ("instance_id", "lease_id", "generation", "model_id", "revision")}
            records = {r["tensor_id"]: r for r in inventory["tensors"]}
            member = Member(held, backend=backend, session=worker, staging_bytes=0, worker_id=worker,
                            endpoint=worker, rank=wm.ParallelRank(**records[next(iter(records))]["rank"]),
                            descriptors=instance.descriptors[worker], offsets=instance.offsets[worker], **where)
            group.join(member, side)
            members[worker] = member
    group.refresh()
    return Coordinator(group), group, members


@pytest.fixture()
def setup() -> tuple[Instance, Instance, Coordinator, LocalGroup, dict[str, Member]]:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 2, fill=False)
    coordinator, group, members = group_of(source, target, transfer.LocalBackend())
    return source, target, coordinator, group, members


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_an_update_over_members_lands_every_byte_and_activates_only_when_told(setup: Any, mode: str) -> None:
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    result = coordinator.update(bound, mode=mode)
    assert target.wrong() == []
    assert result["bytes"] == sum(t.nbytes for held in target.workers.values() for t in held.values())
    # The coordinator's content check covered every tensor of the model; no target check ran.
    assert result["verified_tensors"] == len(MODEL) and result["target_checks"] == {}
    assert all(members[w].version is None for w in coordinator.workers("target"))
    coordinator.activate(coordinator.workers("target"), 1)
    assert [members[w].wait_version(0) for w in coordinator.workers("target")] == [1, 1]


def test_a_member_checks_its_own_fence_before_its_first_byte(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    victim = coordinator.workers("target")[0]
    members[victim].where["generation"] = 2  # its lease moved on after the bind
    reply = members[victim].reply("execute", {"bound_plan": bound.to_json(), "mode": "pull",
                                              "sessions": {w: w for w in members}})
    assert reply["ok"] is False
    assert reply["error"]["code"] == "transfer_fence_mismatch"
    assert reply["error"]["path"] == "/target/generation"
    assert target.untouched()
    # The coordinator's own check names the worker first.
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound)
    assert caught.value.code == "transfer_fence_mismatch" and caught.value.path == "/target/generation"
    assert target.untouched()


@pytest.mark.parametrize("member,now", [("lease_id", "lease-2"), ("generation", 2), ("instance_id", "restarted")])
def test_a_member_checks_each_member_of_its_own_fence(setup: Any, member: str, now: Any) -> None:
    """Called directly (no coordinator's check before it), a source whose lease, generation
    or instance changed after the bind refuses to push a byte."""
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    victim = coordinator.workers("source")[0]
    members[victim].where[member] = now
    reply = members[victim].reply("execute", {"bound_plan": bound.to_json(), "mode": "push",
                                              "sessions": {w: w for w in members}})
    assert reply["ok"] is False
    assert reply["error"]["code"] == "transfer_fence_mismatch"
    assert reply["error"]["path"] == f"/source/{member}"
    assert target.untouched()


def test_the_coordinator_checks_each_workers_fence_naming_it(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    members["dst-d0p1t0"].where["lease_id"] = "lease-2"
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.check_live(bound)
    assert caught.value.code == "transfer_fence_mismatch" and caught.value.path == "/target/lease_id"
    assert str(caught.value) == ('the target worker dst-d0p1t0 holds lease_id "lease-2", the bound plan was bound '
                                 'at "lease-1": bind again')


def test_the_coordinator_checks_each_sides_binding_for_its_placement(setup: Any) -> None:
    """A target worker that now holds another layout of a tensor (same lease and
    generation, so its own fence passes): the side's binding rebuilt from the fresh
    inventories locates another placement."""
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    worker = members["dst-d0p1t0"]
    descriptors = dict(worker.where["descriptors"])
    old = descriptors["norm"]
    descriptors["norm"] = wm.TensorDescriptor(tensor_id="norm", global_shape=old.global_shape, dtype="float32",
                                              itemsize=4, partition_dim=None, layout_fingerprint="test:v2")
    worker.where["descriptors"] = descriptors
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.check_live(bound)
    assert caught.value.code == "transfer_fence_mismatch" and caught.value.path == "/target/placement_id"
    assert str(caught.value).startswith("the target binding holds placement_id ")
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound)
    assert caught.value.path == "/target/placement_id"
    assert target.untouched()


def corrupt(tensor: Any) -> None:
    """Flip one bit of the tensor's first byte."""
    tensor.view(np.uint8).reshape(-1)[0] ^= 1


def test_the_coordinator_itself_verifies_every_target_byte(setup: Any) -> None:
    """One byte of one target tensor corrupted after the transfer, and no handler of the
    targets' own: the coordinator's content verification names that tensor and worker."""
    source, target, coordinator, group, members = setup
    bound = coordinator.bind(coordinator.plan())
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound, after_transfer=lambda: corrupt(target.workers["dst-d0p1t0"]["up"]))
    assert caught.value.code == "transfer_verify_failed"
    assert str(caught.value) == ("after the update, tensor up differs on the targets from the sources' content "
                                 "digest (held by dst-d0p1t0); no target is ready")


def test_a_tensor_no_target_holds_fails_the_verification(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    coordinator.update(coordinator.bind(coordinator.plan()))
    # Only the first pipeline stage: the tensors of layer 1 (down, norm, up) are nowhere.
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.verify_content(targets=["dst-d0p0t0"])
    assert caught.value.code == "transfer_verify_failed"
    assert str(caught.value) == "the targets hold no fragment of tensor down; no target is ready"


def test_replicas_that_differ_fail_the_verification_with_its_code() -> None:
    """Two target replicas (DP2) and one byte of one replica corrupted after the transfer:
    their partials of the same box differ, so the targets' digests do not combine; that is
    the update's content check failing (``transfer_verify_failed``, as in a versioned
    update), not a bare combine error."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, dp=2, fill=False)
    coordinator, _group, _members = group_of(source, target, transfer.LocalBackend())
    bound = coordinator.bind(coordinator.plan())
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(bound, mode="pull", after_transfer=lambda: corrupt(target.workers["dst-d1p0t0"]["down"]))
    assert caught.value.code == "transfer_verify_failed"
    assert str(caught.value).startswith("after the update, the targets' content does not combine (tensor down: ")
    assert str(caught.value).endswith("targets dst-d0p0t0, dst-d1p0t0); no target is ready")


def test_the_targets_own_check_runs_after_the_transfer(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    seen: list[str] = []

    def check(request: dict[str, Any]) -> dict[str, Any]:
        seen.append("checked")
        raise manifest_error("transfer_verify_failed", "the example's own check failed")

    members["dst-d0p0t0"].handlers["verify"] = check
    members["dst-d0p1t0"].handlers["verify"] = lambda request: {}
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.update(coordinator.bind(coordinator.plan()), verify="verify")
    assert caught.value.code == "transfer_verify_failed"
    assert str(caught.value) == "worker dst-d0p0t0 on this process: the example's own check failed"
    assert seen == ["checked"] and target.wrong() == []
    members["dst-d0p0t0"].handlers["verify"] = lambda request: {"verified": 1}
    result = coordinator.update(coordinator.bind(coordinator.plan()), verify="verify")
    assert result["target_checks"] == {"dst-d0p0t0": {"verified": 1}, "dst-d0p1t0": {}}


def test_a_call_without_the_group_key_is_refused(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    role = GroupRole()
    assert role.call("k" * 64, "inventory", {})["error"]["code"] == "transfer_unauthorized"
    role.member, role._key_digest = members["src-d0p0t0"], _digest("k" * 64)
    assert role.call("j" * 64, "inventory", {})["error"]["code"] == "transfer_unauthorized"
    assert role.call("k" * 64, "inventory", {})["ok"] is True


def test_members_that_leave_are_dropped_and_the_rest_update(setup: Any) -> None:
    source, target, coordinator, group, members = setup
    group.leave("src-d0p0t1")
    joined, left = coordinator.refresh()
    assert (joined, left) == ([], ["src-d0p0t1"])
    assert coordinator.workers("source") == ["src-d0p0t0"]
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.request_all(["src-d0p0t1"], {"op": "ping"})
    assert caught.value.code == "transfer_worker_lost" and "src-d0p0t1" in str(caught.value)


class Hanging(transfer.LocalBackend):
    """Copies, but the status of batch ``hang`` never comes (a partitioned link)."""

    def __init__(self, hang: int) -> None:
        super().__init__()
        self.hang, self.count, self.release = hang, 0, threading.Event()

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        self.count += 1
        handle = super().submit(session, write, local, remote, lengths)
        if self.count == self.hang:
            self._done[-handle] = True  # marks the hanging one
        return handle

    def wait(self, handle: int) -> bool:
        if -handle in self._done:
            self.release.wait()
        return super().wait(handle)


def test_a_pair_that_stops_making_progress_times_out_naming_it() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    reshard = wm.plan(source.side.placement, target.side.placement)
    bound = wm.bind_plan(reshard, source.side.binding, target.side.binding)
    backend = Hanging(hang=2)
    source.register(backend)
    target.register(backend)
    clock = time.monotonic()
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, {w: w for w in [*source.workers, *target.workers]}, mode="push",
                         options=transfer.ExecuteOptions(stage_below=0, batch_segments=2, stall_seconds=0.5))
    backend.release.set()
    assert caught.value.code == "transfer_timeout"
    assert "pair src-d0p0t0 -> dst-d0p0t0: no batch completed in 0.5 s" in str(caught.value)
    assert time.monotonic() - clock < 5
    with pytest.raises(wm.ManifestError) as caught:
        transfer.execute(bound, backend, {}, options=transfer.ExecuteOptions(stall_seconds=0))
    assert (caught.value.code, caught.value.path) == ("transfer_arguments_invalid", "/stall_seconds")
