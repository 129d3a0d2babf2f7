"""The group's exclusive claim and its fencing epochs (contract §22.4).

One coordinator drives a group. Its claim is a file ``owner`` in the group's folder, and
every change of it happens under an exclusive ``flock`` of the folder's ``lock`` file, so
two processes never decide at once: the one that holds the lock reads the claim, decides,
and writes the new claim whole (temporary file, fsync, rename) before it lets go. A claim
is therefore never seen half-written, and none is removed because it looks empty while
its holder may still be writing it (the holder would hold the lock). The kernel releases
the lock of a process that dies, so a crash inside the critical section blocks nobody.

Each new holder gets an **epoch** one greater than any before it (the folder's ``epoch``
file, written durably under the same lock, never goes back, even when a claim is
released): the fencing token that every lifecycle call and transfer carries. A member
remembers the greatest epoch it has seen and refuses calls of a smaller one
(``lifecycle_fenced``), so a deposed coordinator's late commands change nothing.

``flock`` is exclusive between processes of one host on a local file system; the folder
belongs beside the coordinator, on its host (docs/lifecycle.md).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from weight_manifest.errors import manifest_error as _error

__all__ = ["Claims", "process_alive"]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _started(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (field 22 of its stat), which tells a process
    from a later one that reuses its number; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    return stat[stat.rfind(")") + 2:].split()[19]


def process_alive(pid: int, started: Optional[str]) -> bool:
    """Whether process ``pid`` of this host still runs (and is the one that started at
    ``started``, when known)."""
    now = _started(pid)
    if now is None:
        return False
    return started is None or now == started


def write_whole(folder: Path, name: str, text: str, *, durable: bool = True) -> None:
    """``folder/name`` replaced whole: a temporary file renamed over it; ``durable``:
    the file fsynced before the rename and the folder after it."""
    # Unique per writer: two coordinators of one process may write at once (one of them
    # is then refused by the fencing check, not by a clash of temporary files).
    temporary = folder / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
        if durable:
            out.flush()
            os.fsync(out.fileno())
    os.replace(temporary, folder / name)
    if durable:
        _fsync_dir(folder)


class Claims:
    """The claim of group ``group`` in ``folder`` (which exists)."""

    def __init__(self, folder: Path, group: str) -> None:
        self.folder, self.group = folder, group
        self.owner_path = folder / "owner"
        self.epoch_path = folder / "epoch"
        self.lock_path = folder / "lock"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive among every process of this host that claims this group."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the last descriptor releases the lock

    def owner(self) -> Optional[dict[str, Any]]:
        """The claim now, or None; ``{"unreadable": why}`` for a file that is not a claim
        (written by hand, or by a version that did not write claims whole)."""
        try:
            text = self.owner_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            owner = json.loads(text)
            if not isinstance(owner, dict) or not isinstance(owner.get("coordinator"), str):
                raise ValueError("no coordinator")
        except ValueError as error:
            return {"unreadable": f"{self.owner_path} is not a claim ({error})"}
        return owner

    def last_epoch(self) -> int:
        """The greatest epoch ever given in this folder (0 if none)."""
        try:
            return int(self.epoch_path.read_text(encoding="utf-8").strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def claim(self, coordinator: str, *, takeover: bool = False, at_least: int = 0) -> int:
        """Make ``coordinator`` the group's only coordinator and return its epoch (the
        same one again for its holder). Refused with ``lifecycle_coordinator_conflict``
        while another holder's process runs on this host, or runs on another host (this
        host cannot tell), unless ``takeover``: the operator says that holder is dead.
        A new epoch is greater than every earlier one and than ``at_least`` (the epoch of
        the decision record, which may predate this folder's counter)."""
        host = socket.gethostname()
        me = {"coordinator": coordinator, "pid": os.getpid(), "host": host, "started": _started(os.getpid())}
        with self.locked():
            owner = self.owner()
            if owner is not None and owner.get("coordinator") == coordinator and "epoch" in owner:
                return int(owner["epoch"])
            if owner is not None and "unreadable" not in owner and not takeover and self.live(owner):
                raise _error("lifecycle_coordinator_conflict",
                             f"group {self.group} is driven by coordinator {owner.get('coordinator')} "
                             f"(process {owner.get('pid')} on {owner.get('host')}, epoch {owner.get('epoch')}); "
                             "one coordinator per group")
            epoch = max(self.last_epoch(), int(owner.get("epoch", 0)) if owner else 0, at_least) + 1
            write_whole(self.folder, self.epoch_path.name, f"{epoch}\n")
            write_whole(self.folder, self.owner_path.name, json.dumps({**me, "epoch": epoch}, sort_keys=True))
            return epoch

    @staticmethod
    def live(owner: dict[str, Any]) -> bool:
        """Whether the holder of claim ``owner`` may still run: its process runs on this
        host, or it is on another host (which this host cannot tell)."""
        if owner.get("host") != socket.gethostname():
            return True
        try:
            pid = int(owner.get("pid", 0))
        except (TypeError, ValueError):
            return False
        return pid > 0 and process_alive(pid, owner.get("started"))

    def holds(self, coordinator: str, epoch: int) -> bool:
        """Whether ``coordinator`` holds the claim with ``epoch`` now (call under
        :meth:`locked` to act on the answer)."""
        owner = self.owner()
        return owner is not None and owner.get("coordinator") == coordinator and owner.get("epoch") == epoch

    def release(self, coordinator: str) -> None:
        """Let go of the claim if ``coordinator`` holds it (its epoch stays spent)."""
        with self.locked():
            owner = self.owner()
            if owner is not None and owner.get("coordinator") == coordinator:
                self.owner_path.unlink(missing_ok=True)
                _fsync_dir(self.folder)
