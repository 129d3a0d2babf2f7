"""The coordinator's side of a versioned update: prepare, transfer, verify, then commit at
a barrier or abort and roll back; and the recovery of a replacement coordinator.

:class:`VersionedUpdate` drives one group (a :class:`~weight_manifest_runtime.group.Coordinator`
over members whose targets carry :class:`~.versions.TargetVersions`) with a
:class:`~.record.DecisionLog` beside it:

1. **prepare**: the group claimed (one coordinator per group), every target active at the
   same generation g, the bound plan's fences checked against every participant, what
   the rollback needs reserved (a delta: each target's undo log; a full update: revision
   g kept in the Store, :mod:`.revisions`), the record written (``prepared``), then each
   target told (it stops serving: the bytes change in place);
2. **transfer**: the executing workers run their pairs;
3. **verify**: every worker's fence again, then every target's content digests (from its
   own partials) against the sources'; only then is each target told it verified g+1 (a
   delta's target hashes only the blocks the delta wrote there and keeps the other
   blocks' values from its last verification, :mod:`.blocks`: a byte changed outside them
   is found by the full check, ``status(check=True)``, not by the delta's);
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
and rolls back. A record it cannot use (torn, left by an earlier run of the group, stale)
is set aside, and the targets' own states say what to do (:meth:`VersionedUpdate.recover`).

Every call of an update carries the coordinator's id and its fencing epoch (from the
group's exclusive claim, :mod:`.claim`): a member that has seen a greater epoch refuses it,
so a deposed coordinator's late calls change nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from weight_manifest import BoundPlan, ManifestError, content
from weight_manifest.errors import manifest_error as _error
from .. import transfer
from ..group import Coordinator
from ..transfer import ExecuteOptions
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
    ``mode="full"``; a delta whose generation g is kept there keeps no undo log and rolls
    back the same way); ``max_undo_bytes`` bounds a delta's undo log on any one target
    when g is not kept; ``name`` is this coordinator's id (default: unique per process)."""

    def __init__(self, coordinator: Coordinator, log: DecisionLog, *, revisions: Optional[Revisions] = None,
                 name: Optional[str] = None, on_step: Optional[StepHook] = None,
                 block_elements: int = content.DEFAULT_BLOCK_ELEMENTS, takeover: bool = False,
                 save_revisions: bool = True, max_undo_bytes: Optional[int] = None) -> None:
        import os
        import uuid

        #: The group's coordinator without a fencing token (``coordinator`` is it with
        #: this update's epoch once the group is claimed).
        self.group = coordinator
        self.coordinator, self.log, self.revisions = coordinator, log, revisions
        #: The fencing epoch of this coordinator's claim (0 before it claims).
        self.epoch = 0
        self.name = name or f"coordinator-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.on_step = on_step
        self.block_elements = block_elements
        self.takeover = takeover
        #: After each commit, keep the new generation in ``revisions`` (from the targets).
        self.save_revisions = save_revisions
        #: The largest undo log a delta may keep on one target (None: no bound); a delta
        #: whose undo log would exceed it is refused (``lifecycle_undo_too_large``).
        self.max_undo_bytes = max_undo_bytes
        #: Whether the open delta's targets keep an undo log (no: revision g is kept in
        #: ``revisions``, and the rollback restores it).
        self.undo = False
        self.record: Optional[Decision] = None
        self.bound: Optional[BoundPlan] = None
        self.changed: Optional[list[Any]] = None
        #: A delta's sources' partials, from the pass that found its changed blocks.
        self.source_partials: Optional[list[Any]] = None
        self.transfer_mode = "push"
        self.options = ExecuteOptions()
        self.figures: dict[str, float] = {}
        #: The bytes each target hashed in the last content check (a delta's verify: the
        #: blocks the delta wrote there; ``figures["hashed_bytes"]`` is their sum).
        self.hashed: dict[str, int] = {}

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

    def _claim(self) -> int:
        """Claim the group (exclusive) and fence every later call with its epoch."""
        self.epoch = self.log.claim(self.name, takeover=self.takeover)
        self.coordinator = self.group.fenced({"epoch": self.epoch, "coordinator": self.name})
        return self.epoch

    def _held(self, targets: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The status of each of ``targets`` that answers (the others are left out)."""
        known = set(self.group.peers)
        held: dict[str, dict[str, Any]] = {}
        for worker in targets:
            if worker not in known:
                continue
            try:
                held.update(self.group.request_all([worker], {"op": "lc_status"}))
            except ManifestError:
                pass
        return held

    @staticmethod
    def _foreign(record: Decision, held: Mapping[str, Mapping[str, Any]]) -> Optional[str]:
        """Why ``record`` was not made for the targets that answer (None if it was): it
        names other incarnations of them (an earlier run of the group), or none."""
        common = [w for w in record.targets if w in held]
        if not common:
            return "names none of the group's targets"
        other = [w for w in common if record.incarnations.get(w) != held[w].get("incarnation")]
        if other:
            return (f"was made for another incarnation of target {other[0]} (an earlier run of the group, "
                    f"generations {record.from_generation} -> {record.to_generation})")
        return None

    def targets(self) -> list[str]:
        """The target workers of the open update (or of the group)."""
        return list(self.record.targets) if self.record is not None else self.coordinator.workers("target")

    def statuses(self, targets: Optional[Sequence[str]] = None, check: bool = False) -> dict[str, dict[str, Any]]:
        """Each target's ``lc_status`` (:meth:`~.versions.TargetVersions.status`)."""
        ids = list(targets) if targets is not None else self.targets()
        return self.coordinator.request_all(ids, {"op": "lc_status", "check": check})

    def _target_partials(self, targets: Sequence[str], generation: int) -> dict[str, list[Any]]:
        """Each target's partials of ``generation`` (each target hashes what it holds, or a
        delta's target only the blocks the delta wrote there); :attr:`hashed` says how
        many bytes each hashed."""
        replies = self.coordinator.request_all(targets, {"op": "lc_content", "generation": generation,
                                                         "block_elements": self.block_elements})
        self.hashed = {w: int(replies[w].get("hashed_bytes", 0)) for w in targets}
        return {w: replies[w]["partials"] for w in targets}

    def _target_digests(self, targets: Sequence[str], generation: int) -> dict[str, str]:
        """The targets' digests of ``generation`` (:meth:`_target_partials` combined)."""
        partials = self._target_partials(targets, generation)
        return content.digests((r for w in targets for r in partials[w]), self.block_elements)

    # ---- the steps --------------------------------------------------------------------

    def prepare(self, bound: Optional[BoundPlan], to_generation: int, *, mode: str = "full",
                transfer_mode: str = "push", options: ExecuteOptions = ExecuteOptions()) -> Decision:
        """Check, reserve and record the update of the bound plan's targets to
        ``to_generation`` (``mode="restore"``: of the group's targets to kept revision
        ``to_generation``, no bound plan); every target stops serving. See the module's
        step 1."""
        if mode not in MODES:
            raise _error("transfer_arguments_invalid", f"mode must be one of {MODES}, not {mode!r}")
        self.record = None
        started = time.perf_counter()
        if (bound is None) != (mode == "restore"):
            raise _error("transfer_arguments_invalid", "a restore takes no bound plan; an update needs one")
        held_before = (self.log.owner() or {}).get("coordinator") == self.name
        self._claim()
        try:
            return self._prepare(bound, to_generation, mode, transfer_mode, options, started)
        except BaseException:
            if self.record is None and not held_before:
                self.log.release(self.name)  # nothing recorded, no target told: the claim is free again
            raise

    def _prepare(self, bound: Optional[BoundPlan], to_generation: int, mode: str, transfer_mode: str,
                 options: ExecuteOptions, started: float) -> Decision:
        try:
            previous = self.log.read()
        except ManifestError as error:
            raise _error(_code(error), f"{error}: recover() sets it aside and brings every target back into "
                         "service from what it holds") from None
        targets = sorted({p.target_worker_id for p in bound.pairs}) if bound is not None else \
            self.coordinator.workers("target")
        held = self.statuses(targets)
        if previous is not None:
            why = self._foreign(previous, held)
            if why is not None:
                self.log.set_aside(f"set aside by coordinator {self.name} (epoch {self.epoch}): the record {why}")
                previous = None
        if previous is not None and previous.state != "done":
            raise _error("lifecycle_state_invalid",
                         f"group {self.log.group} has an open update to generation {previous.to_generation} "
                         f"(state {previous.state}): recover() first")
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
        known = None if previous is None else (previous.to_digests if previous.decision == "commit"
                                               else previous.from_digests)
        if previous is not None and previous.active_generation == base and previous.targets == targets \
                and not unhashed and known:
            from_digests = dict(known)
        else:
            # No record of what generation g digests to (a first update): its targets say.
            from_digests = self._target_digests(targets, base)
        if mode == "restore" and (self.revisions is None or self.revisions.digests(to_generation) is None):
            raise _error("lifecycle_revision_missing", f"revision {to_generation} is not kept: it cannot be restored")
        if mode in ("full", "restore"):
            kept = self.revisions.digests(base) if self.revisions is not None else None
            if kept is None:
                raise _error("lifecycle_revision_missing",
                             f"a full update's rollback restores generation {base} from the Store, and revision "
                             f"{base} is not kept: save it first (revisions.save(coordinator, {base}, \"target\"))")
            differ = content.compare(kept, from_digests)
            if differ:
                raise _error("lifecycle_revision_missing",
                             f"a full update's rollback restores generation {base} from the Store, and kept revision "
                             f"{base} differs from what the targets verified at tensor {differ[0]}"
                             f"{f' and {len(differ) - 1} more' if len(differ) > 1 else ''}: the revision or a "
                             "target's bytes changed since (status(check=True) tells which target); save it again "
                             "from bytes that are generation {base}".replace("{base}", str(base)))
        changed = None
        self.source_partials = None
        self.undo = False
        if mode == "delta" and bound is not None:
            sources = sorted({p.source_worker_id for p in bound.pairs})
            # The pass that found the changed blocks hashed the bytes the delta sends.
            changed, self.source_partials = self.coordinator.changed(sources, self.block_elements)
            kept = self.revisions.digests(base) if self.revisions is not None else None
            # Revision g kept with what the targets verified: the rollback restores it, and
            # no target copies the bytes the delta writes.
            self.undo = kept is None or bool(content.compare(kept, from_digests))
            if self.undo and self.max_undo_bytes is not None:
                self._bound_undo(bound, changed, targets, base)
        self.record = Decision(group=self.log.group, coordinator=self.name, epoch=self.epoch, from_generation=base,
                               to_generation=to_generation, mode=mode, targets=targets, from_digests=from_digests,
                               active_generation=base,
                               incarnations={w: str(s.get("incarnation")) for w, s in held.items()})
        self.bound, self.changed, self.transfer_mode = bound, changed, transfer_mode
        self.options = options
        self.log.write(self.record)
        request: dict[str, Any] = {"op": "lc_prepare", "from_generation": base, "to_generation": to_generation,
                                   "mode": mode}
        if mode == "delta" and bound is not None:
            request.update(bound_plan=bound.to_json(), changed=changed, undo=self.undo)
        replies = self.coordinator.request_all(targets, request)
        self.figures = {"prepare_seconds": time.perf_counter() - started,
                        "undo_bytes": float(sum(int(r["undo_bytes"]) for r in replies.values()))}
        self._step("prepared")
        return self.record

    def _bound_undo(self, bound: BoundPlan, changed: Any, targets: Sequence[str], base: int) -> None:
        """``lifecycle_undo_too_large`` (nothing recorded, no target told) when the undo
        log of some target would exceed :attr:`max_undo_bytes`."""
        ranges = transfer.changed_from_wire(changed or [])
        sizes = {w: int((s[:, 1] - s[:, 0]).sum()) for w in targets
                 for s in [transfer.written_ranges(bound, w, ranges)]}
        worker = max(sizes, key=lambda w: sizes[w])
        if sizes[worker] > int(self.max_undo_bytes or 0):
            raise _error("lifecycle_undo_too_large",
                         f"the delta's undo log on target {worker} would hold {sizes[worker]} bytes (the bytes the "
                         f"delta writes there; {sum(sizes.values())} on all targets), more than max_undo_bytes="
                         f"{self.max_undo_bytes}: keep revision {base} in the update's revisions (revisions.save("
                         f"coordinator, {base}, \"target\")), then a delta keeps no undo log and rolls back from it, "
                         "or raise max_undo_bytes")

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
            self.figures["bytes"] = float(sum(p["bytes"] for r in reports.values() for p in r["pairs"]))
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
        landed = self._target_partials(record.targets, record.to_generation)
        self.figures["hashed_bytes"] = float(sum(self.hashed.values()))
        # The one content check of an update (replicas that differ, boxes that do not
        # combine: some target's bytes are wrong).
        self.coordinator.verify_content(self.block_elements, expected=expected, target_partials=landed,
                                        when=f"after the update to generation {record.to_generation}")
        clock = time.perf_counter()
        self.coordinator.request_all(record.targets, {"op": "lc_verified", "generation": record.to_generation})
        self.figures["barrier_seconds"] = time.perf_counter() - clock
        # Not written: the decision that follows carries it (a replacement that finds the
        # record still prepared aborts, as it would here).
        record.state, record.to_digests = "verified", dict(expected)
        self.figures["verify_seconds"] = time.perf_counter() - started
        self._step("verified")

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
        result: dict[str, Any] = {"generation": record.to_generation, "committed": True, "lost": lost,
                                  "undo_log": record.mode == "delta" and self.undo}
        if (self.revisions is not None and self.save_revisions and record.to_digests
                and self.revisions.digests(record.to_generation) is None):
            # Off the barrier (every target serves already): the next update's generation g.
            clock = time.perf_counter()
            result.update(self._keep_revision(record))
            self.figures["save_seconds"] = time.perf_counter() - clock
        return {**result, **self.figures}

    def _keep_revision(self, record: Decision) -> dict[str, Any]:
        """Keep the committed generation as a revision, only if what is read digests to
        what was verified: from the targets (with one lost, or a byte changed there after
        the verify, from the sources, which the verify found equal)."""
        assert self.revisions is not None
        whole = all(self.coordinator.alive(record.targets).values())
        errors: list[dict[str, Any]] = []
        for side in (("target", "source") if whole else ("source",)):
            try:
                self.revisions.save(self.coordinator, record.to_generation, side, expected=record.to_digests)
                return {"revision_saved": True, "revision_side": side,
                        **({"revision_errors": errors} if errors else {})}
            except ManifestError as error:
                errors.append({"side": side, "code": _code(error), "message": str(error)})
        return {"revision_saved": False, "revision_error": errors[-1], "revision_errors": errors}

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
        (they stay out of service) and those that serve. A target that serves g already
        is left serving (and reported so). A delta's undo log that does not bring back g
        (a byte corrupted outside the delta's ranges) is followed by a restore of
        revision g when one is kept."""
        record = self.record
        if record is None or record.decision != "abort":
            raise _error("lifecycle_state_invalid", "rollback follows an abort decision")
        started = time.perf_counter()
        g = record.from_generation
        alive = [w for w, up in self.coordinator.alive(record.targets).items() if up]
        lost = [w for w in record.targets if w not in alive]
        touched = bool((record.reason or {}).get("touched", True))
        # A delta whose targets keep no undo log (revision g was kept) goes back as a full
        # update does: revision g restored, checked against g's digests.
        route = record.mode
        if route == "delta" and any(not st["serving"] and not st.get("undo") for st in self._held(alive).values()):
            route = "full"
        base: dict[str, Any] = {"op": "lc_rollback", "generation": g, "mode": route}
        try:
            replies = self.coordinator.request_all(alive, base)
            back = [w for w in alive if not replies[w].get("serving")]
            if route == "delta":
                try:
                    self._check_back(alive, lost)
                except ManifestError:
                    if self.revisions is None or self.revisions.digests(g) is None:
                        raise
                    self._restore_back(back, alive, lost, True)
            else:
                self._restore_back(back, alive, lost, touched)
            if back:
                self.coordinator.request_all(back, {"op": "lc_verified", "generation": g})
            for worker in back:
                self.coordinator.request_all([worker], {"op": "lc_activate", "generation": g})
        except ManifestError as error:
            held = self._held(alive)
            out = [w for w in alive if not held.get(w, {}).get("serving")]
            serving = [w for w in alive if w not in out]
            raise _error("lifecycle_rollback_failed",
                         f"the rollback to generation {g} did not finish ({_code(error)}: {error}); targets "
                         f"{', '.join(out) or 'none'} stay out of service until a coordinator recovers them"
                         + (f"; {', '.join(serving)} serve" if serving else "")) from None
        self._save(durable=False, state="done", active_generation=g)
        self.log.release(self.name)
        self.figures["rollback_seconds"] = time.perf_counter() - started
        self._step("rolled_back")
        return {"generation": g, "committed": False, "lost": lost, **self.figures}

    def _restore_back(self, back: Sequence[str], alive: Sequence[str], lost: Sequence[str], touched: bool) -> None:
        """Generation g from the kept revision into ``back`` (the targets that do not
        serve; they stopped serving at the rollback's first call), then all of ``alive``
        checked."""
        assert self.record is not None
        g = self.record.from_generation
        if self.revisions is None:
            raise _error("lifecycle_revision_missing", f"no revisions to restore generation {g} from: pass revisions=")
        if touched and back:
            whole = not lost and len(back) == len(alive) and bool(self.record.from_digests)
            self.revisions.restore(_Only(self.coordinator, back), g, check=whole)
        if back:
            self.coordinator.request_all(back, {"op": "lc_rollback", "generation": g, "mode": "full",
                                                "restored": True})
        self._check_back(alive, lost)

    def _check_back(self, alive: Sequence[str], lost: Sequence[str]) -> None:
        """The targets' bytes against generation g: the tensors' digests when every target
        answers and g's digests are known; otherwise each target's partials against those
        it verified when it activated g."""
        assert self.record is not None
        g = self.record.from_generation
        self._step("restored")
        if not lost and self.record.from_digests:
            got = self._target_digests(alive, g)
            content.check(self.record.from_digests, got, code="lifecycle_rollback_failed",
                          when=f"after the rollback to generation {g}", against=f"generation {g}'s",
                          outcome="they stay out of service")
            return
        replies = self.coordinator.request_all(alive, {"op": "lc_content", "generation": g,
                                                       "block_elements": self.block_elements})
        unknown = [w for w in alive if replies[w].get("matches_active") is None]
        if unknown:
            raise _error("lifecycle_rollback_failed",
                         f"after the rollback to generation {g}, target {', '.join(unknown)} cannot be checked: it "
                         f"never hashed generation {g} while it served it, and g's digests are not known")
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
            options: ExecuteOptions = ExecuteOptions()) -> dict[str, Any]:
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
        status = self._held([worker]).get(worker)
        return int(status["active"]) if status is not None and status["serving"] else None

    def recover(self) -> Optional[dict[str, Any]]:
        """Finish what the record says: a commit decided → every target activates the new
        generation; no decision, or abort → abort and roll back. A finished update whose
        targets do not all serve its outcome (one was unreachable then and is back) is
        finished again for them. A record it cannot use (torn, made for an earlier run's
        targets, or describing generations the targets do not hold) is set aside and the
        targets' states decide (:meth:`_reconcile`). None when there is nothing to do."""
        self._claim()
        try:
            record = self.log.read()
        except ManifestError as error:
            return self._reconcile(f"the record cannot be read ({error})")
        if record is None:
            return self._reconcile(None)
        held = self._held(record.targets)
        why = self._foreign(record, held)
        if why is None:
            for worker, status in held.items():
                generations = {status["active"], status["staged"]} - {None}
                if not generations <= {record.from_generation, record.to_generation}:
                    why = (f"describes generation {record.from_generation} -> {record.to_generation}, and target "
                           f"{worker} holds {sorted(generations)}")
                    break
        if why is not None:
            return self._reconcile(f"the record {why}")
        if record.state == "done" and record.decision is not None:
            behind = [w for w in record.targets if w in held and self._serves(w) != record.active_generation]
            if behind:
                record.state = "decided"  # in memory only: the record stays done
        if record.state == "done":
            self.log.release(self.name)
            return None
        self.record = record
        died = record.coordinator
        record.coordinator, record.epoch = self.name, self.epoch
        self.log.write(record)
        if record.decision == "commit":
            return self._finish_commit(record, time.perf_counter())
        if record.decision is None:
            self._save(state="decided", decision="abort",
                       reason={"code": "transfer_worker_lost", "message": f"coordinator {died} died before the "
                               f"decision; coordinator {self.name} (epoch {self.epoch}) took over", "touched": True})
        return self.rollback()

    def _reconcile(self, why: Optional[str]) -> Optional[dict[str, Any]]:
        """No usable record (``why`` it was set aside, or None: there was none): what the
        group's targets hold decides. All serve: nothing to do. Some serve generation h
        and the rest verified h: a commit was decided (only a decision activates), so the
        rest activate h. Otherwise every target out of service goes back to the
        generation it served (its undo log, or the kept revision), checked against its
        own digests of what it served, and serves it again; or ``lifecycle_rollback_failed`` says why it cannot."""
        aside = self.log.set_aside(f"set aside by coordinator {self.name} (epoch {self.epoch}): {why}") \
            if why is not None else None
        note = {"set_aside": str(aside), "why": why} if aside is not None else {}
        held = self._held(self.group.workers("target"))
        out = sorted(w for w, st in held.items() if not st["serving"])
        serving = {int(st["active"]) for st in held.values() if st["serving"]}
        if not out:
            kept = self._keep_served(sorted(held), next(iter(serving))) if len(serving) == 1 else {}
            self.log.release(self.name)
            return {"generation": next(iter(serving)) if len(serving) == 1 else None, "committed": None,
                    "lost": [], **kept, **note} if note or kept else None
        incarnations = {w: str(st.get("incarnation")) for w, st in held.items()}
        h = next(iter(serving)) if len(serving) == 1 else None
        if h is not None and all(held[w]["state"] == "verified" and held[w]["staged"] == h for w in out):
            self.record = Decision(group=self.log.group, coordinator=self.name, epoch=self.epoch,
                                   from_generation=min(int(held[w]["active"] or 0) for w in out), to_generation=h,
                                   mode="full", targets=sorted(held), from_digests={}, state="decided",
                                   decision="commit", incarnations=incarnations)
            # What the targets were verified with (against the sources' digests), not what
            # they hold now: h is kept as a revision only with the digests it was verified at.
            replies = self.coordinator.request_all(sorted(held), {"op": "lc_content", "generation": h,
                                                                  "verified": True})
            partials = [r for w in sorted(held) for r in replies[w]["partials"]]
            self.record.to_digests = content.digests(
                partials, int(partials[0].get("block", self.block_elements)) if partials else self.block_elements)
            self.log.write(self.record)
            return {**self._finish_commit(self.record, time.perf_counter()), **note}
        bases = {held[w]["active"] for w in out}
        if len(bases) != 1 or None in bases:
            raise _error("lifecycle_rollback_failed",
                         f"without a usable record, the targets out of service ({', '.join(out)}) served different "
                         f"generations ({sorted(map(str, bases))}): no single generation to bring them back to")
        g = int(next(iter(bases)))
        staged = [int(held[w]["staged"]) for w in out if held[w]["staged"] is not None]
        # Only targets that serve g (or none) join the check; others serve another generation.
        targets = sorted(w for w in held if w in out or int(held[w]["active"]) == g)
        self.record = Decision(group=self.log.group, coordinator=self.name, epoch=self.epoch, from_generation=g,
                               to_generation=max(staged, default=g + 1), mode="delta" if all(
                                   held[w].get("undo") for w in out) else "full", targets=targets,
                               # Each target checked against its own digests of g: a
                               # target lost with the record may leave tensors uncovered.
                               from_digests={},
                               state="decided", decision="abort", active_generation=g, incarnations=incarnations,
                               reason={"code": "lifecycle_decision_stale", "message": str(why or "no record"),
                                       "touched": True})
        self.log.write(self.record)
        return {**self.rollback(), **note}

    def _keep_served(self, targets: Sequence[str], generation: int) -> dict[str, Any]:
        """Keep ``generation``, which every target serves, as a revision if it is not
        kept (a coordinator that died after the activations, before its save), only when
        each target's bytes still digest to what it verified when it activated."""
        if self.revisions is None or not self.save_revisions or self.revisions.digests(generation) is not None:
            return {}
        try:
            replies = self.coordinator.request_all(targets, {"op": "lc_content", "generation": generation,
                                                             "block_elements": self.block_elements})
            changed = [w for w in targets if replies[w].get("matches_active") is not True]
            if changed:
                raise _error("lifecycle_revision_invalid",
                             f"revision {generation} is not kept: target {', '.join(changed)} no longer holds (or never "
                             f"hashed) the bytes it verified at generation {generation}")
            expected = content.digests((r for w in targets for r in replies[w]["partials"]), self.block_elements)
            self.revisions.save(self.coordinator, generation, "target", expected=expected)
        except ManifestError as error:
            return {"revision_saved": False, "revision_error": {"code": _code(error), "message": str(error)}}
        return {"revision_saved": True, "revision_side": "target"}

    def view(self) -> dict[str, Any]:
        """The group as an operator sees it, in one call: ``claim`` (who holds it: its
        coordinator, process, host, epoch, and whether that process runs here),
        ``last_epoch``, ``record`` (the decision record, or ``{"unreadable": why}``) and
        ``targets`` (each target's status, or ``{"reachable": false}``)."""
        owner = self.log.owner()
        if owner is not None and "unreadable" not in owner:
            owner = {**owner, "alive": self.log.claims.live(owner)}
        try:
            read = self.log.read()
            record: Optional[dict[str, Any]] = None if read is None else json.loads(read.to_json())
        except ManifestError as error:
            record = {"unreadable": str(error)}
        targets = self.group.workers("target")
        held = self._held(targets)
        return {"group": self.log.group, "claim": owner, "last_epoch": self.log.claims.last_epoch(),
                "record": record, "targets": {w: held.get(w, {"reachable": False}) for w in targets}}


class _Only(Coordinator):
    """The coordinator with only ``targets`` as its target workers (a restore into the
    targets still reachable)."""

    def __init__(self, coordinator: Coordinator, targets: Sequence[str]) -> None:
        super().__init__(coordinator.transport)
        self.token = dict(coordinator.token)
        self._targets = sorted(targets)

    def workers(self, side: str, instance: Optional[str] = None) -> list[str]:
        if side == "target":
            return [w for w in self._targets if instance is None or w in super().workers(side, instance)]
        return super().workers(side, instance)
