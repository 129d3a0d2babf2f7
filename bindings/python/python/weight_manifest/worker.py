"""The two roles of a multi-process weight update: :class:`Worker` and :class:`Coordinator`.

Each process that holds weights runs a :class:`Worker`: it registers its live tensors with
its transfer backend, connects to the coordinator (TCP on 127.0.0.1), announces itself with
its session name and its runtime inventory (:func:`weight_manifest.live.runtime_inventory`),
then answers requests until told to stop, and tears down (unregisters its memory).

The :class:`Coordinator` accepts the workers, builds each side's runtime manifest, placement
and binding from their inventories, plans and binds (:func:`plan`, :func:`bind_plan`), and
runs :meth:`Coordinator.update`: it collects every worker's inventory again and checks the
bound plan's fences against those live bindings (:func:`transfer.check_fences`), sends each
executing worker its pairs, and waits for all of them. Any worker that fails, disconnects
or times out fails the whole update with the worker and its error; the update is reported
only when every pair succeeded (and, if asked, every target verified).

The protocol is one JSON object per line. Requests carry ``op``; replies carry ``ok`` and
either the result or ``error`` (``code``, ``message``). Operations: ``inventory``,
``execute``, ``stop``, and whatever extra handlers the worker was given (an example's
``verify``, a test's fault injection).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

import numpy as np

from . import content, live, transfer
from ._analysis import bind_plan, plan
from ._errors import manifest_error as _error
from ._manifests import (
    PlacementManifest,
    RuntimeBindingManifest,
    placement_manifest_from_runtime_manifest,
    runtime_binding_from_runtime_manifest,
)
from ._native import BoundPlan, ManifestError, Plan

__all__ = ["Coordinator", "Side", "Worker", "check_worker_fence"]

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class _Lines:
    """JSON lines over one socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    def send(self, message: Mapping[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def receive(self) -> Optional[dict[str, Any]]:
        line = self.reader.readline()
        return json.loads(line) if line else None

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def check_worker_fence(holds: Mapping[str, Any], bound: BoundPlan, side: str, worker: str) -> None:
    """``transfer_fence_mismatch`` (at ``/{side}/{member}`` of the bound plan) unless the
    instance, lease and generation ``worker`` holds now (``holds``: its inventory or its
    keywords) are the bound plan's for ``side``."""
    expected = bound.source if side == "source" else bound.target
    for member in ("instance_id", "lease_id", "generation"):
        if holds.get(member) != expected[member]:
            raise _error(
                "transfer_fence_mismatch",
                f"{side} worker {worker} now holds {member} {holds.get(member)!r}, the bound plan "
                f"was bound at {expected[member]!r}: bind again",
                f"/{side}/{member}",
            )


class Worker:
    """One process's side of an update. ``tensors`` are the live tensors it holds and
    ``where`` the keywords of :func:`live.runtime_inventory` (worker_id, endpoint,
    instance_id, generation, lease_id, rank, placement or descriptors/offsets, ...).
    ``backend`` moves bytes (an :class:`transfer.EngineBackend` with its engine, or a
    :class:`transfer.LocalBackend`) and ``session`` is the name peers reach it by.
    ``register`` overrides the (address, length) regions registered (default: each
    tensor's bytes); a staging buffer of ``staging_bytes`` is registered with them and
    serves every update (:class:`transfer.Staging`)."""

    def __init__(
        self,
        tensors: Mapping[str, Any],
        *,
        backend: transfer.Backend,
        session: str,
        handlers: Optional[Mapping[str, Handler]] = None,
        register: Optional[Sequence[tuple[int, int]]] = None,
        staging_bytes: int = transfer.DEFAULT_STAGING_BYTES,
        **where: Any,
    ) -> None:
        self.tensors = dict(tensors)
        self.where = dict(where)
        self.worker_id = str(where["worker_id"])
        self.backend = backend
        self.session = session
        self.handlers: dict[str, Handler] = dict(handlers or {})
        inventory = self.inventory()
        if register is None:
            register = [(int(r["address"]), int(r["nbytes"])) for r in inventory["tensors"]]
        self.registered = list(register)
        for address, length in self.registered:
            backend.register(address, length)
        # Registered once, with the tensors, and reused by every update.
        self.staging = transfer.Staging(backend, staging_bytes) if staging_bytes >= 2 else None
        self.snapshot: Optional[content.Snapshot] = None

    def inventory(self) -> dict[str, Any]:
        """The runtime inventory of what this worker holds now."""
        return live.runtime_inventory(self.tensors, **self.where)

    def _execute(self, request: dict[str, Any]) -> dict[str, Any]:
        bound = BoundPlan.from_json(request["bound_plan"])
        side = "source" if request["mode"] == "push" else "target"
        # The worker's own last look before the first byte: its lease and generation now.
        check_worker_fence(self.where, bound, side, self.worker_id)
        changed = None
        if request.get("changed") is not None:
            changed = {(str(w), str(d)): np.array(r, dtype=np.uint64).reshape(-1, 2) for w, d, r in request["changed"]}
        report = transfer.execute(
            bound,
            self.backend,
            request["sessions"],
            mode=request["mode"],
            worker=self.worker_id,
            staging=self.staging,
            changed=changed,
            **request.get("options", {}),
        )
        return {"report": report.to_dict()}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request (errors become ``ok: false`` replies)."""
        op = request.get("op")
        result: dict[str, Any]
        try:
            if op == "inventory":
                result = {"inventory": self.inventory()}
            elif op == "execute":
                result = self._execute(request)
            elif op == "content":
                result = {"partials": content.partials(self.tensors, self.inventory(),
                                                       int(request.get("block_elements", content.DEFAULT_BLOCK_ELEMENTS)))}
            elif op == "snapshot":
                self.snapshot = content.Snapshot(self.tensors, self.inventory(),
                                                 int(request.get("block_elements", content.DEFAULT_BLOCK_ELEMENTS)))
                result = {}
            elif op == "changed":
                if self.snapshot is None:
                    raise _error("transfer_arguments_invalid", f"worker {self.worker_id} has no snapshot to compare with")
                ranges = self.snapshot.changed(self.tensors)
                result = {"changed": [[w, d, r.tolist()] for (w, d), r in ranges.items()]}
            elif isinstance(op, str) and op in self.handlers:
                result = self.handlers[op](request)
            else:
                raise _error("transfer_arguments_invalid", f"unknown request {op!r}")
        except ManifestError as error:
            return {"ok": False, "error": {"code": error.code, "message": str(error)}}
        return {"ok": True, **result}

    def serve(self, coordinator: str, *, side: str, timeout: float = 60.0) -> None:
        """Connect to the coordinator at ``host:port``, announce this worker (``side``:
        "source" or "target"), answer requests until ``stop`` or the connection ends,
        then unregister its memory."""
        host, port = coordinator.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=timeout)
        sock.settimeout(None)
        lines = _Lines(sock)
        try:
            lines.send({"hello": self.worker_id, "side": side, "session": self.session,
                        "inventory": self.inventory()})
            while True:
                request = lines.receive()
                if request is None or request.get("op") == "stop":
                    if request is not None:
                        lines.send({"ok": True})
                    break
                lines.send(self.handle(request))
        finally:
            lines.close()
            self.close()

    def close(self) -> None:
        """Unregister this worker's memory (idempotent)."""
        for address, _ in self.registered:
            self.backend.unregister(address)
        self.registered = []
        if self.staging is not None:
            self.staging.close()
            self.staging = None


class Side:
    """One side of an update as the coordinator sees it: its workers' inventories read by
    the core into a runtime manifest, its placement and its binding."""

    def __init__(self, inventories: Sequence[Mapping[str, Any]]) -> None:
        self.inventory = live.combine(inventories)
        self.manifest = live.read_inventory(self.inventory)
        self.placement: PlacementManifest = placement_manifest_from_runtime_manifest(self.manifest)
        self.binding: RuntimeBindingManifest = runtime_binding_from_runtime_manifest(self.manifest)


class _Peer:
    def __init__(self, lines: _Lines, hello: dict[str, Any]) -> None:
        self.lines = lines
        self.worker_id = str(hello["hello"])
        self.side = str(hello["side"])
        self.session = str(hello["session"])
        self.inventory: dict[str, Any] = hello["inventory"]


class Coordinator:
    """Accepts workers on 127.0.0.1 and runs updates between its sources and targets."""

    def __init__(self, *, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.address = "127.0.0.1:%d" % self.server.getsockname()[1]
        self.peers: dict[str, _Peer] = {}

    def accept(self, count: int, lost: Optional[Callable[[], Optional[str]]] = None) -> None:
        """Wait for ``count`` more workers to announce themselves. ``lost``, polled while
        waiting, names a worker that can no longer connect (its process ended)."""
        deadline = time.monotonic() + self.timeout
        while count > 0:
            self.server.settimeout(min(0.5, max(0.1, deadline - time.monotonic())))
            try:
                sock, _ = self.server.accept()
            except socket.timeout:
                gone = lost() if lost is not None else None
                if gone is not None:
                    raise _error("transfer_worker_lost", gone) from None
                if time.monotonic() < deadline:
                    continue
                raise _error("transfer_worker_lost", f"{count} workers did not connect in {self.timeout} s") from None
            sock.settimeout(self.timeout)
            lines = _Lines(sock)
            hello = lines.receive()
            if hello is None:
                lines.close()
                continue
            peer = _Peer(lines, hello)
            self.peers[peer.worker_id] = peer
            count -= 1

    def workers(self, side: str) -> list[str]:
        """The worker ids of ``side``, sorted."""
        return sorted(w for w, p in self.peers.items() if p.side == side)

    def side(self, side: str) -> Side:
        """The side's manifest, placement and binding from the inventories its workers
        announced."""
        ids = self.workers(side)
        return Side([self.peers[w].inventory for w in ids])

    def request_all(self, ids: Sequence[str], request: Mapping[str, Any],
                    per_worker: Optional[Mapping[str, Mapping[str, Any]]] = None,
                    at_once: Optional[int] = None) -> dict[str, dict[str, Any]]:
        """Send ``request`` (merged with ``per_worker[id]``) to each worker, then collect
        every reply; with ``at_once``, at most that many workers hold the request at a
        time (the next is sent as soon as one replies). Raises ``transfer_worker_lost`` or
        the first worker's error, naming the worker, after all replies (or losses) are in."""
        def message(w: str) -> dict[str, Any]:
            return {**request, **(per_worker or {}).get(w, {})}

        outcomes: dict[str, tuple[Optional[dict[str, Any]], str]] = {}
        if at_once is None or at_once >= len(ids):
            for w in ids:
                try:
                    self.peers[w].lines.send(message(w))
                except OSError:
                    pass  # reported when its reply is missing
            for w in ids:
                outcomes[w] = self._reply(w)
        else:
            def exchange(w: str) -> tuple[Optional[dict[str, Any]], str]:
                try:
                    self.peers[w].lines.send(message(w))
                except OSError:
                    pass
                return self._reply(w)

            with ThreadPoolExecutor(max_workers=max(1, at_once)) as pool:
                for w, outcome in zip(ids, pool.map(exchange, ids)):
                    outcomes[w] = outcome
        replies: dict[str, dict[str, Any]] = {}
        failures: list[tuple[str, str, str]] = []
        for w in ids:
            reply, lost = outcomes[w]
            if reply is None:
                failures.append((w, "transfer_worker_lost", f"worker {w} was lost ({lost})"))
            elif not reply.get("ok"):
                err = reply.get("error", {})
                failures.append((w, str(err.get("code", "transfer_failed")), f"worker {w}: {err.get('message')}"))
            else:
                replies[w] = reply
        if failures:
            code, message_text = failures[0][1], failures[0][2]
            more = "" if len(failures) == 1 else f" (and {len(failures) - 1} more: " + "; ".join(f[2] for f in failures[1:]) + ")"
            raise _error(code, message_text + more)
        return replies

    def _reply(self, w: str) -> tuple[Optional[dict[str, Any]], str]:
        """The next reply of worker ``w`` (None if its connection ended) and why not."""
        try:
            return self.peers[w].lines.receive(), "connection closed"
        except (OSError, ValueError) as error:
            return None, str(error)

    def plan(self, **limits: Any) -> Plan:
        """The plan from the sources' placement to the targets'."""
        return plan(self.side("source").placement, self.side("target").placement, **limits)

    def bind(self, reshard: Plan) -> BoundPlan:
        """``reshard`` bound to both sides' announced bindings, fenced at their generations."""
        source, target = self.side("source").binding, self.side("target").binding
        return bind_plan(reshard, source, target, source_generation=source.generation,
                         target_generation=target.generation)

    def check_live(self, bound: BoundPlan, sides: Sequence[str] = ("source", "target")) -> None:
        """The bound plan's fences against what every worker of ``sides`` holds now: first
        each worker's instance, lease and generation (naming the worker), then each side's
        binding rebuilt from the fresh inventories (placement_id and digest too). A side
        not in ``sides`` (a Store restore's source) is taken as bound."""
        live_sides: list[Any] = []
        for side in ("source", "target"):
            if side not in sides:
                live_sides.append(bound.source if side == "source" else bound.target)
                continue
            ids = self.workers(side)
            replies = self.request_all(ids, {"op": "inventory"})
            for w in ids:
                check_worker_fence(replies[w]["inventory"], bound, side, w)
            live_sides.append(Side([replies[w]["inventory"] for w in ids]).binding)
        transfer.check_fences(bound, live_sides[0], live_sides[1])

    def update(self, bound: BoundPlan, *, mode: str = "push", options: Optional[Mapping[str, Any]] = None,
               verify: Optional[str] = None, verify_content: bool = True,
               block_elements: int = content.DEFAULT_BLOCK_ELEMENTS, delta: bool = False,
               after_transfer: Optional[Callable[[], Any]] = None) -> dict[str, Any]:
        """Run ``bound``: fences against the live bindings, every pair on its executing
        worker, then the content check (``verify_content``, on by default: every target's
        digests, combined from their partials, must equal the sources', tensor by tensor)
        and, with ``verify`` (a handler name), each target's own check. With ``delta``,
        only the source bytes changed since the sources' last :meth:`snapshot` move.
        ``after_transfer`` runs between the transfer and the checks (a test's fault).
        Returns the totals and the pairs' reports; raises on any failure, and then no
        target is ready."""
        self.check_live(bound)
        started = time.perf_counter()
        sessions = {w: p.session for w, p in self.peers.items()}
        executing = self.workers("source" if mode == "push" else "target")
        request: dict[str, Any] = {"op": "execute", "bound_plan": bound.to_json(), "mode": mode,
                                   "sessions": sessions, "options": dict(options or {})}
        if delta:
            replies = self.request_all(self.workers("source"), {"op": "changed"})
            request["changed"] = [entry for w in self.workers("source") for entry in replies[w]["changed"]]
        replies = self.request_all(executing, request)
        seconds = time.perf_counter() - started
        pairs = [pair for w in executing for pair in replies[w]["report"]["pairs"]]
        workers = {w: replies[w]["report"] for w in executing}
        if after_transfer is not None:
            after_transfer()
        verify_seconds = 0.0
        if verify_content:
            clock = time.perf_counter()
            self.verify_content(block_elements)
            verify_seconds = time.perf_counter() - clock
        if verify is not None:
            self.request_all(self.workers("target"), {"op": verify})
        return {
            "bytes": sum(p["bytes"] for p in pairs),
            "segments": sum(p["segments"] for p in pairs),
            "runs": sum(p["runs"] for p in pairs),
            "staged_pieces": sum(p["staged_pieces"] for p in pairs),
            "batches": sum(p["batches"] for p in pairs),
            "seconds": seconds,
            "verify_seconds": verify_seconds,
            "pairs": pairs,
            "workers": {w: {k: r[k] for k in ("seconds", "prepare_seconds")} for w, r in workers.items()},
        }

    def digests(self, side: str, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> dict[str, str]:
        """Each tensor's content digest on ``side``, combined from its workers' partials."""
        return self._digests(side, block_elements)[0]

    def _digests(self, side: str, block_elements: int) -> tuple[dict[str, str], dict[str, list[str]]]:
        ids = self.workers(side)
        replies = self.request_all(ids, {"op": "content", "block_elements": block_elements})
        holders: dict[str, list[str]] = {}
        for w in ids:
            for record in replies[w]["partials"]:
                holders.setdefault(record["tensor_id"], []).append(w)
        return content.digests((r for w in ids for r in replies[w]["partials"]), block_elements), holders

    def verify_content(self, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> None:
        """Raise ``transfer_verify_failed`` naming every tensor whose digest on the targets
        is not the sources' (and the target workers holding the first)."""
        source = self.digests("source", block_elements)
        target, holders = self._digests("target", block_elements)
        differ = [n for n in content.compare(source, target) if n in target]
        missing = [n for n in source if n not in target]
        if differ:
            shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
            raise _error(
                "transfer_verify_failed",
                f"after the update, tensor {shown} differs on the targets from the sources' content digest "
                f"(held by {', '.join(holders[differ[0]])}); no target is ready",
            )
        if missing:
            raise _error("transfer_verify_failed",
                         f"the targets hold no fragment of tensor {missing[0]}; no target is ready")

    def snapshot(self, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> None:
        """Every source records its fragments' block values: the base of a later delta."""
        self.request_all(self.workers("source"), {"op": "snapshot", "block_elements": block_elements})

    def stop(self) -> None:
        """Tell every worker to stop and close the connections."""
        for peer in self.peers.values():
            try:
                peer.lines.send({"op": "stop"})
                peer.lines.receive()
            except (OSError, ValueError):
                pass
            peer.lines.close()
        self.peers.clear()
        self.server.close()
