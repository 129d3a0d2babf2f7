"""One coordinator at a time (contract §22.2): the group's claim is exclusive across
processes, and two coordinators that run at the same instant leave every target serving
a generation whose bytes it holds.

The claim storm's oracle is counting: in each round every contender reports whether its
claim() returned, and exactly one may. The race's oracle is lifecycle_world.World.held
(numpy slices of each generation's global tensors), never the lifecycle's own status."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime.lifecycle import DecisionLog

from lifecycle_world import World

CONTENDERS = 6
ROUNDS = 400


def _contender(index: int, folder: str, barrier: Any, rounds: int, out: Connection) -> None:
    """One process of the storm: in each round, at the barrier, claim that round's group."""
    for r in range(rounds):
        log = DecisionLog(folder, f"group-{r}")
        barrier.wait()
        try:
            log.claim(f"contender-{index}")
            out.send((r, index, "won"))
        except wm.ManifestError as error:
            out.send((r, index, error.code))
    out.close()


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_claim_storm_has_exactly_one_winner_in_every_round(tmp_path: Path) -> None:
    """CONTENDERS processes claim one group at the same instant, ROUNDS times; in every
    other round the group's claim is first left by a process that died (all race to
    replace it). Exactly one contender wins each round; the others are refused with
    lifecycle_coordinator_conflict."""
    for r in range(1, ROUNDS, 2):
        log = DecisionLog(tmp_path, f"group-{r}")
        log.owner_path.write_text(json.dumps({"coordinator": "dead", "pid": _dead_pid(), "host": __import__(
            "socket").gethostname(), "epoch": 7}))
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(CONTENDERS)
    pipes, processes = [], []
    for i in range(CONTENDERS):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_contender, args=(i, str(tmp_path), barrier, ROUNDS, send))
        process.start()
        send.close()
        pipes.append(receive)
        processes.append(process)
    outcomes: dict[int, list[str]] = {r: [] for r in range(ROUNDS)}
    try:
        for receive in pipes:
            for _ in range(ROUNDS):
                r, _, outcome = receive.recv()
                outcomes[r].append(outcome)
    finally:
        for process in processes:
            process.join(60)
            if process.is_alive():
                process.kill()
    assert all(p.exitcode == 0 for p in processes)
    double = [r for r, seen in outcomes.items() if seen.count("won") != 1]
    assert double == [], f"rounds without exactly one winner: {double[:10]} ({outcomes[double[0]] if double else ''})"
    assert all(sorted(seen) == ["lifecycle_coordinator_conflict"] * (CONTENDERS - 1) + ["won"]
               for seen in outcomes.values())
    # A replaced dead claim's epoch is exceeded: the fencing token never goes back.
    assert all(json.loads(DecisionLog(tmp_path, f"group-{r}").owner_path.read_text())["epoch"] == 8
               for r in range(1, ROUNDS, 2))


def _race(w: World, g: int, takeover: bool) -> list[Optional[str]]:
    """Two coordinators call run() for generation g at the same instant; each one's
    outcome (None: committed, else the code it raised)."""
    barrier = threading.Barrier(2)
    outcomes: list[Optional[str]] = [None, None]
    bound = w.bound()

    def drive(i: int) -> None:
        update = w.update(name=f"driver-{g}-{i}", takeover=takeover and i == 1)
        barrier.wait()
        try:
            update.run(bound, g)
        except wm.ManifestError as error:
            outcomes[i] = error.code
        except BaseException as error:  # noqa: BLE001 - a crash is an outcome the test refuses
            outcomes[i] = f"crashed: {error!r}"

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.parametrize("takeover", [False, True])
def test_two_coordinators_at_the_same_instant_leave_every_target_serving_what_it_holds(
        tmp_path: Path, takeover: bool) -> None:
    """50 rounds of two run() calls at the same instant (the second one, with takeover,
    deposes the first: a restarted driver). Without takeover exactly one commits. With
    it, a deposed coordinator's calls are refused, and the operator's recover() brings
    every target back. Every round ends with every target serving, all at one
    generation, each holding that generation's bytes."""
    w = World(np.random.default_rng(7), tmp_path)
    generation, committed, deposed = 1, 0, 0
    for round_ in range(50):
        g = generation + 1
        if round_:
            w.next_generation(g)
        outcomes = _race(w, g, takeover)
        if not takeover:
            assert outcomes.count(None) == 1, outcomes
            assert set(outcomes) - {None} <= {"lifecycle_coordinator_conflict", "lifecycle_state_invalid"}
        else:
            assert set(outcomes) - {None} <= {"lifecycle_coordinator_conflict", "lifecycle_state_invalid",
                                              "lifecycle_fenced", "lifecycle_rollback_failed"}, outcomes
            deposed += int("lifecycle_fenced" in outcomes or "lifecycle_rollback_failed" in outcomes)
            w.update(name=f"operator-{g}", takeover=True).recover()
        held = {t: (w.held(t), v.active, v.serving) for t, v in w.versions.items()}
        serving = {v.active for v in w.versions.values()}
        assert len(serving) == 1 and all(h == a and s for h, a, s in held.values()), (round_, outcomes, held)
        generation = serving.pop() or generation
        committed += int(generation == g)
        if generation != g:  # rolled back: the sources' generation g is redrawn next round
            del w.generations[g]
    assert committed >= (50 if not takeover else 1)
    assert not takeover or deposed >= 1  # the race did depose a running coordinator
