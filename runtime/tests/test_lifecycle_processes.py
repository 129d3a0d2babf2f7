"""A coordinator process killed (SIGKILL) mid-update, and a replacement process that reads
the decision record from disk: between the decision and the last activation it finishes
the commit; before the decision every target rolls back. The targets stay in this
process (lifecycle_driver.py relays the coordinator's calls to them); what their bytes
hold is the oracle's (lifecycle_world.World.held)."""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest

from lifecycle_driver import serve, spawn
from lifecycle_world import World


@pytest.mark.parametrize("die_at,expected", [("activated", 2), ("decided", 2), ("verified", 1),
                                             ("transferred", 1)])
def test_a_killed_coordinator_is_replaced_and_its_update_finished(tmp_path: Path, die_at: str,
                                                                  expected: int) -> None:
    w = World(np.random.default_rng(3), tmp_path, source=(2, 2), target=(4, 1), delta=0.03)
    first = spawn("update", "--log", str(tmp_path), "--die-at", die_at)
    assert serve(w.group, first) is None
    assert first.returncode == -signal.SIGKILL
    serving = [t for t, v in w.versions.items() if v.serving]
    # Before the decision no target serves; after it, at most the ones already activated.
    assert len(serving) == (1 if die_at == "activated" else 0)
    record = w.log.read()
    assert record is not None and record.decision == ("commit" if expected == 2 else None)
    second = spawn("recover", "--log", str(tmp_path))
    result = serve(w.group, second)
    assert second.returncode == 0, result
    assert result is not None and result["generation"] == expected
    assert {t: (w.held(t), v.active, v.serving) for t, v in w.versions.items()} == {
        t: (expected, expected, True) for t in w.versions}
    record = w.log.read()
    assert record is not None and record.state == "done" and record.active_generation == expected
    assert record.coordinator.startswith("recover-")
