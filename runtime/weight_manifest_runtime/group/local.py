"""Members in this process (unit tests, a colocated trainer and rollout): calls are method
calls on the :class:`~weight_manifest_runtime.group.member.Member` objects, run on one thread each
so that members that wait for each other (pull and push on one engine) can."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from .coordinator import MemberInfo, Outcome, ProgressCallback
from .member import Member

__all__ = ["LocalGroup"]


class LocalGroup:
    """A :class:`~weight_manifest_runtime.group.coordinator.Transport` over members held here.
    :meth:`join` adds one (its side's name: ``source`` or ``target``), :meth:`leave`
    removes one."""

    def __init__(self) -> None:
        self._members: dict[str, tuple[Member, MemberInfo]] = {}
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._progress: dict[str, list[list[Any]]] = {}

    def join(self, member: Member, side: str, host: str = "this process") -> None:
        info = MemberInfo(member.worker_id, side, member.session, host, member.inventory())
        member.progress = lambda worker, pairs: self._progress.__setitem__(worker, pairs)
        with self._lock:
            self._members[member.worker_id] = (member, info)

    def leave(self, worker_id: str) -> None:
        with self._lock:
            self._members.pop(worker_id, None)

    def members(self) -> dict[str, MemberInfo]:
        with self._lock:
            return {w: info for w, (_, info) in self._members.items()}

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None) -> dict[str, Outcome]:
        with self._lock:
            held = {w: self._members.get(w) for w in calls}

        def one(w: str) -> Outcome:
            entry = held[w]
            if entry is None:
                return None, "not a member"
            op, request = calls[w]
            return entry[0].reply(op, request), ""

        workers = max(1, min(len(calls), at_once or len(calls)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = dict(zip(calls, pool.map(one, calls)))
        if on_progress is not None and self._progress:
            on_progress([p for pairs in self._progress.values() for p in pairs])
        return outcomes

    def refresh(self) -> tuple[list[str], list[str]]:
        now = set(self.members())
        joined, left = sorted(now - self._seen), sorted(self._seen - now)
        self._seen = now
        return joined, left

    def close(self) -> None:
        with self._lock:
            self._members.clear()
