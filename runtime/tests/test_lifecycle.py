"""weight_manifest_runtime.lifecycle in one process: versioned updates over a LocalGroup. Every
expectation about bytes comes from lifecycle_world.World.held (numpy slices of each
generation's global tensors drawn by the test), never from the lifecycle's own digests."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest.errors import manifest_error
from weight_manifest_runtime.lifecycle import DecisionLog, RevisionKeeper, VersionedUpdate

from lifecycle_world import World


class Died(BaseException):
    """The coordinator's death at a step (it runs no cleanup: BaseException passes every
    ``except ManifestError``)."""


def die_at(step: str, worker_index: Optional[int] = None) -> Any:
    seen: list[str] = []

    def hook(name: str, worker: Optional[str]) -> None:
        if name == step:
            seen.append(str(worker))
            if worker_index is None or len(seen) == worker_index + 1:
                raise Died(step)
    return hook


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def world(tmp_path: Path, seed: int = 1, **kwargs: Any) -> World:
    return World(np.random.default_rng(seed), tmp_path, **kwargs)


def everyone(w: World) -> dict[str, tuple[Optional[int], Optional[int], str]]:
    """Each target's (generation its bytes hold by the oracle, active generation, state)."""
    return {t: (w.held(t), w.versions[t].active, w.versions[t].state) for t in w.versions}


def all_at(w: World, g: int) -> dict[str, tuple[Optional[int], Optional[int], str]]:
    return {t: (g, g, "active") for t in w.versions}


@pytest.mark.parametrize("delta", [None, 0.05])
def test_a_versioned_update_commits_every_target_at_once(tmp_path: Path, delta: Optional[float]) -> None:
    w = world(tmp_path, delta=delta)
    seen: list[tuple[str, int]] = []
    for t, v in w.versions.items():
        v.on_activate(lambda g, t=t: seen.append((t, g)))
    states_at_decision: list[dict[str, str]] = []

    def hook(step: str, worker: Optional[str]) -> None:
        if step == "decided":
            states_at_decision.append({t: v.state for t, v in w.versions.items()})
        if step == "prepared":
            assert not any(v.serving for v in w.versions.values())

    result = w.update(on_step=hook).run(w.bound(), 2, mode="delta" if delta else "full")
    assert everyone(w) == all_at(w, 2)
    assert result["committed"] and result["lost"] == []
    # The barrier: when the decision is taken every target has verified and none serves.
    assert states_at_decision == [{t: "verified" for t in w.versions}]
    assert sorted(seen) == sorted((t, 2) for t in w.versions)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())
    assert all(w.members[t].wait_version(0) == 2 for t in w.versions)
    record = w.log.read()
    assert record is not None and (record.state, record.decision, record.active_generation) == ("done", "commit", 2)
    if delta:
        # Revision 1 is kept: the delta keeps no undo log (its sizes: test_lifecycle_undo.py).
        assert result["undo_bytes"] == 0 and result["undo_log"] is False


@pytest.mark.parametrize("delta", [None, 0.05])
def test_a_byte_corrupted_after_landing_rolls_every_target_back(tmp_path: Path, delta: Optional[float]) -> None:
    w = world(tmp_path, delta=delta)
    victim = sorted(w.versions)[-1]

    def corrupt(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            tensor = next(iter(w.target.workers[victim].values()))
            tensor.view(np.uint8).reshape(-1)[3] ^= 0x10

    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=corrupt).run(w.bound(), 2, mode="delta" if delta else "full")
    assert caught.value.code == "transfer_verify_failed"
    assert victim in str(caught.value) and "rolled back: every target serves generation 1" in str(caught.value)
    assert everyone(w) == all_at(w, 1)
    record = w.log.read()
    assert record is not None and (record.decision, record.reason["code"]) == ("abort", "transfer_verify_failed")


def test_a_target_lost_mid_update_is_named_and_the_others_roll_back(tmp_path: Path) -> None:
    w = world(tmp_path)
    victim = sorted(w.versions)[0]
    hook = lambda step, worker: w.group.leave(victim) if step == "prepared" else None  # noqa: E731
    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=hook).run(w.bound(), 2, mode="full", transfer_mode="pull")
    assert caught.value.code == "transfer_worker_lost" and victim in str(caught.value)
    assert f"but {victim} (lost)" in str(caught.value)
    rest = {t: s for t, s in everyone(w).items() if t != victim}
    assert rest == {t: (1, 1, "active") for t in rest}


def test_a_lease_changed_after_prepare_fails_the_fence_and_rolls_back(tmp_path: Path) -> None:
    w = world(tmp_path)
    victim = sorted(w.versions)[0]
    hook = lambda s, _: w.members[victim].where.__setitem__("generation", 9) if s == "prepared" else None  # noqa
    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=hook).run(w.bound(), 2, mode="full", transfer_mode="pull")
    assert caught.value.code == "transfer_fence_mismatch"
    assert everyone(w) == all_at(w, 1)


def test_a_lease_changed_during_the_transfer_fails_the_verification_and_rolls_back(tmp_path: Path) -> None:
    """The bytes landed, then a target's generation moved on: verify checks the fences
    again before it compares a digest (the bytes may be in memory the binding no longer
    describes)."""
    w = world(tmp_path)
    victim = sorted(w.versions)[0]
    hook = lambda s, _: w.members[victim].where.__setitem__("generation", 9) if s == "transferred" else None  # noqa
    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=hook).run(w.bound(), 2, mode="full", transfer_mode="pull")
    assert caught.value.code == "transfer_fence_mismatch" and caught.value.path == "/target/generation"
    assert everyone(w) == all_at(w, 1)


def test_a_rollback_without_an_abort_decision_is_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    update.prepare(w.bound(), 2)
    update.transfer()
    with pytest.raises(wm.ManifestError) as caught:
        update.rollback()
    assert caught.value.code == "lifecycle_state_invalid"
    assert str(caught.value) == "rollback follows an abort decision"
    update.verify()
    update.commit()
    assert everyone(w) == all_at(w, 2)


def test_a_prepare_over_an_open_update_is_refused(tmp_path: Path) -> None:
    """The coordinator died after the transfer; the same coordinator (by name) must
    recover the open update, not start another over it."""
    w = world(tmp_path)
    with pytest.raises(Died):
        w.update(name="c", on_step=die_at("transferred")).run(w.bound(), 2, mode="full")
    with pytest.raises(wm.ManifestError) as caught:
        w.update(name="c").prepare(w.bound(), 3)
    assert caught.value.code == "lifecycle_state_invalid"
    # The record is durable at prepare and at the decision only (docs/lifecycle.md): it says prepared.
    assert str(caught.value) == f"group {w.log.group} has an open update to generation 2 (state prepared): recover() first"


def test_an_activation_that_fails_otherwise_than_by_a_lost_target_fails_the_commit(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    update.prepare(w.bound(), 2)
    update.transfer()
    update.verify()
    victim = sorted(w.versions)[-1]

    def refuse(request: dict[str, Any]) -> dict[str, Any]:
        raise manifest_error("lifecycle_not_verified", "the target refused the activation")

    w.members[victim].handlers["lc_activate"] = refuse
    with pytest.raises(wm.ManifestError) as caught:
        update.commit()
    assert caught.value.code == "lifecycle_not_verified"
    assert victim in str(caught.value)


def test_commit_before_verify_and_activation_of_an_unverified_generation_are_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    update.prepare(w.bound(), 2)
    with pytest.raises(wm.ManifestError) as caught:
        update.commit()
    assert caught.value.code == "lifecycle_not_verified"
    update.transfer()
    with pytest.raises(wm.ManifestError) as caught:
        update.commit()
    assert caught.value.code == "lifecycle_not_verified"
    target = sorted(w.versions)[0]
    reply = w.members[target].reply("lc_activate", {"generation": 2, **update.coordinator.token})
    assert reply["error"]["code"] == "lifecycle_not_verified"
    # Without the update's fencing token, the same call is refused before anything else.
    reply = w.members[target].reply("lc_activate", {"generation": 2})
    assert reply["error"]["code"] == "lifecycle_fenced"
    assert not any(v.serving for v in w.versions.values())
    update.verify()
    update.commit()
    assert everyone(w) == all_at(w, 2)


def test_steps_out_of_order_are_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    with pytest.raises(wm.ManifestError) as caught:
        update.transfer()
    assert caught.value.code == "lifecycle_state_invalid"
    with pytest.raises(wm.ManifestError) as caught:
        update.rollback()
    assert caught.value.code == "lifecycle_state_invalid"
    with pytest.raises(wm.ManifestError) as caught:
        update.prepare(w.bound(), 1)  # not after the targets' generation
    assert caught.value.code == "lifecycle_state_invalid"
    update.prepare(w.bound(), 2)
    with pytest.raises(wm.ManifestError) as caught:
        w.update(name=update.name).prepare(w.bound(), 2)  # a second prepare while one is open
    assert caught.value.code == "lifecycle_state_invalid"
    update.transfer()
    update.verify()
    update.commit()
    with pytest.raises(wm.ManifestError) as caught:
        update.abort()
    assert caught.value.code == "lifecycle_state_invalid"


def test_two_coordinators_for_one_group_are_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    first = w.update(name="first")
    first.prepare(w.bound(), 2)
    with pytest.raises(wm.ManifestError) as caught:
        w.update(name="second").prepare(w.bound(), 2)
    assert caught.value.code == "lifecycle_coordinator_conflict" and "first" in str(caught.value)
    # A target refuses another coordinator's prepare of its open update too.
    target = sorted(w.versions)[0]
    reply = w.members[target].reply("lc_prepare", {"from_generation": 1, "to_generation": 2, "mode": "full",
                                                   "coordinator": "second", "epoch": first.epoch + 1})
    assert reply["error"]["code"] == "lifecycle_coordinator_conflict"
    first.transfer(), first.verify(), first.commit()
    assert everyone(w) == all_at(w, 2)


def test_a_full_update_without_revision_g_in_the_store_is_refused_before_any_byte(tmp_path: Path) -> None:
    w = world(tmp_path)
    w.revisions.unavailable.add(1)
    with pytest.raises(wm.ManifestError) as caught:
        w.update().run(w.bound(), 2, mode="full")
    assert caught.value.code == "lifecycle_revision_missing"
    assert everyone(w) == all_at(w, 1)
    # A delta keeps its own undo log and needs no revision.
    w2 = world(tmp_path / "delta", delta=0.02)
    w2.revisions.unavailable.add(1)
    w2.update().run(w2.bound(), 2, mode="delta")
    assert everyone(w2) == all_at(w2, 2)


@pytest.mark.parametrize("delta", [None, 0.05])
@pytest.mark.parametrize("step,expected", [("prepared", 1), ("transferred", 1), ("verified", 1),
                                           ("decided", 2), ("activated", 2)])
def test_a_replacement_coordinator_finishes_what_the_record_says(tmp_path: Path, delta: Optional[float],
                                                                 step: str, expected: int) -> None:
    w = world(tmp_path, delta=delta)
    with pytest.raises(Died):
        w.update(name="old", on_step=die_at(step, 0)).run(w.bound(), 2, mode="delta" if delta else "full")
    if step == "activated":
        assert sum(v.serving for v in w.versions.values()) == 1  # died after the first activation
    else:
        assert not any(v.serving for v in w.versions.values())  # lost its coordinator: stays inactive
    # The old coordinator's claim is this process's: the replacement takes over.
    result = w.update(name="new", takeover=True).recover()
    assert result is not None and result["generation"] == expected
    assert everyone(w) == all_at(w, expected)
    assert w.update(name="third").recover() is None  # nothing open any more


BROKEN_RECORDS = {
    "stale generations": lambda text: json.dumps({**text, "from_generation": 5, "to_generation": 6}),
    "another group": lambda text: json.dumps({**text, "group": "another"}),
    "torn": lambda text: json.dumps(text)[:40],
    "state without its decision": lambda text: json.dumps({**text, "state": "done", "decision": None}),
    "stale, rewritten as abort": lambda text: json.dumps({**text, "from_generation": 5, "to_generation": 6,
                                                          "state": "decided", "decision": "abort"}),
    "another run's targets": lambda text: json.dumps({**text, "incarnations": {
        w: "0" * 32 for w in text["incarnations"]}}),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_RECORDS))
@pytest.mark.parametrize("died_at,expected", [("verified", 1), ("activated", 2)])
def test_every_record_state_has_a_way_back(tmp_path: Path, kind: str, died_at: str, expected: int) -> None:
    """A record recover() cannot use is set aside (kept for the operator), and what the
    targets hold decides: verified and none serving -> back to g from the kept revision;
    one serving g+1 -> a commit was decided, the rest activate. Every target serves the
    generation its bytes hold (the oracle's), and the next update runs."""
    w = world(tmp_path)
    with pytest.raises(Died):
        w.update(name="old", on_step=die_at(died_at, 0)).run(w.bound(), 2)
    text = json.loads(w.log.decision_path.read_text())
    w.log.decision_path.write_text(BROKEN_RECORDS[kind](text))
    with pytest.raises(wm.ManifestError):
        w.update(name="eager").run(w.bound(), 3)  # refused: targets out of service, or the record unreadable
    result = w.update(name="new", takeover=True).recover()
    assert result is not None and result["generation"] == expected, result
    assert everyone(w) == all_at(w, expected)
    aside = [p.name for p in w.log.folder.iterdir() if p.name.startswith("decision.set-aside")]
    assert len(aside) == 2, aside  # the record and why it was set aside
    assert w.update(name="third").recover() is None
    w.next_generation(expected + 1)
    w.update(name="next").run(w.bound(), expected + 1)
    assert everyone(w) == all_at(w, expected + 1)


def test_a_previous_runs_record_is_recognised_as_foreign(tmp_path: Path) -> None:
    """A job restarted with the same group and folder: its generations restart at 1,
    and the record its previous run left open (1 -> 2, never decided) names other
    target incarnations. It is set aside, not rolled back (nothing is restored into
    targets that serve), and the new run's update commits."""
    old = world(tmp_path, seed=1)
    with pytest.raises(Died):
        old.update(name="old", on_step=die_at("verified")).run(old.bound(), 2)
    old.close()
    claim = json.loads(old.log.owner_path.read_text())
    old.log.owner_path.write_text(json.dumps({**claim, "pid": dead_pid()}))  # the old job's process is gone
    new = world(tmp_path, seed=2)  # same folder and group, new targets serving generation 1
    restores: list[int] = []
    restore = new.revisions.restore
    new.revisions.restore = lambda *a, **k: (restores.append(a[1]), restore(*a, **k))[1]
    view = new.update(name="operator").view()
    assert view["record"]["state"] == "prepared" and all(t["serving"] for t in view["targets"].values())
    new.update(name="new").run(new.bound(), 2)
    assert everyone(new) == all_at(new, 2) and restores == []
    result = new.update(name="later").recover()
    assert result is None


def test_the_operators_view_is_one_call(tmp_path: Path) -> None:
    w = world(tmp_path)
    with pytest.raises(Died):
        w.update(name="old", on_step=die_at("verified")).run(w.bound(), 2)
    view = w.update(name="operator").view()
    assert view["claim"]["coordinator"] == "old" and view["claim"]["alive"] is True  # this process
    assert view["record"]["state"] == "prepared" and view["record"]["epoch"] == view["claim"]["epoch"]
    assert view["last_epoch"] == view["claim"]["epoch"]
    assert {w_: (t["state"], t["active"], t["staged"]) for w_, t in view["targets"].items()} == {
        t: ("verified", 1, 2) for t in w.versions}


def test_the_record_is_replaced_whole(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path, "g/1")
    assert log.read() is None
    w = world(tmp_path / "w")
    w.update().run(w.bound(), 2)
    text = w.log.decision_path.read_text()
    assert json.loads(text)["state"] == "done"
    # No temporary file, the claim released; the epoch counter and the lock stay.
    assert sorted(p.name for p in w.log.folder.iterdir()) == ["decision", "epoch", "lock"]


def test_the_serving_side_waits_for_an_activation(tmp_path: Path) -> None:
    w = world(tmp_path)
    target = w.versions[sorted(w.versions)[0]]
    assert target.wait_active(2, timeout=0) is None and target.wait_active(timeout=0) == 1
    update = w.update()
    update.prepare(w.bound(), 2)
    assert target.wait_active(timeout=0) is None  # prepared: not serving
    got: list[Optional[int]] = []
    waiter = threading.Thread(target=lambda: got.append(target.wait_active(2, timeout=30)))
    waiter.start()
    update.transfer(), update.verify()
    assert got == []
    update.commit()
    waiter.join()
    assert got == [2]
    assert asyncio.run(target.activated(2, timeout=1)) == 2


def test_a_target_that_lost_its_coordinator_stays_inactive_and_says_so(tmp_path: Path) -> None:
    w = world(tmp_path)
    for v in w.versions.values():
        v.orphan_seconds = 0.0
    with pytest.raises(Died):
        w.update(on_step=die_at("verified")).run(w.bound(), 2)
    status = next(iter(w.versions.values())).status()
    assert (status["serving"], status["state"], status["orphaned"]) == (False, "verified", True)


def test_a_target_reports_whether_its_bytes_are_still_what_it_verified(tmp_path: Path) -> None:
    w = world(tmp_path)
    w.update().run(w.bound(), 2)
    name = sorted(w.versions)[0]
    assert w.versions[name].status(check=True)["consistent"] is True
    next(iter(w.target.workers[name].values())).view(np.uint8).reshape(-1)[0] ^= 1
    assert w.versions[name].status(check=True)["consistent"] is False


def test_kept_revisions_are_the_last_k_and_a_leased_one_is_not_removed() -> None:
    keeper = RevisionKeeper(2)
    assert keeper.add(1) == [] and keeper.add(2) == []
    with keeper.lease(1):
        assert keeper.add(3) == []  # 1 is leased: kept past the count
        assert keeper.kept == [1, 2, 3]
    assert keeper.add(4) == [1, 2] and keeper.kept == [3, 4]
    with pytest.raises(wm.ManifestError) as caught:
        with keeper.lease(1):
            pass
    assert caught.value.code == "lifecycle_revision_missing"


def test_successive_updates_roll_back_to_the_last_committed_generation(tmp_path: Path) -> None:
    w = world(tmp_path)
    w.update().run(w.bound(), 2)
    w.next_generation(3)
    victim = sorted(w.versions)[0]

    def corrupt(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            next(iter(w.target.workers[victim].values())).view(np.uint8).reshape(-1)[0] ^= 1

    with pytest.raises(wm.ManifestError):
        w.update(on_step=corrupt).run(w.bound(), 3)
    assert everyone(w) == all_at(w, 2)  # revision 2 (saved after its commit) came back
    assert w.revisions.keeper.kept == [1, 2]
    w.update().run(w.bound(), 3)
    assert everyone(w) == all_at(w, 3) and w.revisions.keeper.kept == [2, 3]


def test_a_rollback_that_cannot_bring_back_g_leaves_the_targets_inactive_until_recovered(tmp_path: Path) -> None:
    w = world(tmp_path, delta=0.01)
    victim = sorted(w.versions)[0]
    name = next(iter(w.target.workers[victim]))

    def corrupt(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            # A byte the delta does not write: its undo log cannot bring it back, and the
            # Store, which could, is away. (The delta's check hashes only the blocks it
            # wrote: a byte it writes, flipped too, fails the update.)
            changed = (w.generations[1][name].view(np.uint32) != w.generations[2][name].view(np.uint32))
            box = changed[w.target.boxes[(victim, name)]].reshape(-1)
            held = w.target.workers[victim][name].view(np.uint32).reshape(-1)
            held[int(np.flatnonzero(~box)[0])] ^= 1
            held[int(np.flatnonzero(box)[0])] ^= 1
            w.revisions.stopped = True

    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=corrupt).run(w.bound(), 2, mode="delta")
    assert caught.value.code == "lifecycle_rollback_failed" and victim in str(caught.value)
    assert not any(v.serving for v in w.versions.values())
    w.revisions.stopped = False
    assert w.update(takeover=True).recover()["generation"] == 1
    assert everyone(w) == all_at(w, 1)


def test_a_target_unreachable_during_the_rollback_is_rolled_back_when_it_is_back(tmp_path: Path) -> None:
    w = world(tmp_path, delta=0.05)
    victim = sorted(w.versions)[0]

    def cut(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            w.group.leave(victim)  # a partitioned host: it holds the new bytes, it hears nothing

    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=cut).run(w.bound(), 2, mode="delta", transfer_mode="push")
    assert f"but {victim} (lost)" in str(caught.value)
    assert (w.held(victim), w.versions[victim].state) == (2, "updating")
    w.group.join(w.members[victim], "target")  # the link is back
    assert w.update(takeover=True).recover()["generation"] == 1
    assert everyone(w) == all_at(w, 1)
    assert w.update(takeover=True).recover() is None


def test_targets_serving_different_generations_are_refused_at_prepare(tmp_path: Path) -> None:
    """An update starts from one generation g on every target: a target already serving
    another one (joined from a later revision, say) is refused before anything moves."""
    w = world(tmp_path)
    victim = sorted(w.versions)[0]
    w.versions[victim].active = 3
    with pytest.raises(wm.ManifestError) as caught:
        w.update().prepare(w.bound(), 4)
    assert caught.value.code == "lifecycle_state_invalid"
    prefix = "the targets serve different generations: "
    assert str(caught.value).startswith(prefix)
    assert ast.literal_eval(str(caught.value)[len(prefix):]) == {t: 3 if t == victim else 1 for t in w.versions}
    assert w.log.read() is None
    assert {t: (w.held(t), v.state) for t, v in w.versions.items()} == {t: (1, "active") for t in w.versions}


def test_a_survivor_that_no_longer_holds_what_it_verified_fails_a_rollback_with_a_target_lost(tmp_path: Path) -> None:
    """With a target lost, the rollback cannot combine every box into g's digests: each
    survivor's bytes are checked against the partials it verified at g. A byte of a
    survivor that the delta does not write, flipped (and the Store away), must fail the
    rollback and leave the survivors inactive."""
    w = world(tmp_path, delta=0.01)
    lost, survivor = sorted(w.versions)[:2]
    name = next(iter(w.target.workers[survivor]))

    def fault(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            w.group.leave(lost)
            changed = (w.generations[1][name].view(np.uint32) != w.generations[2][name].view(np.uint32))
            box = changed[w.target.boxes[(survivor, name)]].reshape(-1)
            w.target.workers[survivor][name].view(np.uint32).reshape(-1)[int(np.flatnonzero(~box)[0])] ^= 1
            w.revisions.stopped = True

    with pytest.raises(wm.ManifestError) as caught:
        # No revision to roll back from: the delta keeps its undo log on every target.
        VersionedUpdate(w.coordinator, w.log, revisions=None, on_step=fault).run(
            w.bound(), 2, mode="delta", transfer_mode="push")
    assert caught.value.code == "lifecycle_rollback_failed"
    assert f"target {survivor} does not hold the bytes it verified at generation 1" in str(caught.value)
    assert not w.versions[survivor].serving


def test_a_revision_is_kept_only_with_its_generations_bytes(tmp_path: Path) -> None:
    """A byte of a target changed after the verify (a memory fault while it waits for the
    decision): the commit still activates (the decision is taken), but the revision is
    not kept from that target's bytes; it is kept from the sources, whose bytes are
    generation 2 by the oracle. The next update, failed on purpose, rolls back to a
    generation 2 that is generation 2, the corrupted target included."""
    w = world(tmp_path)
    victim = sorted(w.versions)[-1]

    def corrupt(step: str, worker: Optional[str]) -> None:
        if step == "verified":
            next(iter(w.target.workers[victim].values())).view(np.uint8).reshape(-1)[5] ^= 0x01

    result = w.update(on_step=corrupt).run(w.bound(), 2)
    assert result["committed"] and result["revision_saved"] and result["revision_side"] == "source"
    assert [e["code"] for e in result["revision_errors"]] == ["lifecycle_revision_invalid"]
    assert w.versions[victim].status(check=True)["consistent"] is False
    for name, values in w.generations[2].items():  # the kept revision is generation 2, by the oracle
        assert np.array_equal(w.revisions.tensors[2][name].view(np.uint32), values.view(np.uint32))
    w.next_generation(3)

    def fail(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            next(iter(w.target.workers[victim].values())).view(np.uint8).reshape(-1)[0] ^= 0x80

    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=fail).run(w.bound(), 3)
    assert caught.value.code == "transfer_verify_failed"
    assert everyone(w) == all_at(w, 2)


def test_a_deposed_coordinators_late_calls_change_nothing(tmp_path: Path) -> None:
    """Coordinator a prepares; b, told a is dead (takeover), recovers: every target back
    at g under b's greater epoch. a then wakes up: its transfer, its calls on the targets
    and its record write are refused (lifecycle_fenced), and every target still serves g
    with g's bytes (the oracle's)."""
    w = world(tmp_path, delta=0.05)
    a = w.update(name="a")
    a.prepare(w.bound(), 2, mode="delta")
    b = w.update(name="b", takeover=True)
    assert b.recover()["generation"] == 1 and b.epoch > a.epoch
    assert everyone(w) == all_at(w, 1)
    with pytest.raises(wm.ManifestError) as caught:
        a.transfer()
    assert caught.value.code == "lifecycle_fenced" and "deposed" in str(caught.value)
    target = sorted(w.versions)[0]
    reply = w.members[target].reply("lc_rollback", {"generation": 1, "mode": "delta", **a.coordinator.token})
    assert reply["error"]["code"] == "lifecycle_fenced"
    with pytest.raises(wm.ManifestError) as caught:
        a.abort()
    assert caught.value.code == "lifecycle_fenced"
    assert w.log.read().coordinator == "b"
    assert everyone(w) == all_at(w, 1)


def test_an_open_update_answers_only_the_coordinator_that_prepared_it(tmp_path: Path) -> None:
    """A call on a target's open update from another coordinator whose epoch is not
    greater is refused, whatever the call; the one that prepared it goes on."""
    w = world(tmp_path)
    a = w.update(name="a")
    a.prepare(w.bound(), 2)
    target = sorted(w.versions)[0]
    for op, body in (("lc_rollback", {"generation": 1, "mode": "full"}), ("lc_verified", {"generation": 2}),
                     ("lc_content", {"generation": 2})):
        reply = w.members[target].reply(op, {**body, "coordinator": "intruder", "epoch": a.epoch})
        assert reply["error"]["code"] == "lifecycle_fenced", (op, reply)
    assert w.versions[target].state == "updating"
    a.transfer(), a.verify(), a.commit()
    assert everyone(w) == all_at(w, 2)


def test_a_target_that_serves_refuses_writes(tmp_path: Path) -> None:
    """An update outside the lifecycle (a second driver's plain Coordinator.update) into
    targets that serve is refused before any byte moves: their bytes stay g's."""
    w = world(tmp_path)
    for transfer_mode in ("push", "pull"):
        with pytest.raises(wm.ManifestError) as caught:
            w.coordinator.update(w.bound(), mode=transfer_mode)
        assert caught.value.code == "lifecycle_state_invalid" and "serves" in str(caught.value)
        assert everyone(w) == all_at(w, 1)


def test_a_recovery_without_its_record_keeps_only_verified_bytes_as_the_revision(tmp_path: Path) -> None:
    """The coordinator dies after the first activation and its record is torn; a byte of
    another target changed after the verify. The replacement finishes the commit (one
    target serves 2), and keeps revision 2 only with the digests the targets were
    verified with: not from the changed target, from the sources, which hold generation 2
    by the oracle."""
    w = world(tmp_path)
    victim = sorted(w.versions)[-1]

    def hook(step: str, worker: Optional[str]) -> None:
        if step == "verified":
            next(iter(w.target.workers[victim].values())).view(np.uint8).reshape(-1)[2] ^= 0x20
        if step == "activated":
            raise Died(step)

    with pytest.raises(Died):
        w.update(name="old", on_step=hook).run(w.bound(), 2)
    w.log.decision_path.write_text("{\"format\": ")
    result = w.update(name="new", takeover=True).recover()
    assert result is not None and result["generation"] == 2 and result["revision_side"] == "source", result
    for name, values in w.generations[2].items():
        assert np.array_equal(w.revisions.tensors[2][name].view(np.uint32), values.view(np.uint32))
