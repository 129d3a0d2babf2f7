"""The group on Ray: members are (or live in) Ray actors, the coordinator sits in the
driver (or in an actor), and bytes move only on each member's Mooncake Transfer Engine,
whose session is its host's own address. Needs the ``ray`` extra
(``pip install weight-manifest[ray]``).

- A member takes part with :class:`GroupRole` (a helper object: it owns no process or
  event loop) or the :class:`GroupMember` mixin, which adds ``wm_join``, ``wm_call`` and
  ``wm_leave`` to a framework's actor class::

      @ray.remote
      class Rollout(GroupMember):
          def __init__(self, group, key):
              self.tensors = ...                        # the live weights
              backend, session = engine_backend()      # a Transfer Engine on this host
              self.wm_join(group, key, "target", Member(self.tensors, backend=backend,
                           session=session, worker_id=..., endpoint=session, ...))

- The members of group ``name`` find each other through a named registry actor
  (:data:`REGISTRY_PREFIX` + name, in ``namespace``); :class:`RayGroup` is the transport a
  :class:`~weight_manifest_runtime.group.coordinator.Coordinator` uses, in the driver.
- **Only members get in.** The cluster runs with Ray's token authentication, so no
  process without the token reaches any actor. Within the cluster, every call of the
  group (a join, each request to a member) carries the group's key (:func:`new_key`,
  given by whoever starts the group to its coordinator and members); a member or the
  registry refuses any other call with ``transfer_unauthorized``, and a member executes
  only a bound plan whose fence is what it holds now (the core's fence rule).
- Replies, not exceptions, cross Ray: a member's rejection comes back with its code,
  message and pointer (:meth:`Member.reply`); a dead actor is ``transfer_worker_lost``
  naming the worker and its host.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from weight_manifest.errors import manifest_error as _error
from .. import transfer
from .coordinator import MemberInfo, Outcome, ProgressCallback
from .member import Member

__all__ = ["REGISTRY_PREFIX", "GroupMember", "GroupRole", "RayGroup", "engine_backend", "new_key"]

#: The name of a group's registry actor is this prefix and the group's name.
REGISTRY_PREFIX = "weight-manifest-group:"


def new_key() -> str:
    """A fresh group key: 256 random bits, as hex."""
    return secrets.token_hex(32)


def _digest(key: str) -> str:
    return hashlib.sha256(str(key).encode()).hexdigest()


def _refused(what: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": "transfer_unauthorized",
                                   "message": f"{what} without the group's key: refused", "path": None}}


def _raise_reply(reply: Mapping[str, Any]) -> None:
    if not reply.get("ok"):
        err = reply.get("error") or {}
        raise _error(str(err.get("code", "transfer_failed")), str(err.get("message")), err.get("path"))


class _Registry:
    """Who is in the group (a named actor): each member's entry, and the executing
    pairs' progress. Every call carries the group's key."""

    def __init__(self, key_digest: str) -> None:
        self.key_digest = key_digest
        self.entries: dict[str, dict[str, Any]] = {}
        self.progress_by_worker: dict[str, list[list[Any]]] = {}

    def _ok(self, key: str) -> bool:
        return hmac.compare_digest(_digest(key), self.key_digest)

    def join(self, key: str, entry: dict[str, Any]) -> dict[str, Any]:
        if not self._ok(key):
            return _refused(f"a join of {entry.get('worker_id')!r}")
        self.entries[str(entry["worker_id"])] = entry
        return {"ok": True}

    def leave(self, key: str, worker_id: str) -> dict[str, Any]:
        if not self._ok(key):
            return _refused(f"a leave of {worker_id!r}")
        self.entries.pop(worker_id, None)
        self.progress_by_worker.pop(worker_id, None)
        return {"ok": True}

    def members(self, key: str) -> dict[str, Any]:
        if not self._ok(key):
            return _refused("a membership query")
        return {"ok": True, "members": self.entries}

    def progress(self, key: str, worker_id: str, pairs: list[list[Any]]) -> None:
        if self._ok(key):
            self.progress_by_worker[worker_id] = pairs

    def clear_progress(self, key: str) -> None:
        if self._ok(key):
            self.progress_by_worker.clear()

    def progress_of(self, key: str) -> dict[str, Any]:
        if not self._ok(key):
            return _refused("a progress query")
        return {"ok": True, "progress": self.progress_by_worker}


def _registry(name: str, key: str, namespace: Optional[str], create: bool, detached: bool) -> Any:
    import ray

    actor_name = REGISTRY_PREFIX + name
    if not create:
        return ray.get_actor(actor_name, namespace=namespace)
    remote = ray.remote(num_cpus=0, max_restarts=0)(_Registry)
    options: dict[str, Any] = {"name": actor_name, "get_if_exists": True}
    if namespace is not None:
        options["namespace"] = namespace
    if detached:
        options["lifetime"] = "detached"
    return remote.options(**options).remote(_digest(key))


def engine_backend(host: Optional[str] = None) -> tuple[transfer.EngineBackend, str]:
    """A Mooncake Transfer Engine on this host's own address (Ray's node address unless
    ``host`` is given), as a backend, and its session name (``host:rpc_port``)."""
    from mooncake.engine import TransferEngine  # type: ignore[import-untyped]

    if host is None:
        import ray

        host = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    engine = TransferEngine()
    if engine.initialize(host, "P2PHANDSHAKE", "tcp", "") != 0:
        raise _error("transfer_failed", f"the transfer engine did not initialise on {host}")
    return transfer.EngineBackend(engine), f"{host}:{engine.get_rpc_port()}"


class GroupRole:
    """The member role in a Ray actor, as a helper object: :meth:`join` registers the
    :class:`Member` with the group's registry (its handle: the actor this runs in, or
    ``handle``), :meth:`call` answers the group's calls, :meth:`leave` leaves. ``via``
    names the actor method the coordinator calls (default ``wm_call``) and leading
    arguments for it: a vLLM worker whose extension is mixed in after its actor was made
    is reached as ``("execute_method", "wm_call")``."""

    def __init__(self) -> None:
        self.member: Optional[Member] = None
        self.group: Optional[str] = None
        self._key_digest: Optional[str] = None
        self._key: Optional[str] = None
        self._registry: Any = None

    def join(self, group: str, key: str, side: str, member: Member, *, namespace: Optional[str] = None,
             via: Sequence[str] = ("wm_call",), handle: Any = None, create: bool = True) -> None:
        import ray

        registry = _registry(group, key, namespace, create=create, detached=False)
        context = ray.get_runtime_context()
        entry = {"worker_id": member.worker_id, "side": side, "session": member.session,
                 "host": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
                 "node_id": context.get_node_id(),
                 "handle": handle if handle is not None else context.current_actor,
                 "via": list(via), "inventory": member.inventory()}
        self.member, self.group, self._registry = member, group, registry
        self._key, self._key_digest = key, _digest(key)
        member.progress = lambda worker, pairs: registry.progress.remote(key, worker, pairs)
        _raise_reply(ray.get(registry.join.remote(key, entry)))

    def call(self, key: str, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """One call of the group: refused (``transfer_unauthorized``) without its key."""
        if self._key_digest is None or self.member is None or not hmac.compare_digest(_digest(key), self._key_digest):
            return _refused(f"a {op!r} call")
        return self.member.reply(op, request)

    def leave(self) -> None:
        """Leave the group (the member's memory stays registered until it is closed)."""
        import ray

        if self._registry is not None and self.member is not None:
            ray.get(self._registry.leave.remote(self._key, self.member.worker_id))
        self._registry = None


class GroupMember:
    """A mixin for a Ray actor class: the member role through :class:`GroupRole`."""

    _wm_role: Optional[GroupRole] = None

    def wm_join(self, group: str, key: str, side: str, member: Member, *, namespace: Optional[str] = None) -> None:
        """Join group ``group`` (with its ``key``) as a ``side`` member holding ``member``."""
        self._wm_role = GroupRole()
        self._wm_role.join(group, key, side, member, namespace=namespace)

    def wm_call(self, key: str, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """The group's calls (made by its coordinator)."""
        if self._wm_role is None:
            return _refused(f"a {op!r} call to an actor of no group")
        return self._wm_role.call(key, op, request)

    def wm_leave(self) -> None:
        """Leave the group."""
        if self._wm_role is not None:
            self._wm_role.leave()


class RayGroup:
    """A :class:`~weight_manifest_runtime.group.coordinator.Transport` over a group's members on
    Ray, found through its registry. ``timeout`` bounds each call (a member that does not
    answer is lost); ``create`` makes the registry if it does not exist (``detached``: it
    outlives this driver, for a coordinator that replaces this one)."""

    def __init__(self, name: str, key: str, *, namespace: Optional[str] = None, timeout: float = 300.0,
                 ping_timeout: float = 10.0, create: bool = True, detached: bool = False) -> None:
        self.name, self.key, self.namespace = name, key, namespace
        self.timeout, self.ping_timeout = timeout, ping_timeout
        self.registry = _registry(name, key, namespace, create=create, detached=detached)
        self._members: dict[str, MemberInfo] = {}
        self._routes: dict[str, tuple[Any, list[str]]] = {}
        self._seen: set[str] = set()
        self._read()

    def _entries(self) -> dict[str, dict[str, Any]]:
        import ray

        reply = ray.get(self.registry.members.remote(self.key), timeout=self.ping_timeout)
        _raise_reply(reply)
        entries: dict[str, dict[str, Any]] = reply["members"]
        return entries

    def _read(self) -> None:
        entries = self._entries()
        self._members = {w: MemberInfo(w, str(e["side"]), str(e["session"]), str(e["host"]), e["inventory"])
                         for w, e in entries.items()}
        self._routes = {w: (e["handle"], list(e["via"])) for w, e in entries.items()}

    def wait_for(self, count: int, timeout: Optional[float] = None) -> None:
        """Wait until ``count`` members have joined (``transfer_worker_lost`` after
        ``timeout``, default the call timeout)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            self._read()
            if len(self._members) >= count:
                self._seen = set(self._members)
                return
            if time.monotonic() > deadline:
                raise _error("transfer_worker_lost", f"{count - len(self._members)} of {count} members did not join "
                             f"group {self.name} in time")
            time.sleep(0.1)

    def members(self) -> dict[str, MemberInfo]:
        return dict(self._members)

    def _send(self, worker: str, op: str, request: dict[str, Any]) -> Any:
        handle, via = self._routes[worker]
        method, *lead = via
        return getattr(handle, method).remote(*lead, self.key, op, request)

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None, timeout: Optional[float] = None) -> dict[str, Outcome]:
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayError

        bound = timeout if timeout is not None else (self.ping_timeout if all(op == "ping" for op, _ in calls.values())
                                                     else self.timeout)
        outcomes: dict[str, Outcome] = {w: (None, "not a member") for w in calls if w not in self._routes}
        queue = [w for w in calls if w in self._routes]
        running: dict[Any, str] = {}
        limit = at_once or len(queue) or 1
        deadline = time.monotonic() + bound
        last_progress = 0.0
        if on_progress is not None:
            ray.get(self.registry.clear_progress.remote(self.key), timeout=self.ping_timeout)
        while queue or running:
            while queue and len(running) < limit:
                w = queue.pop(0)
                running[self._send(w, *calls[w])] = w
            done, _ = ray.wait(list(running), num_returns=1, timeout=0.25)
            for ref in done:
                w = running.pop(ref)
                try:
                    outcomes[w] = (ray.get(ref), "")
                except RayActorError as error:
                    outcomes[w] = (None, f"its actor died: {type(error).__name__}")
                except RayError as error:
                    outcomes[w] = ({"ok": False, "error": {"code": "transfer_failed", "message": str(error)[:500]}}, "")
            if on_progress is not None and time.monotonic() - last_progress > 0.5:
                last_progress = time.monotonic()
                try:
                    reply = ray.get(self.registry.progress_of.remote(self.key), timeout=self.ping_timeout)
                    on_progress([p for pairs in reply.get("progress", {}).values() for p in pairs])
                except (GetTimeoutError, RayError):
                    pass
            if time.monotonic() > deadline:
                for ref, w in running.items():
                    outcomes[w] = (None, f"no reply in {bound:g} s")
                    ray.cancel(ref)
                running.clear()
                queue.clear()
        for w in calls:
            outcomes.setdefault(w, (None, f"no reply in {bound:g} s"))
        return outcomes

    def refresh(self) -> tuple[list[str], list[str]]:
        """The registry's membership now, less the members that no longer answer a ping
        (dropped from the registry too): who joined and who left since last time."""
        import ray

        self._read()
        pings = self.call_all({w: ("ping", {}) for w in self._members})
        for w, (reply, _) in pings.items():
            if reply is None:
                ray.get(self.registry.leave.remote(self.key, w))
        self._read()
        now = set(self._members)
        joined, left = sorted(now - self._seen), sorted(self._seen - now)
        self._seen = now
        return joined, left

    def close(self) -> None:
        """Let go (the members are their frameworks' actors and keep running)."""
        self._members, self._routes = {}, {}
