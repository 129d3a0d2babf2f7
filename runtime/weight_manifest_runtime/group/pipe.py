"""Members in child processes of the coordinator on this host (the single-host examples):
JSON lines over a pair of pipes only the parent holds, so no socket listens and no other
process can reach a member. The parent starts each child with :meth:`PipeGroup.spawn`;
the child runs :func:`serve_pipe` with its :class:`~weight_manifest_runtime.group.member.Member`.

Messages are one JSON object per line: the child's hello (``hello``: worker id, ``side``,
``session``, ``host``, ``inventory``), then requests (``op`` and its members) and replies
(``ok`` and the result, or ``error``), until ``stop`` or the end of the pipe."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from weight_manifest.errors import manifest_error as _error
from .coordinator import MemberInfo, Outcome, ProgressCallback
from .member import Member

__all__ = ["PIPE_ENV", "PipeGroup", "serve_pipe"]

#: The environment variable that gives a child its two pipe descriptors ("read,write").
PIPE_ENV = "WEIGHT_MANIFEST_GROUP_PIPE"


class _Channel:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = os.fdopen(read_fd, "rb")
        self.writer = os.fdopen(write_fd, "wb")

    def send(self, message: Mapping[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")
        self.writer.flush()

    def receive(self, timeout: Optional[float] = None) -> Optional[dict[str, Any]]:
        if timeout is not None:
            ready, _, _ = select.select([self.reader], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no reply in {timeout:g} s")
        line = self.reader.readline()
        return json.loads(line) if line else None

    def close(self) -> None:
        for stream in (self.reader, self.writer):
            try:
                stream.close()
            except OSError:
                pass


def serve_pipe(member: Member, *, side: str, host: str = "127.0.0.1") -> None:
    """In a child started by :meth:`PipeGroup.spawn`: announce ``member`` (``side``:
    "source" or "target"), answer requests until ``stop`` or the end of the pipe, then
    unregister its memory."""
    read_fd, write_fd = (int(x) for x in os.environ[PIPE_ENV].split(","))
    channel = _Channel(read_fd, write_fd)
    try:
        channel.send({"hello": member.worker_id, "side": side, "session": member.session, "host": host,
                      "inventory": member.inventory()})
        while True:
            request = channel.receive()
            if request is None or request.get("op") == "stop":
                if request is not None:
                    channel.send({"ok": True})
                break
            op = str(request.pop("op", ""))
            channel.send(member.reply(op, request))
    finally:
        channel.close()
        member.close()


class PipeGroup:
    """A :class:`~weight_manifest_runtime.group.coordinator.Transport` over child processes.
    ``timeout`` bounds the wait for a hello and for each reply."""

    def __init__(self, *, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._pending: list[tuple[subprocess.Popen[bytes], _Channel]] = []
        self._members: dict[str, tuple[MemberInfo, _Channel, subprocess.Popen[bytes]]] = {}
        self._seen: set[str] = set()

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
        """Start a child that runs :func:`serve_pipe` (``popen``: Popen's keywords)."""
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        env = {**(popen.pop("env", None) or os.environ), PIPE_ENV: f"{to_child_r},{to_parent_w}"}
        try:
            process = subprocess.Popen(list(argv), env=env, pass_fds=(to_child_r, to_parent_w), **popen)
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        self._pending.append((process, _Channel(to_parent_r, to_child_w)))
        return process

    def accept(self, lost: Optional[Callable[[], Optional[str]]] = None) -> None:
        """Wait for every spawned child's hello. ``lost``, polled while waiting, names a
        child that can no longer announce itself (its process ended)."""
        deadline = time.monotonic() + self.timeout
        for process, channel in self._pending:
            while True:
                try:
                    hello = channel.receive(timeout=0.5)
                    break
                except TimeoutError:
                    gone = lost() if lost is not None else None
                    if gone is not None:
                        raise _error("transfer_worker_lost", gone) from None
                    if time.monotonic() > deadline:
                        raise _error("transfer_worker_lost",
                                     f"a worker did not announce itself in {self.timeout} s") from None
            if hello is None:
                raise _error("transfer_worker_lost", (lost() if lost else None) or "a worker ended before its hello")
            info = MemberInfo(str(hello["hello"]), str(hello["side"]), str(hello["session"]), str(hello["host"]),
                              hello["inventory"])
            self._members[info.worker_id] = (info, channel, process)
        self._pending = []

    def members(self) -> dict[str, MemberInfo]:
        return {w: entry[0] for w, entry in self._members.items()}

    def _exchange(self, worker: str, op: str, request: dict[str, Any]) -> Outcome:
        entry = self._members.get(worker)
        if entry is None:
            return None, "not a member"
        channel = entry[1]
        try:
            channel.send({"op": op, **request})
            reply = channel.receive(timeout=self.timeout)
        except (OSError, ValueError, TimeoutError) as error:
            return None, str(error)
        return (reply, "") if reply is not None else (None, "its process ended")

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None) -> dict[str, Outcome]:
        workers = max(1, min(len(calls), at_once or len(calls)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(zip(calls, pool.map(lambda w: self._exchange(w, *calls[w]), calls)))

    def refresh(self) -> tuple[list[str], list[str]]:
        for w in [w for w, (_, _, p) in self._members.items() if p.poll() is not None]:
            self._members.pop(w)[1].close()
        now = set(self._members)
        joined, left = sorted(now - self._seen), sorted(self._seen - now)
        self._seen = now
        return joined, left

    def close(self) -> None:
        """Tell every child to stop and close the pipes."""
        for _, channel, _ in self._members.values():
            try:
                channel.send({"op": "stop"})
                channel.receive(timeout=10)
            except (OSError, ValueError, TimeoutError):
                pass
            channel.close()
        self._members.clear()
        for _, channel in self._pending:
            channel.close()
        self._pending = []
