"""The member role of a weight-update group: what a process that holds weights answers.

A :class:`Member` is a plain object, transport-free: it owns no process, thread or event
loop. Its holder (a Ray actor through :class:`weight_manifest_runtime.group.ray.GroupMember`, a
vLLM worker extension, a trainer, a child process on :mod:`.pipe`, or a test through
:mod:`.local`) registers its live tensors, then hands each call of the group's coordinator
to :meth:`Member.call` (or :meth:`Member.reply`, which turns a rejection into a reply).

The calls (``op``, then the request's members):

- ``inventory``: the runtime inventory of what it holds now;
- ``execute``: run its pairs of a bound plan (``bound_plan``, ``mode``, ``sessions``,
  ``options``, ``changed``, ``landing``) after checking its own fence (the core's rule)
  first; with ``partials`` (block elements) a pulling target also returns the partials of
  what landed, each tensor hashed once its last pair is in (:mod:`weight_manifest_runtime.transfer.landed`);
- ``content``: its fragments' content partials; ``snapshot`` / ``changed``: the base and
  the changed ranges of a delta (``snapshot`` with ``advance``: the bytes the last
  ``changed`` looked at become the base, without hashing again); ``delta_prepare`` / ``delta_apply``: as a pair's passive
  side, its packed area of a coalesced delta (:mod:`weight_manifest_runtime.transfer.delta`);
- ``activate``: the version it now serves (the coordinator's word after a verified
  update); ``fence``: its held fence (§17.7); ``ping``: liveness;
- ``window_open`` / ``window_close``: register its tensors with the transport for an
  update, and unregister them after (a member made with ``window=True`` starts closed);
- whatever extra ``handlers`` it was given (an example's ``verify``, a test's fault).

A call that carries a fencing ``epoch`` (every call of a versioned update does, §22.4) is
refused with ``lifecycle_fenced`` when the member has seen a greater one: the coordinator
that sent it was deposed. While :attr:`Member.writable` says no (a target that serves),
the calls that write its tensors (``execute`` as a target, ``delta_prepare`` and
``delta_apply`` as a pushed-to side) are refused before any byte moves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from weight_manifest import BoundPlan, ManifestError, content, live
from weight_manifest.errors import manifest_error as _error
from .. import protocol, transfer

__all__ = ["Handler", "Member", "ProgressSink"]

Handler = Callable[[dict[str, Any]], dict[str, Any]]
#: ``sink(worker_id, pairs)``: each executing pair's ``[source, target, done, total]``.
ProgressSink = Callable[[str, list[list[Any]]], None]


class Member:
    """One holder's side of an update. ``tensors`` are the live tensors it holds and
    ``where`` the keywords of :func:`live.runtime_inventory` (worker_id, endpoint,
    instance_id, generation, lease_id, rank, placement or descriptors/offsets, ...).
    ``backend`` moves bytes (an :class:`transfer.EngineBackend` with its engine, or a
    :class:`transfer.LocalBackend`) and ``session`` is the name peers reach it by.
    ``register`` overrides the (address, length) regions registered (default: each
    tensor's bytes); a staging buffer of ``staging_bytes`` is registered with them and
    serves every update (:class:`transfer.Staging`). ``progress``, when set, receives the
    executing pairs' progress at most every ``progress_seconds``. ``backends`` names other
    transports an ``execute`` request may choose (``"backend": "store"``). ``quantized``:
    the quantized forms of its bfloat16 fragments, with which it pushes a quantized plan's
    copies (contract §17.8)."""

    def __init__(
        self,
        tensors: Mapping[str, Any],
        *,
        backend: transfer.Backend,
        session: str,
        handlers: Optional[Mapping[str, Handler]] = None,
        register: Optional[Sequence[tuple[int, int]]] = None,
        staging_bytes: int = transfer.DEFAULT_STAGING_BYTES,
        progress: Optional[ProgressSink] = None,
        progress_seconds: float = 0.5,
        backends: Optional[Mapping[str, transfer.Backend]] = None,
        window: bool = False,
        quantized: Optional[Any] = None,
        **where: Any,
    ) -> None:
        self.tensors = dict(tensors)
        self.where = dict(where)
        self.worker_id = str(where["worker_id"])
        self.backend = backend
        #: Other transports an ``execute`` may name (``backend``: a Store client's for a
        #: restore); their memory registration is the caller's.
        self.backends = dict(backends or {})
        self.session = session
        #: Its bfloat16 fragments' quantized forms (:class:`transfer.quantize.QuantizedForms`),
        #: when it pushes a quantized plan's copies (contract §17.8).
        self.quantized = quantized
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.progress = progress
        self.progress_seconds = progress_seconds
        #: The version it serves: None until the group has brought it up to date.
        self.version: Optional[Any] = None
        #: The greatest fencing epoch a call carried here (0: none yet).
        self.epoch = 0
        self._epoch_lock = threading.Lock()
        self._window_lock = threading.Lock()
        #: Whether its tensors may be written now; a target's lifecycle says no while it
        #: serves (:class:`weight_manifest_runtime.lifecycle.TargetVersions`).
        self.writable: Callable[[], bool] = lambda: True
        self._activated = threading.Condition()
        inventory = self.inventory()
        if register is None:
            register = [(int(r["address"]), int(r["nbytes"])) for r in inventory["tensors"]]
        self.registered = list(register)
        #: Whether its tensors are registered with ``backend`` now (reachable by peers).
        #: With ``window`` they are only while an update needs them: :meth:`open_window`
        #: before, :meth:`close_window` after (the coordinator's ``window_open`` and
        #: ``window_close``; a target's lifecycle keeps it closed while it serves).
        self.window_open = False
        if not window:
            self.open_window()
        # Registered once, with the tensors, and reused by every update.
        self.staging = transfer.Staging(backend, staging_bytes) if staging_bytes >= 2 else None
        self.snapshot: Optional[content.Snapshot] = None
        # A coalesced delta's packed area, made at the first delta that needs one.
        self.landing: Optional[transfer.Landing] = None

    def open_window(self) -> bool:
        """Register its tensors with the backend; whether they were not (idempotent)."""
        with self._window_lock:
            if self.window_open:
                return False
            for address, length in self.registered:
                self.backend.register(address, length)
            self.window_open = True
            return True

    def close_window(self) -> None:
        """Unregister its tensors: no peer's batch can read or write them (idempotent)."""
        with self._window_lock:
            if self.window_open:
                for address, _ in self.registered:
                    self.backend.unregister(address)
                self.window_open = False

    def inventory(self) -> dict[str, Any]:
        """The runtime inventory of what this member holds now."""
        return live.runtime_inventory(self.tensors, **self.where)

    def fence(self) -> dict[str, Any]:
        """What it holds now, as a held fence (contract §17.7)."""
        return {"worker_id": self.worker_id, **{m: self.where.get(m) for m in ("instance_id", "lease_id", "generation")}}

    def wait_version(self, timeout: Optional[float] = None) -> Any:
        """Block until the group has activated a version here (a late joiner serves only
        then); the version, or None after ``timeout``."""
        with self._activated:
            self._activated.wait_for(lambda: self.version is not None, timeout)
            return self.version

    def admit(self, request: Mapping[str, Any]) -> None:
        """Refuse (``lifecycle_fenced``) a call whose ``epoch`` is older than the greatest
        this member has seen."""
        if request.get("epoch") is None:
            return
        epoch = int(request["epoch"])
        with self._epoch_lock:
            if epoch < self.epoch:
                raise _error("lifecycle_fenced",
                             f"worker {self.worker_id} has seen epoch {self.epoch}: a call of epoch {epoch} "
                             f"(coordinator {request.get('coordinator')}) comes from a deposed coordinator; "
                             "nothing was done")

    def _seen(self, request: Mapping[str, Any]) -> None:
        """After a call that succeeded: its epoch, if greater, is the one to beat (a
        refused call moves nothing, so no caller deposes a coordinator by being refused)."""
        if request.get("epoch") is not None:
            with self._epoch_lock:
                self.epoch = max(self.epoch, int(request["epoch"]))

    def _refuse_writes(self, what: str) -> None:
        if not self.writable():
            raise _error("lifecycle_state_invalid",
                         f"worker {self.worker_id} serves from its tensors: {what} would change bytes that "
                         "are being served; a target is written only between an update's prepare and its decision")

    def _execute(self, request: dict[str, Any]) -> dict[str, Any]:
        bound = BoundPlan.from_json(request["bound_plan"])
        side = "source" if request["mode"] == "push" else "target"
        if side == "target":
            self._refuse_writes("a pull")
        # Its own last look before the first byte: its lease and generation now.
        transfer.check_fence(bound, side, self.fence())
        changed = None if request.get("changed") is None else transfer.changed_from_wire(request["changed"])
        landing = None
        if request.get("landing") is not None:
            landing = {(str(a), str(b)): int(address) for a, b, address in request["landing"]}
        name = request.get("backend")
        if name is not None and name not in self.backends:
            raise _error("transfer_arguments_invalid", f"worker {self.worker_id} has no backend {name!r}")
        backend = self.backend if name is None else self.backends[name]
        landed = None
        if request.get("partials") is not None and side == "target":
            # A pulling target hashes each tensor as soon as its last pair is in.
            mine = [p for p in bound.pairs if p.target_worker_id == self.worker_id]
            landed = transfer.LandedPartials(self.tensors, self.inventory(), mine, int(request["partials"]))
        try:
            report = transfer.execute(
                bound, backend, request["sessions"], mode=request["mode"], worker=self.worker_id,
                staging=self.staging if name is None else None, changed=changed, landing=landing,
                progress=self._progress_sink(), on_pair=None if landed is None else landed.pair_done,
                quantized=self.quantized if side == "source" else None,
                options=transfer.ExecuteOptions.from_wire(request.get("options", {})),
            )
        except BaseException:
            if landed is not None:
                landed.abandon()
            raise
        reply: dict[str, Any] = {"report": report.to_dict()}
        if landed is not None:
            reply["partials"] = landed.finish()
        return reply

    def _delta_prepare(self, request: dict[str, Any]) -> dict[str, Any]:
        bound = BoundPlan.from_json(request["bound_plan"])
        push = request["mode"] == "push"
        if push:
            self._refuse_writes("a delta's landing")
        # Its own last look, as in execute: the passive side copies bytes too.
        transfer.check_fence(bound, "target" if push else "source", self.fence())
        changed = transfer.changed_from_wire(request["changed"])
        options = transfer.ExecuteOptions.from_wire(request.get("options", {}))
        if self.landing is None:
            self.landing = transfer.Landing(self.backend)
        entries = self.landing.prepare(bound, changed, self.worker_id, push, options.stage_below, options.max_segments,
                                       self.registered, str(request["token"]))
        return {"landing": entries}

    def _progress_sink(self) -> Optional[transfer.Progress]:
        if self.progress is None:
            return None
        pairs: dict[tuple[str, str], list[Any]] = {}
        last = [0.0]
        sink = self.progress

        def record(source: str, target: str, done: int, total: int) -> None:
            pairs[(source, target)] = [source, target, done, total]
            now = time.monotonic()
            if now - last[0] >= self.progress_seconds or done == total:
                last[0] = now
                sink(self.worker_id, list(pairs.values()))

        return record

    def call(self, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """The result of one call; a rejection raises :class:`ManifestError`."""
        body = dict(request)
        protocol.check_request(op, body, where=f"received by worker {self.worker_id}")
        self.admit(body)
        result = self._call(op, body)
        self._seen(body)
        return result

    def _call(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        if op == "inventory":
            return {"inventory": self.inventory()}
        if op == "execute":
            return self._execute(body)
        if op == "content":
            block = int(body.get("block_elements", content.DEFAULT_BLOCK_ELEMENTS))
            return {"partials": content.partials(self.tensors, self.inventory(), block)}
        if op == "snapshot":
            block = int(body.get("block_elements", content.DEFAULT_BLOCK_ELEMENTS))
            if (body.get("advance") and self.snapshot is not None and self.snapshot.block_elements == block
                    and self.snapshot.advance()):
                return {"advanced": True}
            self.snapshot = content.Snapshot(self.tensors, self.inventory(), block)
            return {"advanced": False}
        if op == "changed":
            if self.snapshot is None:
                raise _error("transfer_arguments_invalid", f"worker {self.worker_id} has no snapshot to compare with")
            ranges = self.snapshot.changed(self.tensors)
            # The same pass hashed the bytes the delta sends: their partials verify it.
            return {"changed": [[w, d, transfer.ranges_to_wire(r)] for (w, d), r in ranges.items()],
                    "partials": self.snapshot.partials, "block_elements": self.snapshot.block_elements}
        if op == "delta_prepare":
            return self._delta_prepare(body)
        if op == "delta_apply":
            if self.landing is None:
                raise _error("transfer_arguments_invalid", f"worker {self.worker_id} prepared no delta")
            self._refuse_writes("a delta's scatter")
            return {"bytes": self.landing.apply(str(body.get("token")))}
        if op == "activate":
            with self._activated:
                self.version = body.get("version")
                self._activated.notify_all()
            return {}
        if op == "fence":
            return {"fence": self.fence()}
        if op == "window_open":
            if not self.writable() and body.get("write"):
                self._refuse_writes("opening its memory to writes")
            return {"opened": self.open_window()}
        if op == "window_close":
            self.close_window()
            return {}
        if op == "ping":
            return {"worker_id": self.worker_id, "version": self.version}
        if op in self.handlers:
            return self.handlers[op](body)
        raise _error("transfer_arguments_invalid", f"unknown request {op!r}")

    def reply(self, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`call` as a reply a transport carries: ``{"ok": true, ...result}`` or
        ``{"ok": false, "error": {"code", "message", "path"}}`` (an exception's own
        attributes do not survive every transport)."""
        try:
            return {"ok": True, **self.call(op, request)}
        except ManifestError as error:
            return {"ok": False, "error": {"code": error.code, "message": str(error), "path": error.path}}

    def close(self) -> None:
        """Unregister this member's memory (idempotent)."""
        self.close_window()
        self.registered = []
        if self.staging is not None:
            self.staging.close()
            self.staging = None
        if self.landing is not None:
            self.landing.close()
            self.landing = None
        if self.quantized is not None:
            self.quantized.close()
            self.quantized = None
