"""The orchestration of a weight update over a group's members, whatever carries the calls.

A :class:`Coordinator` holds a :class:`Transport` (members on Ray:
:class:`weight_manifest_runtime.group.ray.RayGroup`; child processes: :mod:`.pipe`; this process:
:mod:`.local`), which says who the members are (:class:`MemberInfo`: side, session, host,
inventory) and carries calls to them. From the members' inventories it builds each side's
runtime manifest, placement and binding (:class:`Side`), plans and binds, and runs
:meth:`Coordinator.update`: every participant's fence checked against the bound plan (the
core's rule, for each worker and for each side's binding rebuilt from fresh inventories),
each executing worker given its pairs, then the content check. Any member that fails, is
lost or times out fails the whole update, named with its host; the update is reported
only when every pair succeeded and every target verified, and only then may the caller
:meth:`~Coordinator.activate` a version on the targets.

The steps are separate calls (plan, bind, check_live, execute, verify, activate) so that
a lifecycle with a prepare and a commit barrier (and a replacement coordinator that reads
a durable decision) can sit on them without another protocol.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from weight_manifest import (
    BoundPlan, ManifestError, PlacementManifest, Plan, RuntimeBindingManifest, bind_plan, content,
    live, placement_manifest_from_runtime_manifest, plan, runtime_binding_from_runtime_manifest,
)
from weight_manifest.errors import manifest_error as _error
from .. import protocol, transfer

__all__ = ["Coordinator", "MemberInfo", "Outcome", "ProgressCallback", "Side", "Transport"]

#: ``on_progress(pairs)``: each executing pair's ``[source, target, done, total]``.
ProgressCallback = Callable[[list[list[Any]]], None]


@dataclass
class MemberInfo:
    """A member as its group knows it: its side's name, the session peers reach its
    engine by, the host it runs on, and the inventory it announced when it joined."""

    worker_id: str
    side: str
    session: str
    host: str
    inventory: dict[str, Any] = field(repr=False)


#: A call's outcome: the member's reply (``ok`` and the result or ``error``), or None and
#: why there is none (the member was lost or did not answer in time).
Outcome = tuple[Optional[dict[str, Any]], str]


class Transport(Protocol):
    """What carries the group's calls."""

    def members(self) -> dict[str, MemberInfo]:
        """The members now, by worker id."""

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None) -> dict[str, Outcome]:
        """Each worker's call (op, request), all in flight at once (or ``at_once`` at a
        time); every outcome, after all are in."""

    def refresh(self) -> tuple[list[str], list[str]]:
        """Look again at the membership: the worker ids that joined and that left."""

    def close(self) -> None:
        """Stop every member's service (where the transport owns it) and let go."""


class Side:
    """One side of an update as the coordinator sees it: its workers' inventories read by
    the core into a runtime manifest, its placement and its binding."""

    def __init__(self, inventories: Sequence[Mapping[str, Any]]) -> None:
        self.inventory = live.combine(inventories)
        self.manifest = live.read_inventory(self.inventory)
        self.placement: PlacementManifest = placement_manifest_from_runtime_manifest(self.manifest)
        self.binding: RuntimeBindingManifest = runtime_binding_from_runtime_manifest(self.manifest)


def _participants(bound: BoundPlan, side: str) -> list[str]:
    key = "source_worker_id" if side == "source" else "target_worker_id"
    return sorted({getattr(p, key) for p in bound.pairs})


class Coordinator:
    """Plans, binds, fences and drives updates between a group's members."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        #: The workers each instance had at its last fence check (one that left since is
        #: named, not taken for a changed binding).
        self._instances: dict[str, set[str]] = {}
        #: Members every call carries (a versioned update's fencing epoch, §22.4).
        self.token: dict[str, Any] = {}

    def fenced(self, token: Mapping[str, Any]) -> "Coordinator":
        """This coordinator with ``token`` (``epoch``, ``coordinator``) in every call it
        makes: a view sharing its transport and state."""
        view = copy.copy(self)
        view.token = dict(token)
        return view

    # ---- who ---------------------------------------------------------------------------

    @property
    def peers(self) -> dict[str, MemberInfo]:
        """The members now, by worker id."""
        return self.transport.members()

    def workers(self, side: str, instance: Optional[str] = None) -> list[str]:
        """The worker ids of ``side`` (of one instance, if given), sorted."""
        return sorted(w for w, m in self.peers.items()
                      if m.side == side and (instance is None or m.inventory.get("instance_id") == instance))

    def instances(self, side: str) -> list[str]:
        """The instance_ids of ``side``'s members (a DP replica each), sorted."""
        return sorted({str(m.inventory.get("instance_id")) for m in self.peers.values() if m.side == side})

    def side(self, side: str, workers: Optional[Iterable[str]] = None) -> Side:
        """The manifest, placement and binding of ``side`` (or of ``workers``) from the
        inventories they announced."""
        peers = self.peers
        ids = sorted(workers) if workers is not None else self.workers(side)
        return Side([peers[w].inventory for w in ids])

    def host_of(self, worker: str) -> str:
        member = self.transport.members().get(worker)
        return member.host if member is not None else "an unknown host"

    # ---- calls -------------------------------------------------------------------------

    def request_all(self, ids: Sequence[str], request: Mapping[str, Any],
                    per_worker: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    at_once: Optional[int] = None,
                    on_progress: Optional[ProgressCallback] = None,
                    alongside: Optional[Mapping[str, tuple[str, dict[str, Any]]]] = None) -> dict[str, dict[str, Any]]:
        """Send ``request`` (its ``op`` and members, merged with ``per_worker[id]``) to each
        worker and collect every reply; with ``at_once``, at most that many at a time;
        ``alongside``: other workers' (op, request) calls made in the same round (their
        replies are returned too). Raises ``transfer_worker_lost`` or the first worker's
        own error, naming the worker and its host, after every outcome is in."""
        op = str(request["op"])
        calls = {w: (op, {**{k: v for k, v in request.items() if k != "op"}, **(per_worker or {}).get(w, {}),
                          **self.token})
                 for w in ids}
        for w, (other, body) in (alongside or {}).items():
            calls.setdefault(w, (other, {**body, **self.token}))
        for w, (name, body) in calls.items():
            protocol.check_request(name, body, where=f"for worker {w}")
        outcomes = self.transport.call_all(calls, at_once=at_once, on_progress=on_progress)
        replies: dict[str, dict[str, Any]] = {}
        failures: list[tuple[str, str, str]] = []
        for w in calls:
            reply, why = outcomes[w]
            if reply is not None:
                protocol.check_reply(calls[w][0], reply, worker=w)
            if reply is None:
                failures.append((w, "transfer_worker_lost", f"worker {w} on {self.host_of(w)} was lost ({why})"))
            elif not reply.get("ok"):
                err = reply.get("error") or {}
                failures.append((w, str(err.get("code", "transfer_failed")),
                                 f"worker {w} on {self.host_of(w)}: {err.get('message')}"))
            else:
                replies[w] = reply
        if failures:
            code, text = failures[0][1], failures[0][2]
            more = "" if len(failures) == 1 else (
                f" (and {len(failures) - 1} more: " + "; ".join(f[2] for f in failures[1:]) + ")")
            raise _error(code, text + more)
        return replies

    def alive(self, ids: Sequence[str]) -> dict[str, bool]:
        """Whether each worker answers a ping now."""
        outcomes = self.transport.call_all({w: ("ping", {}) for w in ids})
        return {w: outcomes[w][0] is not None for w in ids}

    # ---- plan and bind -----------------------------------------------------------------

    def plan(self, sources: Optional[Iterable[str]] = None, targets: Optional[Iterable[str]] = None,
             **limits: Any) -> Plan:
        """The plan from the sources' placement (all source members, or ``sources``) to
        the targets'."""
        return plan(self.side("source", sources).placement, self.side("target", targets).placement, **limits)

    def bind(self, reshard: Plan, sources: Optional[Iterable[str]] = None,
             targets: Optional[Iterable[str]] = None) -> BoundPlan:
        """``reshard`` bound to both sides' announced bindings, fenced at their generations."""
        source, target = self.side("source", sources).binding, self.side("target", targets).binding
        return bind_plan(reshard, source, target, source_generation=source.generation,
                         target_generation=target.generation)

    def check_live(self, bound: BoundPlan, sides: Sequence[str] = ("source", "target")) -> None:
        """The bound plan's fences against what every participant of ``sides`` holds now:
        each worker's own fence (naming it), then each side's binding rebuilt from the
        fresh inventories (placement_id and digest too). A side not in ``sides`` (a Store
        restore's source) is taken as bound."""
        for side in sides:
            ids = _participants(bound, side)
            instance, everyone = self._holders(bound, side)
            gone = sorted(self._instances.get(str(instance), set()) - set(everyone))
            if gone:
                raise _error("transfer_worker_lost",
                             f"worker {gone[0]} of instance {instance} left the group; no target is ready")
            self._instances[str(instance)] = set(everyone)
            replies = self.request_all(everyone, {"op": "inventory"})
            for w in everyone:
                inventory = replies[w]["inventory"]
                transfer.check_fence(bound, side, {**inventory, "worker_id": w})
            transfer.check_fence(bound, side, Side([replies[w]["inventory"] for w in everyone]).binding)

    def _holders(self, bound: BoundPlan, side: str) -> tuple[str, list[str]]:
        """The instance ``side`` of ``bound`` was bound to and its workers now: the side's
        binding is the whole instance's (a worker whose every box the plan reads from
        another replica is in it, though it runs no pair)."""
        instance = str((bound.source if side == "source" else bound.target).get("instance_id"))
        ids = _participants(bound, side)
        return instance, sorted({*ids, *(w for w, m in self.peers.items() if m.inventory.get("instance_id") == instance)})

    def check_held(self, bound: BoundPlan) -> None:
        """Each worker's own fence (lease, generation, instance) against the bound plan
        now, naming the first that moved: the light check after a transfer (a side's
        placement does not change without its fence)."""
        for side in ("source", "target"):
            _, everyone = self._holders(bound, side)
            replies = self.request_all(everyone, {"op": "fence"})
            for w in everyone:
                transfer.check_fence(bound, side, replies[w]["fence"])

    # ---- the update --------------------------------------------------------------------

    def execute(self, bound: BoundPlan, *, mode: str = "push",
                options: transfer.ExecuteOptions = transfer.ExecuteOptions(),
                changed: Optional[list[Any]] = None, sessions: Optional[Mapping[str, str]] = None,
                at_once: Optional[int] = None, coalesce: bool = True,
                on_progress: Optional[ProgressCallback] = None,
                alongside: Optional[Mapping[str, tuple[str, dict[str, Any]]]] = None,
                alongside_replies: Optional[dict[str, dict[str, Any]]] = None,
                partials: Optional[int] = None,
                landed_partials: Optional[dict[str, list[Any]]] = None,
                backend: Optional[str] = None, windows: bool = True) -> dict[str, dict[str, Any]]:
        """Every executing worker runs its pairs of ``bound`` (push: the sources, pull: the
        targets) under ``options``; their reports. With ``changed`` (a delta) and ``coalesce``, each pair's
        small changed pieces move packed through the passive side's landing area
        (:mod:`weight_manifest_runtime.transfer.delta`): about one engine operation per staging round
        instead of one per changed block. A pair's failure towards a member that no longer
        answers is reported as that member's loss (``transfer_worker_lost``, named with its
        host). ``alongside``: calls to workers that do not execute, made while the pairs
        run (:meth:`request_all`); their replies go into ``alongside_replies``. With
        ``partials`` (block elements) and pull, each target returns the partials of what
        landed, hashed while its later pairs moved; they go into ``landed_partials``.
        ``backend`` names another transport of the executing members (their ``backends``).
        ``windows=False`` opens no participant's Transfer Engine window around the transfer:
        a Store restore's (its sources are the Store's objects, not members, and the Store
        moves bytes on its own registration)."""
        side = "source" if mode == "push" else "target"
        executing = _participants(bound, side)
        if not windows:
            return self._execute(bound, mode, options, changed, sessions, at_once, coalesce, on_progress, alongside,
                                 alongside_replies, partials, landed_partials, side, executing, backend)
        # Every participant's memory open for the transfer; closed again after it where
        # it was closed before (a windowed member: reachable only while it is needed).
        everyone = sorted({*_participants(bound, "source"), *_participants(bound, "target")})
        opened = self.request_all(everyone, {"op": "window_open"}, at_once=at_once,
                                  per_worker={w: {"write": True} for w in _participants(bound, "target")})
        try:
            return self._execute(bound, mode, options, changed, sessions, at_once, coalesce, on_progress, alongside,
                                 alongside_replies, partials, landed_partials, side, executing, backend)
        finally:
            closing = [w for w, reply in opened.items() if reply.get("opened")]
            if closing:
                try:
                    self.request_all(closing, {"op": "window_close"}, at_once=at_once)
                except ManifestError:
                    pass  # a member lost meanwhile: its memory went with it

    def _execute(self, bound: BoundPlan, mode: str, options: transfer.ExecuteOptions,
                 changed: Optional[list[Any]], sessions: Optional[Mapping[str, str]], at_once: Optional[int],
                 coalesce: bool, on_progress: Optional[ProgressCallback],
                 alongside: Optional[Mapping[str, tuple[str, dict[str, Any]]]],
                 alongside_replies: Optional[dict[str, dict[str, Any]]], partials: Optional[int],
                 landed_partials: Optional[dict[str, list[Any]]], side: str,
                 executing: list[str], backend: Optional[str]) -> dict[str, dict[str, Any]]:
        plan_json = bound.to_json()
        request: dict[str, Any] = {"op": "execute", "bound_plan": plan_json, "mode": mode,
                                   "sessions": dict(sessions or {w: m.session for w, m in self.peers.items()}),
                                   "options": options.to_wire()}
        if partials is not None and mode == "pull":
            request["partials"] = partials
        if backend is not None:
            request["backend"] = backend
        passive: list[str] = []
        token = ""
        per_worker: Optional[dict[str, dict[str, Any]]] = None
        if changed is not None:
            # Each worker is sent the changed ranges of the sources it pairs with only.
            partners: dict[str, set[str]] = {}
            for pair in bound.pairs:
                for w in (pair.source_worker_id, pair.target_worker_id):
                    partners.setdefault(w, set()).add(pair.source_worker_id)
            per_worker = {w: {"changed": [e for e in changed if e[0] in mine]} for w, mine in partners.items()}
            if coalesce and options.stage_below > 0 and options.staging_bytes >= 2:
                # Each pair's passive side reserves its packed area (pull: gathers into it).
                passive = _participants(bound, "target" if mode == "push" else "source")
                token = uuid.uuid4().hex
                replies = self.request_all(passive, {"op": "delta_prepare", "bound_plan": plan_json, "mode": mode,
                                                     "options": request["options"], "token": token},
                                           per_worker=per_worker, at_once=at_once)
                request["landing"] = [entry for w in passive for entry in replies[w]["landing"]]
        try:
            replies = self.request_all(executing, request, per_worker=per_worker, at_once=at_once,
                                       on_progress=on_progress,
                                       alongside=alongside)
            if alongside_replies is not None:
                alongside_replies.update({w: r for w, r in replies.items() if w not in executing})
            if landed_partials is not None and "partials" in request:
                landed_partials.update({w: replies[w]["partials"] for w in executing})
            if passive and mode == "push":
                # Every packed byte has landed: the targets scatter it into their tensors.
                self.request_all(passive, {"op": "delta_apply", "token": token}, at_once=at_once)
        except Exception as error:
            # A timed-out pair stays a timeout (a partitioned link); a failed one may be a
            # member's death.
            if getattr(error, "code", None) == "transfer_failed":
                self._name_the_lost(bound, error)
            raise
        return {w: replies[w]["report"] for w in executing}

    def _name_the_lost(self, bound: BoundPlan, error: BaseException) -> None:
        """After a failed pair: if a participant no longer answers, its loss is the cause."""
        peers = self.peers
        ids = [w for w in {*_participants(bound, "source"), *_participants(bound, "target")} if w in peers]
        gone = sorted(w for w, up in self.alive(ids).items() if not up)
        if gone:
            raise _error("transfer_worker_lost",
                         f"worker {gone[0]} on {self.host_of(gone[0])} was lost during the update ({error}); "
                         "no target is ready") from error

    def update(self, bound: BoundPlan, *, mode: str = "push",
               options: transfer.ExecuteOptions = transfer.ExecuteOptions(),
               verify: Optional[str] = None, verify_content: bool = True,
               block_elements: int = content.DEFAULT_BLOCK_ELEMENTS, delta: bool = False,
               coalesce: bool = True, after_transfer: Optional[Callable[[], Any]] = None,
               on_progress: Optional[ProgressCallback] = None) -> dict[str, Any]:
        """Run ``bound``: fences against the live bindings, every pair on its executing
        worker, then the content check (``verify_content``, on by default: every target's
        digests, combined from their partials, must equal the sources', tensor by tensor)
        and, with ``verify`` (a handler name), each target's own check. With ``delta``,
        only the source bytes changed since the sources' last :meth:`snapshot` move
        (``coalesce``: packed, :meth:`execute`; ``changed_seconds``: finding them, one
        hashing pass over the sources' bytes). ``after_transfer`` runs between the transfer and the checks (a test's fault);
        ``on_progress`` sees the pairs' progress while they run. Returns the totals, the
        pairs' reports and what was verified (``verified_tensors``: how many tensors' digests
        matched, 0 without ``verify_content``; ``target_checks``: each target's reply to
        ``verify``, empty without it); raises on any failure, and then no target is ready."""
        self.check_live(bound)
        sources, targets = _participants(bound, "source"), _participants(bound, "target")
        started = time.perf_counter()
        changed = None
        changed_seconds = 0.0
        # The sources' partials come from the pass that found the changed blocks (a delta),
        # or are hashed while the targets pull (the sources only serve reads then).
        source_partials: Optional[list[Any]] = None
        alongside = None
        if delta:
            changed, source_partials = self.changed(sources, block_elements)
            changed_seconds = time.perf_counter() - started
        elif verify_content and mode == "pull":
            alongside = {w: ("content", {"block_elements": block_elements})
                         for w in sources if w not in _participants(bound, "target")}
        others: dict[str, dict[str, Any]] = {}
        landed: dict[str, list[Any]] = {}
        workers = self.execute(bound, mode=mode, options=options, changed=changed, coalesce=coalesce,
                               on_progress=on_progress, alongside=alongside, alongside_replies=others,
                               # A delta's targets hash all their bytes once, after it.
                               partials=block_elements if verify_content and after_transfer is None and not delta
                               else None,
                               landed_partials=landed)
        seconds = time.perf_counter() - started
        if alongside and set(alongside) == set(sources):
            source_partials = [r for w in sources for r in others[w]["partials"]]
        pairs = [pair for report in workers.values() for pair in report["pairs"]]
        if after_transfer is not None:
            after_transfer()
        verify_seconds = 0.0
        verified: list[str] = []
        if verify_content:
            clock = time.perf_counter()
            verified = self.verify_content(block_elements, sources=sources, targets=targets,
                                           source_partials=source_partials,
                                           target_partials=landed if set(landed) == set(targets) else None)
            verify_seconds = time.perf_counter() - clock
        checks: dict[str, dict[str, Any]] = {}
        if verify is not None:
            replies = self.request_all(targets, {"op": verify})
            checks = {w: {k: v for k, v in r.items() if k != "ok"} for w, r in replies.items()}
        return {
            "bytes": sum(p["bytes"] for p in pairs),
            "segments": sum(p["segments"] for p in pairs),
            "runs": sum(p["runs"] for p in pairs),
            "staged_pieces": sum(p["staged_pieces"] for p in pairs),
            "batches": sum(p["batches"] for p in pairs),
            "wire_bytes": sum(p["wire_bytes"] for p in pairs),
            "seconds": seconds,
            "changed_seconds": changed_seconds,
            "verify_seconds": verify_seconds,
            "verified_tensors": len(verified),
            "target_checks": checks,
            "pairs": pairs,
            "workers": {w: {k: r[k] for k in ("seconds", "prepare_seconds")} for w, r in workers.items()},
        }

    def activate(self, workers: Sequence[str], version: Any) -> None:
        """Tell ``workers`` the version they now hold and serve (after a verified update)."""
        self.request_all(workers, {"op": "activate", "version": version})

    # ---- membership --------------------------------------------------------------------

    def refresh(self) -> tuple[list[str], list[str]]:
        """Look again at who is in the group: the worker ids that joined and that left
        (a member that left is dropped; the others keep running)."""
        self._instances.clear()
        return self.transport.refresh()

    def catch_up(self, joined: Sequence[str], peers: Sequence[str], version: Any, *,
                 mode: str = "pull", options: transfer.ExecuteOptions = transfer.ExecuteOptions()) -> dict[str, Any]:
        """Bring members that joined after ``version`` was activated (``joined``: one
        instance's target workers) to it from ``peers`` (workers that hold it, of one
        instance), verify by content, then activate it on them: only then do they serve."""
        peer_side, new_side = self.side("", peers), self.side("", joined)
        reshard = plan(peer_side.placement, new_side.placement)
        bound = bind_plan(reshard, peer_side.binding, new_side.binding,
                          source_generation=peer_side.binding.generation,
                          target_generation=new_side.binding.generation)
        result = self.update(bound, mode=mode, options=options)
        self.activate(list(joined), version)
        return result

    # ---- content -----------------------------------------------------------------------

    def digests(self, side: str, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS,
                workers: Optional[Sequence[str]] = None) -> dict[str, str]:
        """Each tensor's content digest on ``side`` (or over ``workers``), combined from
        their partials."""
        return self._digests(list(workers) if workers is not None else self.workers(side), block_elements)[0]

    def _digests(self, ids: Sequence[str], block_elements: int) -> tuple[dict[str, str], dict[str, list[str]]]:
        replies = self.request_all(ids, {"op": "content", "block_elements": block_elements})
        return _combined({w: replies[w]["partials"] for w in ids}, block_elements)

    def verify_content(self, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS,
                       sources: Optional[Sequence[str]] = None, targets: Optional[Sequence[str]] = None,
                       source_partials: Optional[Sequence[Mapping[str, Any]]] = None,
                       target_partials: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None, *,
                       expected: Optional[Mapping[str, str]] = None, when: str = "after the update") -> list[str]:
        """The content check of an update (:meth:`update`'s and a versioned update's): raise
        ``transfer_verify_failed`` naming every tensor whose digest on the targets is not
        the sources' (and the target workers holding the first), or saying that the
        targets' partials do not combine (replicas that differ, boxes that do not tile);
        else the tensors verified (every source tensor), sorted. The sources' digests are
        ``expected`` when known, else combined from ``source_partials`` (the sources'
        partials of the bytes they sent), else asked of ``sources`` now. The targets'
        partials are ``target_partials`` (worker -> partials of what landed, or a versioned
        update's targets' of the generation they staged) when already hashed, else asked
        of ``targets`` now. ``when`` begins the message."""
        if expected is not None:
            source = dict(expected)
        elif source_partials is not None:
            source = content.digests(source_partials, block_elements)
        else:
            source = self._digests(sources if sources is not None else self.workers("source"), block_elements)[0]
        if target_partials is None:
            ids = list(targets if targets is not None else self.workers("target"))
            replies = self.request_all(ids, {"op": "content", "block_elements": block_elements})
            target_partials = {w: replies[w]["partials"] for w in ids}
        try:
            target, holders = _combined(target_partials, block_elements)
        except ManifestError as error:
            if not str(getattr(error, "code", "")).startswith("content_"):
                raise
            raise _error("transfer_verify_failed", f"{when}, the targets' content does not combine ({error}; targets "
                         f"{', '.join(target_partials)}); no target is ready") from None
        return content.check(source, target, code="transfer_verify_failed", when=when,
                             against="the sources'", outcome="no target is ready",
                             holders=lambda tensor: holders[tensor])

    def changed(self, sources: Sequence[str], block_elements: int = content.DEFAULT_BLOCK_ELEMENTS
                ) -> tuple[list[Any], Optional[list[Any]]]:
        """A delta's changed source ranges since the sources' :meth:`snapshot` (the wire
        entries :meth:`execute` takes as ``changed``), and the sources' partials of the
        bytes that pass looked at when it hashed with ``block_elements`` (then they verify
        the delta without hashing again), else None."""
        replies = self.request_all(sources, {"op": "changed"})
        changed = [entry for w in sources for entry in replies[w]["changed"]]
        if all(replies[w].get("block_elements") == block_elements for w in sources):
            return changed, [r for w in sources for r in replies[w]["partials"]]
        return changed, None

    def snapshot(self, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS, *, advance: bool = False) -> None:
        """Every source records its fragments' block values: the base of a later delta.
        With ``advance`` (after a delta committed), each source whose last look found that
        delta's changed blocks takes those bytes as the base instead of hashing again: the
        base is then exactly what the targets were sent."""
        self.request_all(self.workers("source"), {"op": "snapshot", "block_elements": block_elements,
                                                  "advance": advance})

    def stop(self) -> None:
        """Let go of the members (a transport that owns their service stops it)."""
        self.transport.close()


def _combined(partials: Mapping[str, Sequence[Mapping[str, Any]]],
              block_elements: int) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each tensor's digest from the workers' partials, and the workers holding it."""
    holders: dict[str, list[str]] = {}
    for w, records in partials.items():
        for record in records:
            holders.setdefault(record["tensor_id"], []).append(w)
    return content.digests((r for records in partials.values() for r in records), block_elements), holders
