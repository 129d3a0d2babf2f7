"""The durable record of a versioned update, on disk beside its coordinator.

One folder per group holds two files:

- ``owner`` (with ``epoch`` and ``lock``): which coordinator drives the group now and its
  fencing epoch (:mod:`.claim`: exclusive, written whole under a lock).
- ``decision``: the update's :class:`Decision` (its generations, mode, targets and their
  incarnations, the tensors' content digests of both generations, the epoch of the
  coordinator that wrote it, its state and, once taken, the decision: ``commit`` or
  ``abort``). Every write goes to a temporary file that is flushed and
  fsynced, renamed over the old one (atomic on POSIX), and the folder is fsynced, so a
  reader after a crash sees the old record or the new one, never a torn one. The
  coordinator writes the decision before any target activates.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from weight_manifest import ManifestError
from weight_manifest.errors import manifest_error as _error
from .claim import Claims, write_whole

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
    #: Each target's incarnation when the update was prepared: a record whose targets
    #: have other incarnations was left by an earlier run of the group (a restarted job).
    incarnations: dict[str, str] = field(default_factory=dict)

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


class DecisionLog:
    """The record of group ``group`` in ``directory`` (made if missing)."""

    def __init__(self, directory: Union[str, os.PathLike[str]], group: str) -> None:
        self.group = group
        self.folder = Path(directory) / group.replace("/", "_")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.decision_path = self.folder / "decision"
        self.claims = Claims(self.folder, group)
        self.owner_path = self.claims.owner_path

    # ---- the owner ------------------------------------------------------------------

    def claim(self, coordinator: str, *, takeover: bool = False) -> int:
        """Make ``coordinator`` the group's only coordinator; its fencing epoch
        (:meth:`.claim.Claims.claim`), greater than the record's."""
        at_least = 0
        try:
            record = self.read()
            at_least = record.epoch if record is not None else 0
        except ManifestError:  # a record that cannot be read has no epoch to exceed
            pass
        return self.claims.claim(coordinator, takeover=takeover, at_least=at_least)

    def owner(self) -> Optional[dict[str, Any]]:
        """The claim now, or None."""
        return self.claims.owner()

    def release(self, coordinator: str) -> None:
        """Let go of the claim if ``coordinator`` holds it."""
        self.claims.release(coordinator)

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
        with self.claims.locked():
            # Compare and write: only the claim's holder, at its epoch, writes the record,
            # so a deposed coordinator's late decision never replaces its successor's.
            if not self.claims.holds(record.coordinator, record.epoch):
                raise _error("lifecycle_fenced",
                             f"coordinator {record.coordinator} (epoch {record.epoch}) no longer holds group "
                             f"{self.group} (claim: {self.claims.owner()}): its record is not written")
            write_whole(self.folder, self.decision_path.name, record.to_json(), durable=durable)

    def set_aside(self, why: str) -> Optional[Path]:
        """Move the record out of the way (renamed ``decision.set-aside-<time>``, kept for
        the operator, with ``why`` beside it); the path it went to, or None if there was
        none. What the targets hold is then the only truth (``VersionedUpdate.recover``)."""
        if not self.decision_path.exists():
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.monotonic_ns() % 10**9:09d}"
        aside = self.folder / f"decision.set-aside-{stamp}"
        os.replace(self.decision_path, aside)
        aside.with_name(aside.name + ".why").write_text(why + "\n", encoding="utf-8")
        return aside
