"""The control channel of vLLM's weight-sync backend (weight_manifest_runtime.weight_transfer.channel)
without vLLM: members in this process dial in to a coordinator's ChannelGroup over TCP
and an update runs over it, every target byte checked against numpy slices of the global
tensors (the oracle of test_transfer.py); a join without the key, a worker id joining
twice, a coordinator that cannot be reached and a member whose channel closed each get
their code, and the group keeps its members."""

from __future__ import annotations

import socket
from typing import Any, Callable

import pytest

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Coordinator, Member
from weight_manifest_runtime.weight_transfer import channel

from test_transfer import MODEL, Instance

KEY = "ab" * 32


def maker(instance: Instance, worker: str, backend: transfer.Backend) -> Callable[[int, str], Member]:
    held = instance.workers[worker]
    inventory = next(i for i in instance.inventories if i["tensors"][0]["worker_id"] == worker)
    where = {k: inventory[k] for k in ("instance_id", "lease_id", "generation", "model_id", "revision")}
    rank = wm.ParallelRank(**inventory["tensors"][0]["rank"])

    def make(ordinal: int, host: str) -> Member:
        return Member(held, backend=backend, session=worker, staging_bytes=0, worker_id=worker, endpoint=worker,
                      rank=rank, descriptors=instance.descriptors[worker], offsets=instance.offsets[worker], **where)

    return make


def test_an_update_runs_over_the_channel_and_refusals_have_codes() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 2, fill=False)
    backend = transfer.LocalBackend()
    group = channel.ChannelGroup("127.0.0.1", KEY, timeout=30)
    joined: list[channel.Membership] = []
    try:
        ordinals: dict[str, Any] = {}
        for side, instance in (("source", source), ("target", target)):
            for worker in instance.workers:
                make = maker(instance, worker, backend)

                def remember(ordinal: int, host: str, make: Any = make, worker: str = worker) -> Member:
                    ordinals[worker] = (ordinal, host)
                    return make(ordinal, host)

                joined.append(channel.join(group.address, KEY, side, worker, remember))
        group.wait_members("source", 2, 10)
        group.wait_members("target", 2, 10)
        # Each replica its ordinal among its side's, in the order they joined; the host is
        # this end's address towards the coordinator.
        assert {w: o for w, (o, _) in ordinals.items()} == {"src-d0p0t0": 0, "src-d0p0t1": 1, "dst-d0p0t0": 0,
                                                               "dst-d0p1t0": 1}
        assert {h for _, h in ordinals.values()} == {"127.0.0.1"}
        coordinator = Coordinator(group)
        result = coordinator.update(coordinator.bind(coordinator.plan()), mode="pull")
        assert target.wrong() == []
        assert result["verified_tensors"] == len(MODEL)

        worker = next(iter(target.workers))
        with pytest.raises(wm.ManifestError) as caught:
            channel.join(group.address, "cd" * 32, "target", "other", maker(target, worker, backend))
        assert caught.value.code == "transfer_unauthorized"
        with pytest.raises(wm.ManifestError) as caught:
            channel.join(group.address, KEY, "target", "again", maker(target, worker, backend))
        assert caught.value.code == "vllm_transfer_join_refused" and worker in str(caught.value)
        assert sorted(group.members()) == sorted([*source.workers, *target.workers])

        # A member whose channel closed: its calls are the loss of that worker, named.
        lost = joined.pop()
        lost.leave()
        with pytest.raises(wm.ManifestError) as caught:
            coordinator.request_all([lost.member.worker_id], {"op": "ping"})
        assert caught.value.code == "transfer_worker_lost" and lost.member.worker_id in str(caught.value)
        assert group.refresh()[1] == [] or lost.member.worker_id not in group.members()
    finally:
        group.close()
        for membership in joined:
            membership.leave()


def test_a_coordinator_that_cannot_be_reached_is_named() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    source = Instance("src", 1, 1)
    worker = next(iter(source.workers))
    with pytest.raises(wm.ManifestError) as caught:
        channel.join(f"127.0.0.1:{port}", KEY, "source", worker, maker(source, worker, transfer.LocalBackend()),
                     timeout=5)
    assert caught.value.code == "vllm_transfer_channel_failed" and f"127.0.0.1:{port}" in str(caught.value)
