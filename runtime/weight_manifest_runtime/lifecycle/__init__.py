"""Atomic weight versions (contract §22): a target serves generation g until every
target verified g+1, then all activate it at one barrier, or all go back to g.

- :mod:`.versions`: a target's side (:class:`TargetVersions`: the generation it serves,
  the one staged, its undo log; what the serving engine waits on);
- :mod:`.blocks`: the block values a target keeps of the generation it verified (a
  delta's check re-hashes only the blocks the delta wrote);
- :mod:`.update`: the coordinator's side (:class:`VersionedUpdate`: prepare, transfer,
  verify, commit or abort and rollback; the recovery of a replacement coordinator);
- :mod:`.record`: the durable decision record beside the coordinator (:class:`DecisionLog`);
- :mod:`.revisions`: the kept revisions a full update rolls back to (:class:`StoreRevisions`
  in Mooncake Store, :class:`RevisionKeeper`: the last K, leased while restored).
"""

from .record import Decision, DecisionLog
from .revisions import DEFAULT_KEEP, RevisionKeeper, Revisions, StoreRevisions
from .update import MODES, StepHook, VersionedUpdate
from .versions import DEFAULT_ORPHAN_SECONDS, TargetVersions

__all__ = [
    "DEFAULT_KEEP",
    "DEFAULT_ORPHAN_SECONDS",
    "MODES",
    "Decision",
    "DecisionLog",
    "RevisionKeeper",
    "Revisions",
    "StepHook",
    "StoreRevisions",
    "TargetVersions",
    "VersionedUpdate",
]
