"""The durable record of a versioned update, on disk beside its coordinator.

One folder per group holds two files:

- ``owner``: which coordinator drives the group now (its id, process id and host), made
  with ``O_EXCL`` so two coordinators cannot both hold it. A second coordinator is refused
  with ``lifecycle_coordinator_conflict`` while the owner's process lives on this host; a
  claim whose process is gone (or, with ``takeover``, any claim: the operator says the
  old coordinator is dead) is replaced.
- ``decision``: the update's :class:`Decision` (its generations, mode, targets, the
  tensors' content digests of both generations, its state and, once taken, the decision:
  ``commit`` or ``abort``). Every write goes to a temporary file that is flushed and
  fsynced, renamed over the old one (atomic on POSIX), and the folder is fsynced, so a
  reader after a crash sees the old record or the new one, never a torn one. The
  coordinator writes the decision before any target activates.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from .._errors import manifest_error as _error

__all__ = ["FORMAT", "STATES", "Decision", "DecisionLog"]

#: The record's format name (its ``format`` member).
FORMAT = "weight-manifest.decision/1"
#: The states of an update, in order; ``done`` ends it (committed or rolled back). Only
#: ``prepared``, ``decided`` and ``done`` are written; the others are the coordinator's.
STATES = ("prepared", "transferring", "verified", "decided", "done")


@dataclass
class Decision:
    """What a replacement coordinator needs to finish an update."""

    group: str
    coordinator: str
    epoch: int
    from_generation: int
    to_generation: int
    mode: str
    targets: list[str]
    from_digests: dict[str, str]
    state: str = "prepared"
    #: ``commit`` or ``abort`` once taken (state ``decided`` or ``done``), else None.
    decision: Optional[str] = None
    to_digests: dict[str, str] = field(default_factory=dict)
    #: The generation every target serves once the update is done.
    active_generation: Optional[int] = None
    #: Why the update was aborted (the failure's code and message), if it was.
    reason: Optional[dict[str, Any]] = None

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **asdict(self)}, sort_keys=True)

    @staticmethod
    def from_json(text: Union[str, bytes], where: str) -> "Decision":
        """Read a record; ``lifecycle_decision_invalid`` naming ``where`` if it is not one."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
                raise ValueError(f"not a {FORMAT} record")
            record = Decision(**data)
        except (ValueError, TypeError) as error:
            raise _error("lifecycle_decision_invalid", f"{where} is not a decision record: {error}") from None
        if record.state not in STATES or record.decision not in (None, "commit", "abort") or (
                (record.state in ("decided", "done")) != (record.decision is not None)):
            raise _error("lifecycle_decision_invalid",
                         f"{where} has state {record.state!r} with decision {record.decision!r}")
        return record


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DecisionLog:
    """The record of group ``group`` in ``directory`` (made if missing)."""

    def __init__(self, directory: Union[str, os.PathLike[str]], group: str) -> None:
        self.group = group
        self.folder = Path(directory) / group.replace("/", "_")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.decision_path = self.folder / "decision"
        self.owner_path = self.folder / "owner"

    # ---- the owner ------------------------------------------------------------------

    def claim(self, coordinator: str, *, takeover: bool = False) -> None:
        """Make ``coordinator`` the group's only coordinator (idempotent for the owner)."""
        me = {"coordinator": coordinator, "pid": os.getpid(), "host": socket.gethostname()}
        for _ in range(3):
            try:
                fd = os.open(self.owner_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                owner = self.owner()
                if owner is None:
                    continue
                if owner.get("coordinator") == coordinator:
                    return
                live = owner.get("host") == me["host"] and _alive(int(owner.get("pid", 0)))
                if live and not takeover:
                    raise _error("lifecycle_coordinator_conflict",
                                 f"group {self.group} is driven by coordinator {owner.get('coordinator')} "
                                 f"(process {owner.get('pid')} on {owner.get('host')}); one coordinator per group")
                self.owner_path.unlink(missing_ok=True)
                continue
            # Not fsynced: a claim that a crash tore or lost is nobody's, which is what a
            # crashed coordinator's claim is anyway.
            with os.fdopen(fd, "w") as out:
                out.write(json.dumps(me))
            return
        raise _error("lifecycle_coordinator_conflict", f"group {self.group}: another coordinator keeps claiming it")

    def owner(self) -> Optional[dict[str, Any]]:
        """The claim now, or None."""
        try:
            owner: dict[str, Any] = json.loads(self.owner_path.read_text(encoding="utf-8"))
            return owner
        except FileNotFoundError:
            return None
        except ValueError:
            return {}  # a claim torn by a crash before its fsync: nobody's

    def release(self, coordinator: str) -> None:
        """Let go of the claim if ``coordinator`` holds it."""
        owner = self.owner()
        if owner is not None and owner.get("coordinator") == coordinator:
            self.owner_path.unlink(missing_ok=True)

    # ---- the record -----------------------------------------------------------------

    def read(self) -> Optional[Decision]:
        """The record, or None if the group never had one."""
        try:
            text = self.decision_path.read_bytes()
        except FileNotFoundError:
            return None
        record = Decision.from_json(text, str(self.decision_path))
        if record.group != self.group:
            raise _error("lifecycle_decision_stale",
                         f"{self.decision_path} is the record of group {record.group}, not {self.group}")
        return record

    def write(self, record: Decision, *, durable: bool = True) -> None:
        """Replace the record whole (temporary file, rename), durably (fsync of the file
        before the rename, of the folder after) unless ``durable`` is false: a record whose
        loss in a crash only makes a replacement redo idempotent work (``done``)."""
        temporary = self.folder / f".decision.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(record.to_json())
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, self.decision_path)
        if durable:
            _fsync_dir(self.folder)
