"""The coordinator's side of a versioned update: prepare, transfer, verify, then commit at
a barrier or abort and roll back; and the recovery of a replacement coordinator.

:class:`VersionedUpdate` drives one group (a :class:`~weight_manifest.group.Coordinator`
over members whose targets carry :class:`~.versions.TargetVersions`) with a
:class:`~.record.DecisionLog` beside it:

1. **prepare**: the group claimed (one coordinator per group), every target active at the
   same generation g, the bound plan's fences checked against every participant, what
   the rollback needs reserved (a delta: each target's undo log; a full update: revision
   g kept in the Store, :mod:`.revisions`), the record written (``prepared``), then each
   target told (it stops serving: the bytes change in place);
2. **transfer**: the executing workers run their pairs;
3. **verify**: every worker's fence again, then every target's content digests (from its
   own partials) against the sources'; only then is each target told it verified g+1;
4. **commit**: the decision ``commit`` written (fsync, rename) before the first
   activation, then every target activates g+1, then the record says ``done``. Or
   **abort**: the decision ``abort`` written, then **rollback**: every target gets g's
   bytes back (its undo log, or a Store restore of revision g), they are checked against
   g's digests, and every target activates g again.

Any failure before the decision aborts and rolls back, then raises the failure itself
(its code, the participant it names) with what the rollback did; after a commit decision
nothing is rolled back: the commit is finished (a target lost on the way is reported, and
it serves nothing). :meth:`VersionedUpdate.recover` is what a replacement coordinator runs
first: it reads the record and finishes the commit, or decides abort (no decision yet)
and rolls back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from .. import content
from .._errors import manifest_error as _error
from .._native import BoundPlan, ManifestError
from ..group import Coordinator
from .record import Decision, DecisionLog
from .revisions import Revisions

__all__ = ["MODES", "StepHook", "VersionedUpdate"]

#: ``full`` and ``delta`` move the sources' bytes; ``restore`` writes a kept revision.
MODES = ("full", "delta", "restore")
#: ``on_step(step, worker)``: called after each step of an update (``prepared``,
#: ``transferred``, ``verified``, ``decided``, ``activated`` per target with its id,
#: ``done``; ``aborted``, ``restored``, ``rolled_back`` on the way back). A test's faults
#: hook in here (a coordinator that dies, a byte corrupted after landing).
StepHook = Callable[[str, Optional[str]], None]


def _code(error: BaseException) -> str:
    return str(getattr(error, "code", None) or "transfer_failed")


class VersionedUpdate:
    """Versioned updates of the group ``coordinator`` drives, recorded in ``log``.
    ``revisions`` keeps the generations a full update rolls back to (required for
    ``mode="full"``); ``name`` is this coordinator's id (default: unique per process)."""

    def __init__(self, coordinator: Coordinator, log: DecisionLog, *, revisions: Optional[Revisions] = None,
                 name: Optional[str] = None, on_step: Optional[StepHook] = None,
                 block_elements: int = content.DEFAULT_BLOCK_ELEMENTS, takeover: bool = False,
                 save_revisions: bool = True) -> None:
        import os
        import uuid

        self.coordinator, self.log, self.revisions = coordinator, log, revisions
        self.name = name or f"coordinator-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.on_step = on_step
        self.block_elements = block_elements
        self.takeover = takeover
        #: After each commit, keep the new generation in ``revisions`` (from the targets).
        self.save_revisions = save_revisions
        self.record: Optional[Decision] = None
        self.bound: Optional[BoundPlan] = None
        self.changed: Optional[list[Any]] = None
        #: A delta's sources' partials, from the pass that found its changed blocks.
        self.source_partials: Optional[list[Any]] = None
        self.transfer_mode = "push"
        self.options: dict[str, Any] = {}
        self.figures: dict[str, float] = {}

    # ---- helpers ----------------------------------------------------------------------

    def _step(self, step: str, worker: Optional[str] = None) -> None:
        if self.on_step is not None:
            self.on_step(step, worker)

    def _save(self, durable: bool = True, **changes: Any) -> Decision:
        assert self.record is not None
        for key, value in changes.items():
            setattr(self.record, key, value)
        self.log.write(self.record, durable=durable)
        return self.record

    def targets(self) -> list[str]:
        """The target workers of the open update (or of the group)."""
        return list(self.record.targets) if self.record is not None else self.coordinator.workers("target")

    def statuses(self, targets: Optional[Sequence[str]] = None, check: bool = False) -> dict[str, dict[str, Any]]:
        """Each target's ``lc_status`` (:meth:`~.versions.TargetVersions.status`)."""
        ids = list(targets) if targets is not None else self.targets()
        return self.coordinator.request_all(ids, {"op": "lc_status", "check": check})

    def _target_digests(self, targets: Sequence[str], generation: int) -> dict[str, str]:
        replies = self.coordinator.request_all(targets, {"op": "lc_content", "generation": generation,
                                                         "block_elements": self.block_elements})
        return content.digests((r for w in targets for r in replies[w]["partials"]), self.block_elements)

    def _compare(self, expected: Mapping[str, str], got: Mapping[str, str], code: str, what: str) -> None:
        differ = content.compare(expected, got)
        if differ:
            shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
            raise _error(code, f"{what}: tensor {shown} differs from the expected content digest")

    # ---- the steps --------------------------------------------------------------------

    def prepare(self, bound: Optional[BoundPlan], to_generation: int, *, mode: str = "full",
                transfer_mode: str = "push", options: Optional[Mapping[str, Any]] = None) -> Decision:
        """Check, reserve and record the update of the bound plan's targets to
        ``to_generation`` (``mode="restore"``: of the group's targets to kept revision
        ``to_generation``, no bound plan); every target stops serving. See the module's
        step 1."""
        if mode not in MODES:
            raise _error("transfer_arguments_invalid", f"mode must be one of {MODES}, not {mode!r}")
        self.record = None
        started = time.perf_counter()
        self.log.claim(self.name, takeover=self.takeover)
        previous = self.log.read()
        if previous is not None and previous.state != "done":
            raise _error("lifecycle_state_invalid",
                         f"group {self.log.group} has an open update to generation {previous.to_generation} "
                         f"(state {previous.state}): recover() first")
        if (bound is None) != (mode == "restore"):
            raise _error("transfer_arguments_invalid", "a restore takes no bound plan; an update needs one")
        targets = sorted({p.target_worker_id for p in bound.pairs}) if bound is not None else \
            self.coordinator.workers("target")
        held = self.statuses(targets)
        bases = {w: s["active"] for w, s in held.items()}
        not_serving = [w for w, s in held.items() if not s["serving"]]
        if not_serving:
            raise _error("lifecycle_state_invalid",
                         f"target {not_serving[0]} is not serving (state {held[not_serving[0]]['state']}): "
                         "an update starts from every target active at one generation")
        if len(set(bases.values())) != 1:
            raise _error("lifecycle_state_invalid", f"the targets serve different generations: {bases}")
        base = int(next(iter(bases.values())))
        if to_generation <= base and mode != "restore" or to_generation == base:
            raise _error("lifecycle_state_invalid",
                         f"generation {to_generation} does not follow the targets' generation {base}")
        if bound is not None:
            self.coordinator.check_live(bound)
        unhashed = [w for w, st in held.items() if not st.get("hashed")]
        if previous is not None and previous.active_generation == base and previous.targets == targets \
                and not unhashed:
            from_digests = dict(previous.to_digests if previous.decision == "commit" else previous.from_digests)
        else:
            # No record of what generation g digests to (a first update): its targets say.
            from_digests = self._target_digests(targets, base)
        if mode == "restore" and (self.revisions is None or self.revisions.digests(to_generation) is None):
            raise _error("lifecycle_revision_missing", f"revision {to_generation} is not kept: it cannot be restored")
        if mode in ("full", "restore"):
            kept = self.revisions.digests(base) if self.revisions is not None else None
            if kept is None or content.compare(kept, from_digests):
                raise _error("lifecycle_revision_missing",
                             f"a full update's rollback restores generation {base} from the Store, and no kept "
                             f"revision {base} holds the targets' bytes: save it first")
        changed = None
        self.source_partials = None
        if mode == "delta" and bound is not None:
            sources = sorted({p.source_worker_id for p in bound.pairs})
            replies = self.coordinator.request_all(sources, {"op": "changed"})
            changed = [entry for w in sources for entry in replies[w]["changed"]]
            # The pass that found the changed blocks hashed the bytes the delta sends.
            if all(replies[w].get("block_elements") == self.block_elements for w in sources):
                self.source_partials = [r for w in sources for r in replies[w]["partials"]]
        epoch = previous.epoch + 1 if previous is not None else 1
        self.record = Decision(group=self.log.group, coordinator=self.name, epoch=epoch, from_generation=base,
                               to_generation=to_generation, mode=mode, targets=targets, from_digests=from_digests,
                               active_generation=base)
        self.bound, self.changed, self.transfer_mode = bound, changed, transfer_mode
        self.options = dict(options or {})
        self.log.write(self.record)
        request: dict[str, Any] = {"op": "lc_prepare", "from_generation": base, "to_generation": to_generation,
                                   "mode": mode, "coordinator": self.name}
        if mode == "delta" and bound is not None:
            request.update(bound_plan=bound.to_json(), changed=changed)
        replies = self.coordinator.request_all(targets, request)
        self.figures = {"prepare_seconds": time.perf_counter() - started,
                        "undo_bytes": float(sum(int(r["undo_bytes"]) for r in replies.values()))}
        self._step("prepared")
        return self.record

    def _open(self, *states: str) -> Decision:
        if self.record is None:
            raise _error("lifecycle_state_invalid", "no update is prepared by this coordinator")
        if self.record.state not in states:
            raise _error("lifecycle_state_invalid",
                         f"the update to generation {self.record.to_generation} is {self.record.state}, "
                         f"not {' or '.join(states)}")
        return self.record

    def transfer(self) -> dict[str, Any]:
        """Move the bytes (the executing workers run their pairs)."""
        record = self._open("prepared")
        # In memory only: a replacement that finds the record ``prepared`` takes its
        # targets' bytes as touched (it restores them), so no durable write is needed here.
        record.state = "transferring"
        started = time.perf_counter()
        reports: dict[str, Any] = {}
        if record.mode == "restore":
            assert self.revisions is not None
            self.revisions.restore(self.coordinator, record.to_generation)
        else:
            assert self.bound is not None
            reports = self.coordinator.execute(self.bound, mode=self.transfer_mode, options=self.options,
                                               changed=self.changed)
        self.figures["transfer_seconds"] = time.perf_counter() - started
        self._step("transferred")
        return reports

    def verify(self) -> None:
        """The fences again (a lease that moved during the transfer), then every target's
        content digests against the sources' (``transfer_verify_failed`` naming the
        tensors and their holders); then each target is told it verified."""
        record = self._open("transferring")
        started = time.perf_counter()
        if record.mode == "restore":
            assert self.revisions is not None
            expected = self.revisions.digests(record.to_generation) or {}
        else:
            assert self.bound is not None
            # A lease or generation that moved during the transfer: the bytes may have gone
            # to memory the binding no longer describes.
            clock = time.perf_counter()
            self.coordinator.check_held(self.bound)
            self.figures["fence_seconds"] = time.perf_counter() - clock
            sources = sorted({p.source_worker_id for p in self.bound.pairs})
            if self.source_partials is not None:
                expected = content.digests(self.source_partials, self.block_elements)
            else:
                expected = self.coordinator.digests("source", self.block_elements, workers=sources)
        try:
            got = self._target_digests(record.targets, record.to_generation)
        except ManifestError as error:
            if not _code(error).startswith("content_"):
                raise
            # Replicas that differ, boxes that do not combine: some target's bytes are wrong.
            raise _error("transfer_verify_failed",
                         f"after the update to generation {record.to_generation}, the targets' content does not "
                         f"combine ({error}; targets {', '.join(record.targets)}); no target is ready") from None
        try:
            self._compare(expected, got, "transfer_verify_failed",
                          f"after the update to generation {record.to_generation}, on the targets")
        except ManifestError as error:
            holders = self._holders(record.targets, content.compare(expected, got))
            raise _error("transfer_verify_failed", f"{error} (held by {holders}); no target is ready") from None
        clock = time.perf_counter()
        self.coordinator.request_all(record.targets, {"op": "lc_verified", "generation": record.to_generation})
        self.figures["barrier_seconds"] = time.perf_counter() - clock
        # Not written: the decision that follows carries it (a replacement that finds the
        # record still prepared aborts, as it would here).
        record.state, record.to_digests = "verified", dict(expected)
        self.figures["verify_seconds"] = time.perf_counter() - started
        self._step("verified")

    def _holders(self, targets: Sequence[str], tensors: Sequence[str]) -> str:
        if not tensors:
            return "no target"
        inventories = {w: self.coordinator.peers[w].inventory for w in targets if w in self.coordinator.peers}
        held = [w for w, inv in inventories.items() if any(r["tensor_id"] == tensors[0] for r in inv["tensors"])]
        return ", ".join(held) or "no target"

    def commit(self) -> dict[str, Any]:
        """The barrier: only after every target verified, the decision is recorded, then
        every target activates the new generation."""
        if self.record is not None and self.record.state != "verified":
            if self.record.decision == "abort":
                raise _error("lifecycle_state_invalid",
                             f"the update to generation {self.record.to_generation} was aborted: it cannot commit")
            raise _error("lifecycle_not_verified",
                         f"the update to generation {self.record.to_generation} is {self.record.state}: "
                         "commit only after every target verified it")
        record = self._open("verified")
        started = time.perf_counter()
        self._save(state="decided", decision="commit")
        self._step("decided")
        return self._finish_commit(record, started)

    def _finish_commit(self, record: Decision, started: float) -> dict[str, Any]:
        lost: list[str] = []
        for worker in record.targets:
            try:
                self.coordinator.request_all([worker], {"op": "lc_activate", "generation": record.to_generation})
            except ManifestError as error:
                if _code(error) != "transfer_worker_lost":
                    raise
                lost.append(worker)
            self._step("activated", worker)
        # Not fsynced: lost in a crash, a replacement activates again (idempotent).
        self._save(durable=False, state="done", active_generation=record.to_generation)
        self.log.release(self.name)
        self.figures["commit_seconds"] = time.perf_counter() - started
        # What the lifecycle adds to a verified update: its prepare, the fences after the
        # transfer, telling the targets they verified, and the commit.
        self.figures["own_seconds"] = sum(self.figures.get(k, 0.0) for k in (
            "prepare_seconds", "fence_seconds", "barrier_seconds", "commit_seconds"))
        self._step("done")
        result: dict[str, Any] = {"generation": record.to_generation, "committed": True, "lost": lost}
        if self.revisions is not None and self.save_revisions and self.revisions.digests(record.to_generation) is None:
            # Off the barrier (every target serves already): the next update's generation g.
            clock = time.perf_counter()
            try:
                # The targets hold it; with one lost, the sources hold it whole (verified equal).
                whole = all(self.coordinator.alive(record.targets).values())
                self.revisions.save(self.coordinator, record.to_generation, "target" if whole else "source")
                result["revision_saved"] = True
            except ManifestError as error:
                result.update(revision_saved=False, revision_error={"code": _code(error), "message": str(error)})
            self.figures["save_seconds"] = time.perf_counter() - clock
        return {**result, **self.figures}

    def abort(self, reason: Optional[BaseException] = None) -> Decision:
        """Record the decision ``abort`` (before any target goes back)."""
        if self.record is None:
            raise _error("lifecycle_state_invalid", "no update is prepared by this coordinator: nothing to abort")
        if self.record.decision == "commit":
            raise _error("lifecycle_state_invalid",
                         f"the update to generation {self.record.to_generation} was committed: it cannot abort")
        if self.record.decision != "abort":
            why: dict[str, Any] = {"touched": self.record.state != "prepared"}
            if reason is not None:
                why.update(code=_code(reason), message=str(reason))
            self._save(state="decided", decision="abort", reason=why)
        self._step("aborted")
        return self.record

    def rollback(self) -> dict[str, Any]:
        """Every reachable target back to generation g, checked against g's digests, and
        activated at g; ``lifecycle_rollback_failed`` naming the targets that could not
        (they stay inactive). A delta's undo log that does not bring back g (a byte
        corrupted outside the delta's ranges) is followed by a restore of revision g when
        one is kept."""
        record = self.record
        if record is None or record.decision != "abort":
            raise _error("lifecycle_state_invalid", "rollback follows an abort decision")
        started = time.perf_counter()
        g = record.from_generation
        alive = [w for w, up in self.coordinator.alive(record.targets).items() if up]
        lost = [w for w in record.targets if w not in alive]
        touched = bool((record.reason or {}).get("touched", True))
        base: dict[str, Any] = {"op": "lc_rollback", "generation": g, "mode": record.mode, "coordinator": self.name}
        try:
            if record.mode == "delta":
                self.coordinator.request_all(alive, base)
                try:
                    self._check_back(alive, lost)
                except ManifestError:
                    if self.revisions is None or self.revisions.digests(g) is None:
                        raise
                    self._restore_back(alive, lost, {**base, "mode": "full"}, True)
            else:
                self._restore_back(alive, lost, base, touched)
            self.coordinator.request_all(alive, {"op": "lc_verified", "generation": g})
            for worker in alive:
                self.coordinator.request_all([worker], {"op": "lc_activate", "generation": g})
        except ManifestError as error:
            raise _error("lifecycle_rollback_failed",
                         f"the rollback to generation {g} did not finish ({_code(error)}: {error}); targets "
                         f"{', '.join(alive)} stay inactive until a coordinator recovers them") from None
        self._save(durable=False, state="done", active_generation=g)
        self.log.release(self.name)
        self.figures["rollback_seconds"] = time.perf_counter() - started
        self._step("rolled_back")
        return {"generation": g, "committed": False, "lost": lost, **self.figures}

    def _restore_back(self, alive: Sequence[str], lost: Sequence[str], base: Mapping[str, Any],
                      touched: bool) -> None:
        """Generation g from the kept revision into ``alive`` (all stop serving first)."""
        assert self.record is not None
        g = self.record.from_generation
        if self.revisions is None:
            raise _error("lifecycle_revision_missing", f"no revisions to restore generation {g} from: pass revisions=")
        self.coordinator.request_all(alive, dict(base))
        if touched:
            self.revisions.restore(_Only(self.coordinator, alive), g, check=not lost)
        self.coordinator.request_all(alive, {**base, "restored": True})
        self._check_back(alive, lost)

    def _check_back(self, alive: Sequence[str], lost: Sequence[str]) -> None:
        """The targets' bytes against generation g: the tensors' digests when every target
        answers; with some lost (their boxes missing from the combination), each
        survivor's partials against those it verified when it activated g."""
        assert self.record is not None
        g = self.record.from_generation
        self._step("restored")
        if not lost:
            got = self._target_digests(alive, g)
            self._compare(self.record.from_digests, got, "lifecycle_rollback_failed",
                          f"after the rollback to generation {g}, on the targets")
            return
        replies = self.coordinator.request_all(alive, {"op": "lc_content", "generation": g,
                                                       "block_elements": self.block_elements})
        differ = [w for w in alive if replies[w].get("matches_active") is not True]
        if differ:
            raise _error("lifecycle_rollback_failed",
                         f"after the rollback to generation {g}, target {', '.join(differ)} does not hold the bytes "
                         f"it verified at generation {g}")

    # ---- the whole update -------------------------------------------------------------

    def restore(self, generation: int) -> dict[str, Any]:
        """Every target to kept revision ``generation`` (an earlier one, say), as one
        version change: prepared, restored from the Store, verified against the
        revision's digests, activated at the barrier; or rolled back."""
        return self.run(None, generation, mode="restore")

    def run(self, bound: Optional[BoundPlan], to_generation: int, *, mode: str = "full", transfer_mode: str = "push",
            options: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        """Prepare, transfer, verify and commit; on any failure before the decision,
        abort and roll back, then raise the failure (its own code, naming the participant)
        saying that every target serves generation g again."""
        try:
            self.prepare(bound, to_generation, mode=mode, transfer_mode=transfer_mode, options=options)
            self.transfer()
            self.verify()
        except ManifestError as error:
            if self.record is None or self.record.decision == "commit":
                raise  # nothing was recorded: no target was told anything
            self.abort(error)
            done = self.rollback()
            back = f"; rolled back: every target serves generation {done['generation']}"
            if done["lost"]:
                back += f" but {', '.join(done['lost'])} (lost)"
            raise _error(_code(error), f"{error}{back}", getattr(error, "path", None)) from None
        return self.commit()

    # ---- a replacement coordinator ----------------------------------------------------

    def _serves(self, worker: str) -> Optional[int]:
        """The generation ``worker`` serves, or None (not serving, or not answering)."""
        try:
            status = self.statuses([worker])[worker]
        except ManifestError:
            return None
        return int(status["active"]) if status["serving"] else None

    def recover(self) -> Optional[dict[str, Any]]:
        """Finish what the record says: a commit decided → every target activates the new
        generation; no decision, or abort → abort and roll back. A finished update whose
        targets do not all serve its outcome (one was unreachable then and is back) is
        finished again for them. None when there is nothing to do.
        ``lifecycle_decision_stale`` when the record does not describe the targets."""
        self.log.claim(self.name, takeover=self.takeover)
        record = self.log.read()
        if record is not None and record.state == "done" and record.decision is not None:
            behind = [w for w in record.targets if w in self.coordinator.peers
                      and self._serves(w) != record.active_generation]
            if behind:
                record.state = "decided"  # in memory only: the record stays done
        if record is None or record.state == "done":
            self.log.release(self.name)
            return None
        self.record = record
        known = set(self.coordinator.peers)
        reachable = [w for w in record.targets if w in known]
        held = {}
        for worker in reachable:
            try:
                held.update(self.statuses([worker]))
            except ManifestError:
                pass
        for worker, status in held.items():
            generations = {status["active"], status["staged"]} - {None}
            if not generations <= {record.from_generation, record.to_generation}:
                raise _error("lifecycle_decision_stale",
                             f"{self.log.decision_path} describes generation {record.from_generation} -> "
                             f"{record.to_generation}, and target {worker} holds {sorted(generations)}")
        record.coordinator = self.name
        self.log.write(record)
        if record.decision == "commit":
            return self._finish_commit(record, time.perf_counter())
        if record.decision is None:
            self._save(state="decided", decision="abort",
                       reason={"code": "transfer_worker_lost", "message": f"coordinator {record.coordinator} "
                               "died before the decision", "touched": True})
        return self.rollback()


class _Only(Coordinator):
    """The coordinator with only ``targets`` as its target workers (a restore into the
    targets still reachable)."""

    def __init__(self, coordinator: Coordinator, targets: Sequence[str]) -> None:
        super().__init__(coordinator.transport)
        self._targets = sorted(targets)

    def workers(self, side: str, instance: Optional[str] = None) -> list[str]:
        if side == "target":
            return [w for w in self._targets if instance is None or w in super().workers(side, instance)]
        return super().workers(side, instance)
