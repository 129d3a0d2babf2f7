"""The fault campaign of versioned updates (`make fault-campaign`; a small seeded share runs
in `make test` through test_fault_campaign.py).

Each trial draws a model (2-5 tensors of random shapes and splits), a source and a target
layout (TP 1/2/4 x PP 1/2), a mode (full or delta, push or pull) and one fault, or two at
once, each at a random point of the lifecycle (after prepare, at the k-th batch of the
transfer, after the transfer, after the verify, after the decision, after the first
activation), runs a versioned update of a lifecycle_world.World, lets a replacement
coordinator recover when the first one died (or when the rollback could not finish while
the fault lasted), and checks the invariants against the world's own record of what each
generation's bytes are (numpy slices of global tensors drawn here):

- ``mixed_activations``: trials in which serving targets serve different generations,
  or a target serves a generation its bytes are not (by the oracle);
- ``lost``: trials in which a surviving target's bytes are neither generation g nor g+1;
- ``unrecovered``: trials in which a surviving target does not serve after the recovery;
- ``undetected_corruptions``: trials whose fault had to fail the update (a corrupted or
  misdirected byte that the update wrote, or in a block a delta wrote, a changed fence, a
  lost participant before the verify) and it committed all the same; a byte flipped
  outside a delta's blocks, or after the verify, must instead be found by the full check
  (``status(check=True)``), the target's bytes otherwise the generation it serves;
- ``unreported``: failures without a code of the codes file or without a participant
  (a worker of the group, or the coordinator) named in the message;
- ``unrestorable``: trials after which a kept revision is not the oracle's bytes;
- ``left_running``: trials after which a thread or process of the trial was still alive.

Most trials run in this process; a share (``--process-share``) runs the coordinator in
a process of its own, killed with SIGKILL at the fault's point, replaced by another
process that reads the decision record from disk (lifecycle_driver.py); with ``--hosts``
(root), one trial more runs on 3 emulated hosts (scripts/hosts.sh, namespace prefix
``wmc``, 198.18.211.0/24): Ray actors on the Transfer Engine, a slowed link (the update
commits) and a link cut mid-transfer (a timeout; every target back at g, the cut one once
its link is back), each target's bytes checked against the model's defining function
(hosts_driver.py ``lifecycle``).

The seed is printed first; ``--seed S`` repeats a campaign and ``--trial N`` runs only
trial N of it (a failing trial prints its number). The last line is one JSON object:
faults, by_kind, detected, mixed_activations, lost, unrecovered, undetected_corruptions,
seconds (and the counts above).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest_runtime.transfer import ExecuteOptions
from weight_manifest._codes import CODES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lifecycle_world import World, random_model  # noqa: E402
from weight_manifest_runtime.lifecycle import VersionedUpdate  # noqa: E402

#: Each kind of fault and the points of the lifecycle it may strike at.
KINDS: dict[str, tuple[str, ...]] = {
    "kill_source": ("prepared", "batch", "transferred", "verified", "decided"),
    "kill_target": ("prepared", "batch", "transferred", "verified", "decided", "activated"),
    "kill_coordinator": ("prepared", "transferred", "verified", "decided", "activated"),
    "corrupt_in_flight": ("batch",),
    "corrupt_after_landing": ("transferred",),
    "short_buffer": ("prepared",),
    "unregistered_buffer": ("prepared",),
    "changed_lease": ("prepared", "batch"),
    "changed_generation": ("prepared", "batch"),
    "store_master_stop": ("prepared", "transferred", "verified", "decided"),
    "partitioned_link": ("batch",),
    "slowed_link": ("batch",),
    # A second coordinator calls run() at the same instant (with takeover half the time:
    # a restarted driver that deposes the first).
    "two_coordinators": ("start",),
    # The coordinator dies and its record is torn (a disk that lost the rename's data).
    "torn_record": ("prepared", "transferred", "verified", "decided", "activated"),
    # The folder holds a record of a previous run of the group (other target incarnations,
    # generations restarted), open or rewritten as an abort, and its dead claim.
    "previous_run_record": ("start",),
    # A target byte flipped after the verify (the update commits: the decision follows
    # the verify), then the next update runs.
    "corrupt_after_verify": ("verified",),
    # A delta: a target byte flipped after the transfer in a block the delta does not
    # write (its check does not hash it: the update commits, the full check finds it).
    "corrupt_outside_delta": ("transferred",),
}
STALL_SECONDS = 0.2


class Died(BaseException):
    """The coordinator's death (passes every ``except ManifestError``: no cleanup runs)."""


@dataclass
class Fault:
    kind: str
    point: str
    batch: int = 1
    victim: Optional[str] = None
    fired: bool = False
    #: A flipped byte outside the delta's blocks (only its full check sees it).
    outside: bool = False

    def must_fail(self, participants: set[str]) -> bool:
        """Whether this fault, once fired, must fail the update (independently of how):
        only faults on a participant of the plan (a worker that runs or receives pairs)."""
        if not self.fired or self.victim not in participants:
            return False
        if self.kind in ("corrupt_in_flight", "corrupt_after_landing", "changed_lease", "changed_generation",
                         "partitioned_link"):
            return True
        if self.kind == "corrupt_outside_delta":
            return not self.outside  # a full update hashes every byte it wrote
        if self.kind == "kill_source":
            return self.point in ("prepared", "batch", "transferred")
        if self.kind == "kill_target":
            # After its verify a target's death is a loss after the barrier's condition
            # held: the others commit (it is reported lost).
            return self.point in ("prepared", "batch", "transferred")
        return False


class FaultyBackend(transfer.LocalBackend):
    """The local backend with faults at the k-th batch: a lost peer, a flipped byte on
    the wire, a changed fence, a batch that never completes (a partitioned link), slow
    completions (a slowed link)."""

    def __init__(self) -> None:
        super().__init__()
        self.trial: Optional[Trial] = None
        self.count = 0
        self.hung: set[int] = set()
        self.release = threading.Event()
        self.slow = 0.0

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        self.count += 1
        handle = super().submit(session, write, local, remote, lengths)
        trial = self.trial
        if trial is None:
            return handle
        for fault in trial.faults:
            if fault.point != "batch" or fault.fired or fault.batch != self.count:
                continue
            fault.fired = True
            if fault.kind in ("kill_source", "kill_target"):
                trial.kill(fault)
                self._done[handle] = False
            elif fault.kind == "corrupt_in_flight" and lengths and self._done.get(handle):
                byte = ctypes.c_uint8.from_address((remote if write else local)[0] +
                                                   int(trial.rng.integers(0, lengths[0])))
                byte.value ^= 0x40
            elif fault.kind in ("changed_lease", "changed_generation"):
                trial.change_fence(fault)
            elif fault.kind == "partitioned_link":
                self.hung.add(handle)
            elif fault.kind == "slowed_link":
                self.slow = 0.002
        return handle

    def wait(self, handle: int) -> bool:
        if handle in self.hung:
            self.release.wait()
        if self.slow:
            time.sleep(self.slow)
        return super().wait(handle)


class Trial:
    """One trial: a world, its faults, and what became of it."""

    def __init__(self, campaign_seed: int, index: int, folder: Path, process: bool) -> None:
        self.index = index
        self.rng = np.random.default_rng([campaign_seed, index])
        pick = random.Random(int(self.rng.integers(0, 2**63)))
        # A coordinator process has no kept revisions: its trials are deltas.
        self.mode = "delta" if process else pick.choice(["full", "delta"])
        self.transfer_mode = pick.choice(["push", "pull"])
        layouts = [(1, 1), (2, 1), (4, 1), (1, 2), (2, 2), (4, 2)]
        self.backend = FaultyBackend()
        self.world = World(self.rng, folder, source=pick.choice(layouts), target=pick.choice(layouts),
                           model=random_model(self.rng, scale=pick.choice([1, 2, 4])),
                           delta=pick.uniform(0.005, 0.2) if self.mode == "delta" else None, backend=self.backend)
        self.process = process
        kinds = ["kill_coordinator"] if process else sorted(KINDS)
        count = 2 if not process and pick.random() < 0.25 else 1
        self.faults: list[Fault] = []
        for _ in range(count):
            kind = pick.choice(kinds)
            if any(f.kind == kind for f in self.faults):
                kind = pick.choice([k for k in kinds if k not in {f.kind for f in self.faults}] or kinds)
            points = KINDS[kind]
            if process:
                points = tuple(p for p in points if p != "batch")
            point = pick.choice(points)
            fault = Fault(kind, point, batch=pick.randint(1, 6))
            targets, sources = sorted(self.world.versions), sorted(self.world.source.workers)
            fault.victim = pick.choice(sources if kind in ("kill_source",) or (
                kind.startswith("changed") and pick.random() < 0.5) else targets)
            self.faults.append(fault)
        self.dead: set[str] = set()
        self.coordinator_died = False
        #: The workers the bound plan's pairs name (faults elsewhere may let it commit).
        self.participants: set[str] = set()
        #: The generations of the last update: g (before) and g+1 (its target).
        self.before, self.after = 1, 2
        self.error: Optional[BaseException] = None
        #: Targets serving a byte changed after the verify, found by status(check=True).
        self.found_by_check: list[str] = []
        #: The target bytes flipped by a fault: (target, tensor, byte index, bits).
        self.flips: list[tuple[str, str, int, int]] = []
        self.committed: Optional[bool] = None
        self.unsaved = False
        #: A delta whose coordinator keeps no revision: its targets keep undo logs (with
        #: revision g kept, they keep none and the rollback restores g). Not with a byte
        #: flipped after the verify: the next update, failed on it, could bring back no
        #: copy of that target's generation without a kept revision.
        undo_log = pick.random() < 0.5
        self.undo_log = self.mode == "delta" and (process or undo_log) and not any(
            f.kind == "corrupt_after_verify" for f in self.faults)

    def update(self, **kwargs: Any) -> VersionedUpdate:
        """The trial's coordinator (without revisions for an undo-log delta)."""
        w = self.world
        return VersionedUpdate(w.coordinator, w.log, revisions=None if self.undo_log else w.revisions, **kwargs)

    # ---- the faults -------------------------------------------------------------------

    def kill(self, fault: Fault) -> None:
        assert fault.victim is not None
        self.world.group.leave(fault.victim)
        self.dead.add(fault.victim)

    def change_fence(self, fault: Fault) -> None:
        assert fault.victim is not None
        where = self.world.members[fault.victim].where
        if fault.kind == "changed_lease":
            where["lease_id"] = str(where["lease_id"]) + "-moved"
        else:
            where["generation"] = int(where["generation"]) + 1

    def strike(self, fault: Fault) -> None:
        """A fault at a step point (not at a batch)."""
        fault.fired = True
        kind, victim = fault.kind, fault.victim
        assert victim is not None
        if kind in ("kill_source", "kill_target"):
            self.kill(fault)
        elif kind == "kill_coordinator":
            self.coordinator_died = True
            raise Died(fault.point)
        elif kind == "corrupt_after_landing":
            # A delta's check hashes the blocks it wrote: the byte is one of a changed
            # element (a full update's, any byte).
            self.flip(victim, self.delta_byte(victim, inside=True) if self.mode == "delta" else None, 0x08)
        elif kind == "corrupt_outside_delta":
            where = self.delta_byte(victim, inside=False) if self.mode == "delta" else None
            fault.outside = where is not None
            self.flip(victim, where, 0x20)
        elif kind in ("short_buffer", "unregistered_buffer"):
            member = self.world.members[victim]
            tensor = max(member.tensors.values(), key=lambda t: t.nbytes)
            address = int(tensor.ctypes.data)
            self.backend.unregister(address)
            if kind == "short_buffer":
                self.backend.register(address, tensor.nbytes // 2)
        elif kind in ("changed_lease", "changed_generation"):
            self.change_fence(fault)
        elif kind == "store_master_stop":
            self.world.revisions.stopped = True
        elif kind == "torn_record":
            self.coordinator_died = True
            path = self.world.log.decision_path
            text = path.read_bytes()
            path.write_bytes(text[:int(self.rng.integers(0, max(1, len(text))))])
            raise Died(fault.point)
        elif kind == "corrupt_after_verify":
            self.flip(victim, None, 0x04)

    def flip(self, victim: str, where: Optional[tuple[str, int]], bits: int) -> None:
        """Flip ``bits`` of a byte of ``victim`` (``where``: tensor and byte index; None: a
        random byte of its first tensor) and note it."""
        held = self.world.target.workers[victim]
        if where is None:
            name = next(iter(held))
            where = (name, int(self.rng.integers(0, held[name].nbytes)))
        held[where[0]].view(np.uint8).reshape(-1)[where[1]] ^= bits
        self.flips.append((victim, where[0], where[1], bits))

    def delta_byte(self, victim: str, inside: bool) -> Optional[tuple[str, int]]:
        """A byte of ``victim`` in an element the delta to generation 2 changed
        (``inside``), or in a block (of 64 elements of a global row) where no element
        changed, which no pair writes and no check of the delta hashes (None if there is
        none)."""
        w = self.world
        for name in w.target.workers[victim]:
            old, new = (w.generations[g][name].view(np.uint32) for g in (1, 2))
            changed = old != new
            if not inside:
                rows = changed.reshape(-1, changed.shape[-1])
                blocks = -(-rows.shape[1] // 64)
                padded = np.zeros((rows.shape[0], blocks * 64), dtype=bool)
                padded[:, :rows.shape[1]] = rows
                touched = np.repeat(padded.reshape(rows.shape[0], blocks, 64).any(axis=2), 64, axis=1)
                changed = ~touched[:, :rows.shape[1]].reshape(changed.shape)
            box = changed[w.target.boxes[(victim, name)]].reshape(-1)
            candidates = np.flatnonzero(box)
            if len(candidates):
                element = int(candidates[int(self.rng.integers(0, len(candidates)))])
                return name, element * 4 + int(self.rng.integers(0, 4))
        return None

    def hook(self, step: str, worker: Optional[str]) -> None:
        point = step
        if step == "activated":
            if getattr(self, "_activated", False):
                return
            self._activated = True
        for fault in self.faults:
            if fault.point == point and not fault.fired:
                self.strike(fault)

    def clear(self) -> None:
        """The faults that pass with time pass: the Store's master is back, a partitioned
        link heals (its abandoned batch completes)."""
        self.world.revisions.stopped = False
        self.backend.release.set()
        self.backend.slow = 0.0

    # ---- the run ----------------------------------------------------------------------

    def _previous_run(self) -> None:
        """The folder as a previous run of the group left it: its record (open, or
        rewritten as an abort) names other incarnations of the targets, and its claim a
        process that is gone."""
        w = self.world
        record = {"format": "weight-manifest.decision/1", "group": w.log.group, "coordinator": "previous-run",
                  "epoch": 3, "from_generation": 1, "to_generation": 2, "mode": self.mode,
                  "targets": sorted(w.versions), "from_digests": {n: "0" * 32 for n in w.model},
                  "to_digests": {}, "state": "prepared", "decision": None, "active_generation": 1, "reason": None,
                  "incarnations": {t: f"{i:032x}" for i, t in enumerate(w.versions)}}
        if self.rng.random() < 0.5:
            record.update(state="decided", decision="abort", reason={"code": "transfer_failed", "message": "x"})
        w.log.decision_path.write_text(json.dumps(record))
        child = subprocess.Popen(["true"])
        child.wait()
        w.log.owner_path.write_text(json.dumps({"coordinator": "previous-run", "pid": child.pid,
                                                "host": socket.gethostname(), "epoch": 3}))

    def _race(self, options: ExecuteOptions) -> None:
        """Two coordinators call run() at the same instant; the first's outcome is the
        trial's error, and the update committed if either did."""
        w = self.world
        bound = w.bound()
        barrier = threading.Barrier(2)
        takeover = bool(self.rng.random() < 0.5)
        outcomes: list[Any] = [None, None]

        def drive(i: int) -> None:
            update = self.update(name=f"c{self.index}-{i}", takeover=takeover and i == 1,
                              on_step=self.hook if i == 0 else None)
            barrier.wait()
            try:
                outcomes[i] = update.run(bound, 2, mode=self.mode, transfer_mode=self.transfer_mode, options=options)
            except (wm.ManifestError, Died) as error:
                outcomes[i] = error

        threads = [threading.Thread(target=drive, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for outcome in outcomes:
            if isinstance(outcome, Died):
                raise outcome
        done = [o for o in outcomes if isinstance(o, dict)]
        self.committed = any(o["committed"] for o in done) or None
        self.unsaved = any(o.get("revision_saved") is False for o in done)
        errors = [o for o in outcomes if isinstance(o, wm.ManifestError)]
        if not done and errors:
            self.error = errors[0]

    def run(self) -> None:
        w = self.world
        self.backend.trial = self
        options = ExecuteOptions(stall_seconds=STALL_SECONDS, batch_segments=4)
        self.participants = {x for p in w.bound().pairs for x in (p.source_worker_id, p.target_worker_id)}
        for fault in self.faults:
            if fault.kind == "previous_run_record":
                fault.fired = True
                self._previous_run()
        race = [f for f in self.faults if f.kind == "two_coordinators"]
        try:
            if self.process:
                self._run_in_processes()
            elif race:
                race[0].fired = True
                self._race(options)
            else:
                result = self.update(name=f"c{self.index}", on_step=self.hook).run(
                    w.bound(), 2, mode=self.mode, transfer_mode=self.transfer_mode, options=options)
                self.committed = bool(result["committed"])
                self.unsaved = result.get("revision_saved") is False
        except Died:
            pass
        except wm.ManifestError as error:
            self.error = error
            self.committed = False
        self.clear()
        try:
            record = w.log.read()
            open_ = record is not None and record.state != "done"
        except wm.ManifestError:
            open_ = True  # torn: the replacement sets it aside
        if open_ or not all(v.serving for t, v in w.versions.items() if t not in self.dead):
            # A replacement coordinator (this one died, or its rollback could not finish).
            result = w.update(name=f"r{self.index}", takeover=True).recover()
            if result is not None and result.get("committed") is not None:
                self.committed = bool(result["committed"])
        if self.unsaved:
            # What an operator does once the Store is back: keep the active generation, as
            # the lifecycle does (only bytes that digest to what was verified).
            expected = w.log.read()
            for side in ("source",) if self.dead else ("target", "source"):
                try:
                    w.revisions.save(w.coordinator, 2, side,
                                     expected=expected.to_digests if expected is not None else None)
                    break
                except wm.ManifestError:
                    pass  # no whole copy is reachable (a source and a target lost): reported unsaved
        if any(f.kind == "corrupt_after_verify" and f.fired for f in self.faults) and not self.dead and all(
                v.serving and v.active == 2 for v in w.versions.values()):
            self._next_update(options)
        self.backend.trial = None

    def _next_update(self, options: ExecuteOptions) -> None:
        """The update after a corruption after the verify: to generation 3. It commits
        (its writes covered the corrupted byte, or it was a full update) or it fails and
        rolls back to a generation 2 that is generation 2's bytes."""
        w = self.world
        self.before, self.after = 2, 3
        w.next_generation(3)
        self.error, self.committed = None, None
        try:
            result = self.update(name=f"n{self.index}").run(w.bound(), 3, mode=self.mode,
                                                           transfer_mode=self.transfer_mode, options=options)
            self.committed = bool(result["committed"])
        except wm.ManifestError as error:
            self.error, self.committed = error, False

    def _run_in_processes(self) -> None:
        from lifecycle_driver import serve, spawn

        fault = self.faults[0]
        fault.fired = True
        self.coordinator_died = True
        first = spawn("update", "--log", str(self.world.folder), "--die-at", fault.point, "--mode", self.mode)
        if serve(self.world.group, first) is not None or first.returncode != -signal.SIGKILL:
            raise AssertionError(f"the coordinator process did not die at {fault.point} ({first.returncode})")
        second = spawn("recover", "--log", str(self.world.folder))
        result = serve(self.world.group, second)
        if second.returncode != 0 or result is None:
            raise AssertionError(f"the replacement coordinator process failed ({second.returncode})")
        self.committed = bool(result["committed"])

    # ---- the invariants ---------------------------------------------------------------

    def check(self) -> dict[str, bool]:
        """Which invariants this trial broke."""
        w = self.world
        survivors = [t for t in w.versions if t not in self.dead]
        serving = {t: w.versions[t].active for t in survivors if w.versions[t].serving}
        # A byte changed after the verify in a target that then activated, or outside a
        # delta's blocks (its check hashes only those): no lifecycle can stop a memory
        # fault after its check, and a later delta that does not write the byte keeps it;
        # the documented full check must find it (status(check=True)), and the target's
        # bytes must be the generation it serves but for the flipped bytes.
        self.found_by_check = sorted(t for t in {f[0] for f in self.flips}
                                     if t in serving and w.held(t) is None and self.flipped_only(t, serving[t])
                                     and w.versions[t].status(check=True)["consistent"] is False)
        held = {t: (serving[t] if t in self.found_by_check else w.held(t)) for t in survivors}
        broken = {
            "unrecovered": len(serving) != len(survivors),
            "mixed_activations": len(set(serving.values())) > 1 or any(held[t] != g for t, g in serving.items()),
            "lost": any(h not in (self.before, self.after) for h in held.values()),
        }
        committed = set(serving.values()) == {self.after}
        broken["undetected_corruptions"] = committed and self.after == 2 and any(
            f.must_fail(self.participants) for f in self.faults)
        if self.committed is not None and serving:
            broken["mixed_activations"] |= committed != self.committed
        died = [f for f in self.faults if f.kind == "kill_coordinator" and f.fired]
        if died and serving:
            broken["mixed_activations"] |= committed != (died[0].point in ("decided", "activated"))
        torn = [f for f in self.faults if f.kind == "torn_record" and f.fired]
        if torn and serving and not died:
            # Without a record, only a target that serves g+1 proves the commit decision.
            broken["mixed_activations"] |= committed != (torn[0].point == "activated")
        broken["unreported"] = False
        if self.error is not None:
            code, text = getattr(self.error, "code", None), str(self.error)
            named = [x for x in [*w.members, "coordinator"] if x in text]
            broken["unreported"] = code not in CODES or not named
        kept = w.revisions.keeper.kept
        broken["unrestorable"] = not all(
            all(np.array_equal(w.revisions.tensors[g][n].view(np.uint32), w.generations[g][n].view(np.uint32))
                for n in w.model) for g in kept) or (self.before not in kept and not committed) or (
            self.mode == "full" and committed and self.after not in kept and not self.dead)
        return broken

    def flipped_only(self, target: str, generation: int) -> bool:
        """Whether ``target``'s bytes are ``generation``'s once the bytes the faults
        flipped there (and no later write restored) are flipped back."""
        w = self.world
        for name, tensor in w.target.workers[target].items():
            want = np.ascontiguousarray(w.generations[generation][name][w.target.boxes[(target, name)]])
            got = tensor.copy()
            for victim, tensor_name, index, bits in self.flips:
                flat = got.view(np.uint8).reshape(-1)
                if (victim, tensor_name) == (target, name) and flat[index] != want.view(np.uint8).reshape(-1)[index]:
                    flat[index] ^= bits
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                return False
        return True

    def detected(self) -> int:
        """The faults that had to fail the update and did, reported with a code."""
        return sum(1 for f in self.faults if f.must_fail(self.participants)) \
            if self.error is not None or self.coordinator_died else 0

    def close(self) -> None:
        self.world.close()


def run_campaign(faults: int, seed: int, *, process_share: float = 0.02, only: Optional[int] = None,
                 progress: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    totals: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    failing: list[int] = []
    detected = injected = trials = processes = found_by_check = 0
    # What was running before the campaign (a test session's own threads and children)
    # is not the campaign's.
    threads_before, children_before = set(threading.enumerate()), set(_children())
    index = 0
    with tempfile.TemporaryDirectory(prefix="wm-fault-") as root:
        while injected < faults if only is None else index <= only:
            if only is not None and index != only:
                index += 1
                continue
            process = random.Random(seed * 7919 + index).random() < process_share
            folder = Path(root) / f"t{index}"
            trial = Trial(seed, index, folder, process)
            try:
                trial.run()
                broken = trial.check()
            except Exception:  # noqa: BLE001 - a crash of the harness or the code is a failed trial
                traceback.print_exc()
                broken = {"crashed": True}
            finally:
                trial.close()
            deadline = time.monotonic() + 2.0
            while _new_threads(threads_before) and time.monotonic() < deadline:
                time.sleep(0.01)
            broken["left_running"] = bool(_new_threads(threads_before)) or bool(set(_children()) - children_before)
            for name, bad in broken.items():
                totals[name] += int(bad)
            if any(broken.values()):
                failing.append(index)
                print(f"trial {index} (seed {seed}) broke {[k for k, v in broken.items() if v]}: "
                      f"mode {trial.mode}/{trial.transfer_mode}, faults {trial.faults}, error {trial.error!r}",
                      file=sys.stderr)
            for f in trial.faults:
                by_kind[f.kind] += 1
            found_by_check += len(trial.found_by_check)
            injected += len(trial.faults)
            detected += trial.detected()
            trials += 1
            processes += int(process)
            index += 1
            if progress and trials % 100 == 0:
                print(f"  {trials} trials, {injected} faults, {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return {
        "faults": injected, "by_kind": dict(sorted(by_kind.items())), "detected": detected,
        "found_by_check": found_by_check,
        "mixed_activations": totals["mixed_activations"], "lost": totals["lost"],
        "unrecovered": totals["unrecovered"], "undetected_corruptions": totals["undetected_corruptions"],
        "unreported": totals["unreported"], "unrestorable": totals["unrestorable"],
        "left_running": totals["left_running"], "crashed": totals["crashed"], "trials": trials,
        "process_trials": processes, "failing_trials": failing[:20], "seed": seed,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads alive now that were not before (a daemon of another library that merely
    started during the campaign and lives on is one too: none is expected)."""
    return [t for t in threading.enumerate() if t not in before and t.is_alive()]


def _children() -> list[int]:
    """This process's live child processes (none may outlive a trial)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] != "Z":
                found.append(int(entry))
    return found


def hosts_share() -> tuple[dict[str, int], dict[str, int]]:
    """The trial on emulated hosts: its faults by kind and the invariants it broke."""
    from weight_manifest_runtime.hosts import Cluster

    root = Path(__file__).resolve().parents[2]
    if os.geteuid() != 0:
        raise SystemExit("--hosts needs root (network namespaces)")
    cluster = Cluster(3, script=root / "scripts" / "hosts.sh", python=sys.executable, prefix="wmc", net="198.18.211")
    cluster.up()
    try:
        out = cluster.run_json(0, [sys.executable, str(Path(__file__).with_name("hosts_driver.py")), "lifecycle"],
                               timeout=600)
    finally:
        cluster.down()
    victim = out["victim"]
    serving_after = {(s["active"], s["serving"]) for s in out["after_cut"].values()}
    broken = {
        "unreported": int(out["cut"]["code"] != "transfer_timeout" or victim not in out["cut"]["message"]),
        "unrecovered": int(serving_after != {(2, True)}),
        "mixed_activations": int(out["after_cut_verify"] != {"code": None} or out["after_slow_verify"] != {"code": None}
                                 or {(s["active"], s["serving"]) for s in out["after_slow"].values()} != {(2, True)}),
        "left_running": len(cluster.leftovers()),
    }
    return {"partitioned_link": 1, "slowed_link": 1}, broken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--trial", type=int, default=None, help="run only this trial of the campaign")
    parser.add_argument("--process-share", type=float, default=0.02)
    parser.add_argument("--hosts", action="store_true", help="one trial more on 3 emulated hosts (root)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(f"fault campaign: seed {seed} ({args.faults} faults; --seed {seed} repeats it)", file=sys.stderr)
    result = run_campaign(args.faults, seed, process_share=args.process_share, only=args.trial)
    if args.hosts:
        clock = time.perf_counter()
        kinds, broken = hosts_share()
        for kind, n in kinds.items():
            result["by_kind"][kind] = result["by_kind"].get(kind, 0) + n
        for name, n in broken.items():
            result[name] += n
        result["faults"] += sum(kinds.values())
        result["detected"] += 1 if not broken["unreported"] else 0
        result.update(host_trials=1, host_faults=sum(kinds.values()))
        result["seconds"] = round(result["seconds"] + time.perf_counter() - clock, 2)
    print(json.dumps(result))
    bad = [k for k in ("mixed_activations", "lost", "unrecovered", "undetected_corruptions", "unreported",
                       "unrestorable", "left_running", "crashed") if result[k]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
