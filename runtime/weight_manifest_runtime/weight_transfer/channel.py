"""The control channel between a coordinator and members that dial in: the group's
transport when the members live in processes the coordinator did not start (vLLM's
workers, the other trainer ranks).

The coordinator (trainer rank 0) listens with :class:`ChannelGroup`; each member runs
:func:`join` (in a daemon thread it starts), which connects, proves the group's key, is
given its replica's ordinal, describes itself, announces its inventory and then answers the
coordinator's calls (:meth:`~weight_manifest_runtime.group.Member.reply`) until the coordinator
stops or the connection ends. Messages are one JSON object per line:

1. member: ``{"join": side, "key": key, "replica": replica}``; coordinator:
   ``{"ok": true, "ordinal": n}`` (the n-th distinct replica of that side, from 0) or
   ``{"ok": false, "error": ...}`` and the connection closes;
2. member: ``{"hello": worker_id, "side", "session", "host", "inventory"}``; coordinator:
   ``{"ok": true}``, or a refusal (a worker id that is already a member);
3. then requests (``op`` and its members) and replies, until ``{"op": "stop"}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from weight_manifest.errors import manifest_error as _error
from ..group import Member, MemberInfo, Outcome, ProgressCallback

__all__ = ["ChannelGroup", "Membership", "join", "split_address"]


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` as (host, port)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class _Line:
    """JSON lines over a connected socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")
        self.lock = threading.Lock()

    def send(self, message: Mapping[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: Optional[float] = None) -> Optional[dict[str, Any]]:
        self.sock.settimeout(timeout)
        try:
            line = self.reader.readline()
        finally:
            self.sock.settimeout(None)
        if not line:
            return None
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("a message that is not a JSON object")
        return message

    def close(self) -> None:
        # Shut the socket down first: a thread blocked reading it gets the end of the stream
        # (and lets go of the reader, which closing alone would wait for).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for close in (self.reader.close, self.sock.close):
            try:
                close()
            except OSError:
                pass


class ChannelGroup:
    """A :class:`~weight_manifest_runtime.group.coordinator.Transport` over members that dial in
    to ``host`` (port ``port``, 0: any free one), proving ``key``. ``timeout`` bounds each
    reply."""

    def __init__(self, host: str, key: str, *, port: int = 0, timeout: float = 300.0) -> None:
        #: The group's key (the members prove it when they join).
        self.key = key
        self.key_digest = _digest(key)
        self.timeout = timeout
        self.listener = socket.create_server((host, port))
        self.address = f"{host}:{self.listener.getsockname()[1]}"
        self._lock = threading.Condition()
        self._members: dict[str, tuple[MemberInfo, _Line]] = {}
        self._replicas: dict[str, dict[str, int]] = {}
        self._seen: set[str] = set()
        self._closed = False
        threading.Thread(target=self._accept, name="wm-channel-accept", daemon=True).start()

    # ---- joining -------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._admit, args=(_Line(sock),), name="wm-channel-join", daemon=True).start()

    def _refuse(self, line: _Line, code: str, message: str) -> None:
        try:
            line.send({"ok": False, "error": {"code": code, "message": message, "path": None}})
        except OSError:
            pass
        line.close()

    def _admit(self, line: _Line) -> None:
        try:
            first = line.receive(timeout=30)
            if first is None or not hmac.compare_digest(_digest(str(first.get("key", ""))), self.key_digest):
                return self._refuse(line, "transfer_unauthorized", "a join without the group's key: refused")
            side, replica = str(first.get("join")), str(first.get("replica"))
            with self._lock:
                ordinals = self._replicas.setdefault(side, {})
                ordinal = ordinals.setdefault(replica, len(ordinals))
            line.send({"ok": True, "ordinal": ordinal})
            hello = line.receive(timeout=self.timeout)
            if hello is None:
                return line.close()
            info = MemberInfo(str(hello["hello"]), str(hello["side"]), str(hello["session"]), str(hello["host"]),
                              hello["inventory"])
            with self._lock:
                if info.worker_id in self._members:
                    return self._refuse(line, "vllm_transfer_join_refused",
                                        f"worker {info.worker_id} on {info.host} joined twice: it is a member "
                                        "already (one worker, one member; shut the first one down)")
                self._members[info.worker_id] = (info, line)
                self._lock.notify_all()
            line.send({"ok": True})
        except (OSError, ValueError, KeyError, TypeError):
            line.close()

    def wait_members(self, side: str, count: int, timeout: float,
                     lost: Optional[Callable[[], Optional[str]]] = None) -> None:
        """Block until ``side`` has at least ``count`` members; ``transfer_worker_lost``
        after ``timeout`` (or as soon as ``lost`` names one that cannot join)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while sum(1 for info, _ in self._members.values() if info.side == side) < count:
                gone = lost() if lost is not None else None
                if gone is not None:
                    raise _error("transfer_worker_lost", gone)
                if time.monotonic() > deadline:
                    have = sorted(w for w, (info, _) in self._members.items() if info.side == side)
                    raise _error("transfer_worker_lost",
                                 f"{count} {side} members did not join in {timeout:g} s; joined: {have}")
                self._lock.wait(0.5)

    # ---- the transport ---------------------------------------------------------------------

    def members(self) -> dict[str, MemberInfo]:
        with self._lock:
            return {w: info for w, (info, _) in self._members.items()}

    def _exchange(self, worker: str, op: str, request: dict[str, Any]) -> Outcome:
        with self._lock:
            entry = self._members.get(worker)
        if entry is None:
            return None, "not a member"
        line = entry[1]
        with line.lock:
            try:
                line.send({"op": op, **request})
                reply = line.receive(timeout=self.timeout)
            except (OSError, ValueError, TimeoutError) as error:
                return None, str(error) or type(error).__name__
        return (reply, "") if reply is not None else (None, "its connection closed")

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None) -> dict[str, Outcome]:
        if not calls:
            return {}
        workers = max(1, min(len(calls), at_once or len(calls)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(zip(calls, pool.map(lambda w: self._exchange(w, *calls[w]), calls)))

    def refresh(self) -> tuple[list[str], list[str]]:
        outcomes = self.call_all({w: ("ping", {}) for w in self.members()})
        with self._lock:
            for w, (reply, _) in outcomes.items():
                if reply is None and w in self._members:
                    self._members.pop(w)[1].close()
            now = set(self._members)
        joined, left = sorted(now - self._seen), sorted(self._seen - now)
        self._seen = now
        return joined, left

    def leave(self, worker: str) -> None:
        """Drop ``worker`` (its connection closed; it serves no more calls)."""
        with self._lock:
            entry = self._members.pop(worker, None)
        if entry is not None:
            entry[1].close()

    def close(self) -> None:
        """Tell every member to stop, close the connections and stop listening."""
        self._closed = True
        try:
            self.listener.close()
        except OSError:
            pass
        with self._lock:
            entries = list(self._members.values())
            self._members.clear()
        for _, line in entries:
            with line.lock:
                try:
                    line.send({"op": "stop"})
                    line.receive(timeout=5)
                except (OSError, ValueError, TimeoutError):
                    pass
            line.close()


class Membership:
    """A member that joined: the :class:`Member`, and the thread answering the
    coordinator's calls; :meth:`leave` ends both."""

    def __init__(self, member: Member, thread: threading.Thread, line: _Line) -> None:
        self.member, self.thread, self._line = member, thread, line

    def leave(self) -> None:
        """Close the channel: the thread ends and closes the member (idempotent)."""
        self._line.close()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout=10)


def join(address: str, key: str, side: str, replica: str, make: Callable[[int, str], Member], *,
         host: Optional[str] = None, timeout: float = 60.0,
         on_stop: Optional[Callable[[], None]] = None) -> Membership:
    """Join the group whose coordinator listens at ``address`` as a member of ``side``:
    ``make(ordinal, local_host)`` builds the :class:`Member` once the coordinator has given
    this replica its ordinal (``local_host``: this end's address towards the coordinator,
    where its Transfer Engine should listen). Returns the member and the thread that
    answers the coordinator's calls (it closes the member when the coordinator stops or the
    connection ends, then runs ``on_stop``). A refusal raises its code
    (``transfer_unauthorized``, ``vllm_transfer_join_refused``); a coordinator that cannot
    be reached, ``vllm_transfer_channel_failed``."""
    try:
        sock = socket.create_connection(split_address(address), timeout=timeout)
    except OSError as error:
        raise _error("vllm_transfer_channel_failed",
                     f"the coordinator's control channel at {address} cannot be reached: {error}") from None
    line = _Line(sock)
    try:
        line.send({"join": side, "key": key, "replica": replica})
        answer = line.receive(timeout=timeout)
        _raise_refusal(answer, address)
        assert answer is not None
        member = make(int(answer["ordinal"]), host or sock.getsockname()[0])
        try:
            line.send({"hello": member.worker_id, "side": side, "session": member.session,
                       "host": host or sock.getsockname()[0], "inventory": member.inventory()})
            _raise_refusal(line.receive(timeout=timeout), address)
        except BaseException:
            member.close()
            raise
    except BaseException:
        line.close()
        raise
    except_types = (OSError, ValueError)

    def serve() -> None:
        try:
            while True:
                try:
                    request = line.receive()
                except except_types:
                    break
                if request is None:
                    break
                op = str(request.pop("op", ""))
                if op == "stop":
                    try:
                        line.send({"ok": True})
                    except OSError:
                        pass
                    break
                try:
                    reply = member.reply(op, request)
                except Exception as error:  # a handler's own failure: the coordinator hears it
                    reply = {"ok": False, "error": {"code": "transfer_failed", "path": None,
                                                    "message": f"{type(error).__name__}: {error}"}}
                try:
                    line.send(reply)
                except OSError:
                    break
        finally:
            line.close()
            member.close()
            if on_stop is not None:
                on_stop()

    thread = threading.Thread(target=serve, name=f"wm-member-{member.worker_id}", daemon=True)
    thread.start()
    return Membership(member, thread, line)


def _raise_refusal(answer: Optional[Mapping[str, Any]], address: str) -> None:
    if answer is None:
        raise _error("vllm_transfer_channel_failed", f"the coordinator at {address} closed the control channel")
    if not answer.get("ok"):
        err = answer.get("error") or {}
        raise _error(str(err.get("code", "vllm_transfer_channel_failed")), str(err.get("message")))
