"""Kept revisions in this process's memory, for unit tests and the fault campaign: the
:class:`weight_manifest_runtime.lifecycle.Revisions` of members held here (a
:class:`~weight_manifest_runtime.group.LocalGroup`), with the same keeping and leases as the
Store's (:class:`~weight_manifest_runtime.lifecycle.RevisionKeeper`). A saved revision is each
global tensor rebuilt from the saving side's boxes (numpy), so it restores into any
layout; the restore is checked against the digests taken at the save."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from weight_manifest import content
from weight_manifest.errors import manifest_error as _error
from weight_manifest.live import tensor_of
from ..group import Coordinator, Member
from ..lifecycle.revisions import DEFAULT_KEEP, RevisionKeeper

__all__ = ["MemoryRevisions"]


def _box(record: Mapping[str, Any]) -> tuple[slice, ...]:
    return tuple(slice(o, o + n) for o, n in zip(record["global_offset"], record["local_shape"]))


class MemoryRevisions:
    """Revisions of the tensors of ``members`` (worker id -> member)."""

    def __init__(self, members: Mapping[str, Member], *, keep: int = DEFAULT_KEEP,
                 block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> None:
        self.members = members
        self.keeper = RevisionKeeper(keep)
        self.block_elements = block_elements
        self.tensors: dict[int, dict[str, np.ndarray]] = {}
        self._digests: dict[int, dict[str, str]] = {}
        #: Faults of a test: a generation whose saved bytes are lost; the Store's master
        #: stopped (nothing is read or saved until it is back).
        self.unavailable: set[int] = set()
        self.stopped = False

    def digests(self, generation: int) -> Optional[dict[str, str]]:
        if generation not in self.keeper.kept or generation in self.unavailable or self.stopped:
            return None
        return dict(self._digests[generation])

    def save(self, coordinator: Coordinator, generation: int, side: str,
             expected: Optional[Mapping[str, str]] = None) -> None:
        if self.stopped:
            raise _error("store_failed", f"the Store's master does not answer: revision {generation} is not saved")
        digests = coordinator.digests(side, self.block_elements)  # raises unless the side covers every tensor
        self.keeper.check_whole(generation, iter(digests))
        self.keeper.check_expected(generation, side, digests, expected)
        self.keeper.tensors = self.keeper.tensors or frozenset(digests)
        whole: dict[str, np.ndarray] = {}
        for worker in coordinator.workers(side):
            member = self.members[worker]
            for record in member.inventory()["tensors"]:
                held = np.asarray(tensor_of(member.tensors, record))
                name = record["tensor_id"]
                if name not in whole:
                    whole[name] = np.zeros(record["global_shape"], dtype=held.dtype)
                whole[name][_box(record)] = held
        self.tensors[generation] = whole
        self._digests[generation] = digests
        for old in self.keeper.add(generation):
            self.tensors.pop(old, None)
            self._digests.pop(old, None)

    def restore(self, coordinator: Coordinator, generation: int, *, check: bool = True) -> None:
        with self.keeper.lease(generation):
            if generation in self.unavailable or self.stopped:
                raise _error("lifecycle_revision_missing", f"revision {generation} is no longer in the Store")
            whole = self.tensors[generation]
            targets = coordinator.workers("target")
            serving = [w for w in targets if not self.members[w].writable()]
            if serving:  # as the Store's restore, which the members refuse then
                raise _error("lifecycle_state_invalid",
                             f"target {serving[0]} serves from its tensors: a restore would change served bytes")
            for worker in targets:
                member = self.members[worker]
                for record in member.inventory()["tensors"]:
                    np.copyto(np.asarray(tensor_of(member.tensors, record)), whole[record["tensor_id"]][_box(record)])
            if not check:
                return
            got = coordinator.digests("target", self.block_elements, workers=targets)
            content.check(self._digests[generation], got, code="store_verify_failed",
                          when=f"after the restore of revision {generation}", against="the saved",
                          outcome="nothing is restored")
