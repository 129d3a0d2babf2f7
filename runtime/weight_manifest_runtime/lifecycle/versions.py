"""A target's generations: which one it serves, the one being staged, and its undo log.

:class:`TargetVersions` sits beside a target's :class:`~weight_manifest_runtime.group.Member` and
adds the lifecycle's calls to it (``lc_status``, ``lc_prepare``, ``lc_content``,
``lc_verified``, ``lc_activate``, ``lc_rollback``; ``lc_content`` with ``verified`` gives the
partials it was verified with, without hashing). The bytes of an update land in place,
in the tensors the engine serves from, so a target serves (``serving``) only in state
``active``; from its ``lc_prepare`` until the coordinator's word it is inactive:

    active(g) --prepare(g+1)--> updating --content+verified--> verified(g+1)
      verified(g+1) --activate(g+1)--> active(g+1)              (commit)
      updating|verified --rollback(g)--> restored --content+verified(g)--> verified(g)
      verified(g) --activate(g)--> active(g)                    (abort)

A target never activates a generation it has not verified (``lifecycle_not_verified``):
its ``lc_verified`` comes only after the coordinator compared every target's content
digests (from the partials this target gave in ``lc_content``) with the sources' (or, on
a rollback, with generation g's). A target that loses its coordinator stays inactive
until a coordinator (a replacement reading the durable record) tells it; after
``orphan_seconds`` without a word its status says ``orphaned`` (for a health check), and
it still does not activate on its own.

Fencing (§22.4): every call but ``lc_status`` carries the coordinator's id and epoch.
The member refuses an epoch older than any it has seen (:meth:`Member.admit`); a call on
the open update from a coordinator that did not prepare it is refused
(``lifecycle_fenced``) unless its epoch is greater (a replacement that took the group
over, :meth:`VersionedUpdate.recover`). While the target serves, its tensors are not
writable (:attr:`Member.writable`): a pull into it, a delta's landing and a Store restore
are refused; a rollback of a target that serves g changes nothing and says so
(``serving``). Each target has an ``incarnation`` (new with every process that holds it):
a decision record made for other incarnations was left by an earlier run of the group.

For a delta, ``lc_prepare`` keeps the old bytes of exactly the ranges the delta will write
here (:func:`weight_manifest_runtime.transfer.written_ranges`): the undo log, at most the delta's
bytes on this target. ``lc_rollback`` writes them back. A full update keeps nothing here:
its rollback restores generation g from the Store (:mod:`.revisions`); nor does a delta
prepared with ``undo: false`` (the coordinator keeps revision g, and restores it).

**A delta's check costs what it wrote.** The target keeps the block values of the
generation it last verified (:mod:`.blocks`); a delta's ``lc_content`` re-hashes only the
blocks of the ranges the delta wrote here (rounded out to whole blocks of its fragments,
``hashed_bytes`` in the reply) and takes every other block's value from what it keeps. Its
digests are exactly a full hash's when no byte outside those ranges changed since the last
verification; a byte changed there (a memory fault, a stray write) is **not** seen by the
delta's check. The full check, ``status(check=True)`` (``consistent``), hashes every byte
against what was verified: run it periodically, after a fault, and before keeping a
revision. A full update, a restore and a rollback hash every byte, and what they verified
replaces the kept values; a rollback or a failed update drops the delta's, so kept values
are never those of bytes that changed.

The serving side: :meth:`TargetVersions.wait_active` (and :meth:`activated`, its
awaitable) blocks until the target serves (a given generation or later);
:meth:`on_activate` registers a callback; :meth:`status` reports the generation held and,
with ``check``, whether its bytes still digest to what was verified (``consistent``).
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from weight_manifest import BoundPlan, content
from weight_manifest.errors import manifest_error as _error
from .. import transfer
from ..group.member import Handler, Member
from . import blocks

__all__ = ["DEFAULT_ORPHAN_SECONDS", "TARGET_STATES", "TargetVersions"]

#: Seconds without a coordinator's call after which an inactive target reports itself
#: ``orphaned`` (it stays inactive: only a coordinator activates).
DEFAULT_ORPHAN_SECONDS = 300.0
TARGET_STATES = ("active", "inactive", "updating", "restored", "verified")
#: The states of an open update (the target does not serve).
OPEN_STATES = ("updating", "restored", "verified")


class TargetVersions:
    """The generations of ``member`` (a target). ``generation`` is the one its bytes hold
    now (it serves it at once), or None for a target that holds nothing yet."""

    def __init__(self, member: Member, generation: Optional[int] = None, *,
                 orphan_seconds: float = DEFAULT_ORPHAN_SECONDS) -> None:
        self.member = member
        self.orphan_seconds = orphan_seconds
        self._lock = threading.Condition()
        self.state = "active" if generation is not None else "inactive"
        #: The generation it serves (state ``active``) or last served.
        self.active: Optional[int] = generation
        #: The generation being staged, restored or verified (not served).
        self.staged: Optional[int] = None
        self.coordinator: Optional[str] = None
        #: The epoch of the coordinator that holds the open update.
        self.open_epoch = 0
        #: This target's life: new with every object (a restarted process has another).
        self.incarnation = uuid.uuid4().hex
        self._heard = time.monotonic()
        self._undo: Optional[tuple[np.ndarray, list[tuple[int, int, int]]]] = None
        self._checked: Optional[tuple[int, list[dict[str, Any]]]] = None
        self._active_partials: Optional[list[dict[str, Any]]] = None
        #: The block values of the generation it last verified (``_active_partials``'s).
        self._kept: Optional[blocks.VerifiedBlocks] = None
        #: The open delta's written ranges here (None: not a delta; every byte is hashed).
        self._written: Optional[np.ndarray] = None
        #: The check behind ``_checked``: what the kept values become at its activation.
        self._pending: Optional[blocks.Check] = None
        self._callbacks: list[Callable[[int], Any]] = []
        if generation is not None:
            member.call("activate", {"version": generation})
        member.handlers.update(self.handlers())
        member.writable = lambda: not self.serving
        if self.serving:
            member.close_window()  # served memory is not reachable from the network

    # ---- the serving side -------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Whether the engine may serve from these bytes now."""
        return self.state == "active"

    def wait_active(self, generation: Optional[int] = None, timeout: Optional[float] = None) -> Optional[int]:
        """Block until this target serves (``generation`` or a later one, if given); the
        generation it serves, or None after ``timeout``."""
        def ready() -> bool:
            return self.serving and (generation is None or (self.active is not None and self.active >= generation))
        with self._lock:
            if not self._lock.wait_for(ready, timeout):
                return None
            return self.active

    async def activated(self, generation: Optional[int] = None, timeout: Optional[float] = None) -> Optional[int]:
        """:meth:`wait_active` as an awaitable (it waits on a worker thread)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.wait_active, generation, timeout)

    def on_activate(self, callback: Callable[[int], Any]) -> None:
        """Call ``callback(generation)`` after every activation (on the caller's thread of
        ``lc_activate``; keep it short)."""
        self._callbacks.append(callback)

    def status(self, check: bool = False) -> dict[str, Any]:
        """The version held: ``active``, ``state``, ``serving``, ``staged``, ``undo_bytes``,
        ``orphaned`` and, with ``check``, ``consistent`` (its bytes digest to what it
        verified when it activated; None if it never did)."""
        with self._lock:
            out: dict[str, Any] = {
                "worker_id": self.member.worker_id, "active": self.active, "state": self.state,
                "serving": self.serving, "staged": self.staged, "coordinator": self.coordinator,
                "undo_bytes": int(self._undo[0].nbytes) if self._undo is not None else 0,
                "undo": self._undo is not None,
                "orphaned": not self.serving and time.monotonic() - self._heard > self.orphan_seconds,
                "hashed": self._active_partials is not None, "incarnation": self.incarnation,
                "kept_block_bytes": self._kept.nbytes if self._kept is not None else 0,
                "epoch": self.member.epoch, "open_epoch": self.open_epoch,
            }
            partials = self._active_partials
        if check:
            out["consistent"] = None if partials is None else self._partials(
                int(partials[0]["block"]) if partials else content.DEFAULT_BLOCK_ELEMENTS) == partials
        return out

    # ---- the coordinator's calls ------------------------------------------------------

    def handlers(self) -> dict[str, Handler]:
        """The lifecycle's calls, for ``member.handlers``."""
        return {"lc_status": self._status, "lc_prepare": self._prepare, "lc_content": self._content,
                "lc_verified": self._verified, "lc_activate": self._activate, "lc_rollback": self._rollback}

    def _hear(self, request: dict[str, Any]) -> None:
        self._heard = time.monotonic()

    def _status(self, request: dict[str, Any]) -> dict[str, Any]:
        self._hear(request)
        return self.status(check=bool(request.get("check")))

    def _refuse(self, why: str, code: str = "lifecycle_state_invalid") -> Exception:
        return _error(code, f"target {self.member.worker_id} (state {self.state}, generation {self.active}): {why}")

    def _fence(self, request: dict[str, Any]) -> tuple[str, int]:
        """The caller's coordinator and epoch; refused (``lifecycle_fenced``) without an
        epoch, or when another coordinator holds the open update with an epoch not older
        than the caller's (a greater one takes the open update over). Under the lock."""
        if request.get("epoch") is None or request.get("coordinator") is None:
            raise self._refuse("the call carries no coordinator and fencing epoch", "lifecycle_fenced")
        coordinator, epoch = str(request["coordinator"]), int(request["epoch"])
        if self.state in OPEN_STATES and self.coordinator not in (None, coordinator):
            if epoch <= self.open_epoch:
                raise self._refuse(f"the open update to {self.staged} belongs to coordinator {self.coordinator} "
                                   f"(epoch {self.open_epoch}), not to {coordinator} (epoch {epoch})",
                                   "lifecycle_fenced")
            self.coordinator, self.open_epoch = coordinator, epoch  # a replacement took it over
        return coordinator, epoch

    def _prepare(self, request: dict[str, Any]) -> dict[str, Any]:
        base, generation = int(request["from_generation"]), int(request["to_generation"])
        with self._lock:
            self._hear(request)
            if request.get("epoch") is None or request.get("coordinator") is None:
                raise self._refuse("the call carries no coordinator and fencing epoch", "lifecycle_fenced")
            coordinator, epoch = str(request["coordinator"]), int(request["epoch"])
            if self.state == "updating" and self.staged == generation and self.coordinator == coordinator:
                return {"undo_bytes": int(self._undo[0].nbytes) if self._undo is not None else 0}
            if self.state in OPEN_STATES and self.coordinator not in (None, coordinator):
                raise self._refuse(f"an update to {self.staged} by coordinator {self.coordinator} is open: "
                                   "recover() first", "lifecycle_coordinator_conflict")
            if self.state != "active" or self.active != base:
                raise self._refuse(f"an update from generation {base} needs it active at {base}")
            undo, written = None, None
            if request.get("mode") == "delta":
                ranges = transfer.changed_from_wire(request.get("changed") or [])
                written = transfer.written_ranges(BoundPlan.from_json(request["bound_plan"]), self.member.worker_id,
                                                  ranges)
                # No undo log when the coordinator keeps revision g (it restores that).
                undo = self._keep(written) if request.get("undo", True) else None
            self._undo, self._checked, self._written, self._pending = undo, None, written, None
            self.state, self.staged, self.coordinator = "updating", generation, coordinator
            self.open_epoch = epoch
            self.member.open_window()  # reachable from prepare to the decision
            self._lock.notify_all()
        return {"undo_bytes": int(undo[0].nbytes) if undo is not None else 0}

    def _keep(self, spans: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
        """The undo log: the bytes now in every range the delta will write here
        (``spans``)."""
        regions = self.member.registered
        total = int((spans[:, 1] - spans[:, 0]).sum()) if len(spans) else 0
        kept = np.empty(total, dtype=np.uint8)
        index: list[tuple[int, int, int]] = []
        offset = 0
        for start, end in spans.tolist():
            if not any(a <= start and end <= a + n for a, n in regions):
                raise self._refuse(f"the delta writes [{start:#x}, {end:#x}), outside its registered memory")
            ctypes.memmove(kept.ctypes.data + offset, start, end - start)
            index.append((start, offset, end - start))
            offset += end - start
        return kept, index

    def _partials(self, block: int) -> list[dict[str, Any]]:
        records = content.partials(self.member.tensors, self.member.inventory(), block)
        return [{**r, "block": block} for r in records]

    def _content(self, request: dict[str, Any]) -> dict[str, Any]:
        generation = int(request["generation"])
        block = int(request.get("block_elements", content.DEFAULT_BLOCK_ELEMENTS))
        with self._lock:
            self._hear(request)
            self._fence(request)
            if self.state not in ("updating", "restored", "verified") or self.staged != generation:
                if not (self.state == "active" and self.active == generation):
                    raise self._refuse(f"no bytes of generation {generation} to hash")
            if request.get("verified"):
                # What it was verified with (no new hash): a replacement without the
                # record learns g+1's digests from what the targets were checked against.
                kept = self._active_partials if self.state == "active" else (
                    self._checked[1] if self.state == "verified" and self._checked is not None else None)
                if kept is None:
                    raise self._refuse(f"it holds no verified digests of generation {generation}",
                                       "lifecycle_not_verified")
                return {"partials": kept, "matches_active": None}
            base = self._kept if self.state in OPEN_STATES and self._written is not None else None
            written = self._written
        inventory = self.member.inventory()
        if base is not None and written is not None and base.generation == self.active \
                and base.fits(inventory, block):
            check = base.rehash(self.member.tensors, written, generation)  # only the delta's blocks
        else:
            check = blocks.hash_all(self.member.tensors, inventory, block, generation)
        partials = check.partials
        with self._lock:
            self._checked, self._pending = (generation, partials), check
            if self.state == "active" and self._active_partials is None:
                self._active_partials = partials  # what it serves: the base of its own checks
                self._kept = check.kept()
            matches = None if self._active_partials is None or generation != self.active else \
                self._active_partials == partials
        return {"partials": partials, "matches_active": matches, "hashed_bytes": check.hashed_bytes}

    def _verified(self, request: dict[str, Any]) -> dict[str, Any]:
        generation = int(request["generation"])
        with self._lock:
            self._hear(request)
            self._fence(request)
            if self.state == "active" and self.active == generation:
                return {}
            if self.state not in ("updating", "restored", "verified") or self.staged != generation:
                raise self._refuse(f"generation {generation} is not the one staged here ({self.staged})",
                                   "lifecycle_not_verified")
            if self._checked is None or self._checked[0] != generation:
                raise self._refuse(f"its bytes of generation {generation} were never hashed for a check",
                                   "lifecycle_not_verified")
            self.state = "verified"
        return {}

    def _activate(self, request: dict[str, Any]) -> dict[str, Any]:
        generation = int(request["generation"])
        with self._lock:
            self._hear(request)
            self._fence(request)
            if self.state == "active" and self.active == generation:
                return {"active": generation}
            if self.state != "verified" or self.staged != generation:
                raise self._refuse(f"generation {generation} was not verified here", "lifecycle_not_verified")
            self.state, self.active, self.staged = "active", generation, None
            self._active_partials = self._checked[1] if self._checked is not None else None
            pending = self._pending
            self._kept = pending.kept() if pending is not None and pending.generation == generation else None
            self._undo, self._written, self._pending, self.coordinator, self.open_epoch = None, None, None, None, 0
            self.member.close_window()
            self._lock.notify_all()
            callbacks = list(self._callbacks)
        self.member.call("activate", {"version": generation})
        for callback in callbacks:
            callback(generation)
        return {"active": generation}

    def _rollback(self, request: dict[str, Any]) -> dict[str, Any]:
        """Back to generation ``generation`` (its active one): replay the undo log (a
        delta), or take the bytes a Store restore just wrote (``restored``: a full update).
        A target that serves ``generation`` already changes nothing and says so
        (``serving``); one that serves another generation refuses."""
        generation = int(request["generation"])
        with self._lock:
            self._hear(request)
            coordinator, epoch = self._fence(request)
            if self.state == "active":
                if self.active == generation:
                    return {"undone_bytes": 0, "serving": True}
                raise self._refuse(f"it serves generation {self.active}: it cannot go back to {generation}")
            if self.active != generation:
                raise self._refuse(f"it cannot go back to generation {generation}")
            undone = 0
            if request.get("mode") == "delta":
                if self._undo is None and self.state != "active":
                    raise self._refuse("it holds no undo log", "lifecycle_rollback_failed")
                if self._undo is not None:
                    kept, index = self._undo
                    for address, offset, n in index:
                        ctypes.memmove(address, kept.ctypes.data + offset, n)
                    undone = int(kept.nbytes)
            # Its bytes changed back: the next check hashes every byte (and what it
            # verifies replaces the kept values at the activation).
            self.state, self.staged, self._checked = "restored", generation, None
            self._written, self._pending = None, None
            self.coordinator, self.open_epoch = coordinator, max(self.open_epoch, epoch)
            self._lock.notify_all()
        return {"undone_bytes": undone, "serving": False}
