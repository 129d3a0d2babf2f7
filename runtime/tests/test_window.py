"""The engine's open door, narrowed (docs/ray.md): with the real Transfer Engine on
127.0.0.1, a target under the lifecycle registers its memory only from an update's
prepare to its decision, and a source only during the transfer. An outsider (a process of
no group, tests/te_outsider.py) that writes into the target and reads the source outside
that window is refused by the engine and nothing lands; its write inside the window lands,
and the update fails its content check and never activates. The oracle is numpy: the
values this test wrote into each tensor."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Coordinator, LocalGroup, Member
from weight_manifest_runtime.lifecycle import DecisionLog, TargetVersions, VersionedUpdate
from weight_manifest_runtime.lifecycle.memory import MemoryRevisions

OUTSIDER = Path(__file__).with_name("te_outsider.py")


def _outsider(session: str, target: int, source: int) -> dict[str, Any]:
    run = subprocess.run([sys.executable, str(OUTSIDER), "127.0.0.1", session, str(target), session, str(source)],
                         capture_output=True, text=True, timeout=120)
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr[-2000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def test_memory_is_reachable_only_while_an_update_needs_it(tmp_path: Path) -> None:
    from mooncake.engine import TransferEngine

    engine = TransferEngine()
    assert engine.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") == 0
    session = f"127.0.0.1:{engine.get_rpc_port()}"
    backend = transfer.EngineBackend(engine)
    rng = np.random.default_rng(5)
    generations = {g: rng.integers(1, 2**32, size=(64, 64), dtype=np.uint32).view(np.float32) for g in (1, 2, 3)}
    descriptor = wm.TensorDescriptor(tensor_id="w", global_shape=(64, 64), dtype="float32", itemsize=4,
                                     partition_dim=None, layout_fingerprint="window:v1")
    group = LocalGroup()
    held = {"source": generations[2].copy(), "target": generations[1].copy()}
    members = {}
    for side in ("source", "target"):
        members[side] = Member({"w": held[side]}, backend=backend, session=session, staging_bytes=0,
                               window=side == "source", worker_id=side, endpoint=side, instance_id=side,
                               lease_id="lease-1", generation=1, rank=wm.ParallelRank(), descriptors={"w": descriptor},
                               offsets={"w": [0, 0]}, model_id="model", revision="r1")
        group.join(members[side], side)
    group.refresh()
    versions = TargetVersions(members["target"], 1)
    activated: list[int] = []
    versions.on_activate(activated.append)
    coordinator = Coordinator(group)
    revisions = MemoryRevisions(members)
    revisions.save(coordinator, 1, "target")
    target_address, source_address = int(held["target"].ctypes.data), int(held["source"].ctypes.data)
    try:
        # Serving: neither the target nor the source is reachable; nothing lands.
        out = _outsider(session, target_address, source_address)
        assert (out["write"], out["read"]) == (-1, -1), out
        assert np.array_equal(held["target"].view(np.uint32), generations[1].view(np.uint32))

        # Inside the window (after the transfer, before the verify): the write lands in the
        # target, the source's memory is closed again, and the update fails its check.
        seen: dict[str, Any] = {}

        def strike(step: str, worker: Optional[str]) -> None:
            if step == "transferred":
                seen.update(_outsider(session, target_address, source_address))

        log = DecisionLog(tempfile.mkdtemp(dir=tmp_path), "window")
        update = VersionedUpdate(coordinator, log, revisions=revisions, on_step=strike)
        with pytest.raises(wm.ManifestError) as caught:
            update.run(coordinator.bind(coordinator.plan()), 2, transfer_mode="pull")
        assert (seen["write"], seen["read"]) == (0, -1), seen
        assert caught.value.code == "transfer_verify_failed", caught.value
        assert activated == [1] and versions.serving and versions.active == 1  # g again, never 2
        assert np.array_equal(held["target"].view(np.uint32), generations[1].view(np.uint32))
        assert not members["target"].window_open and not members["source"].window_open

        # The next update, untouched, commits: windows open and close around it.
        result = VersionedUpdate(coordinator, log, revisions=revisions).run(coordinator.bind(coordinator.plan()), 2)
        assert result["committed"] and activated == [1, 2]
        assert np.array_equal(held["target"].view(np.uint32), generations[2].view(np.uint32))
        out = _outsider(session, target_address, source_address)
        assert (out["write"], out["read"]) == (-1, -1), out
        assert np.array_equal(held["target"].view(np.uint32), generations[2].view(np.uint32))
    finally:
        for member in members.values():
            member.close()
