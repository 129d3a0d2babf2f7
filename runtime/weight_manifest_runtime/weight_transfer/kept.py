"""Where a full update of vLLM engines rolls back from without a Store: each target keeps
a copy of the generation it serves in its own process memory.

:class:`KeptOnTargets` is the :class:`weight_manifest_runtime.lifecycle.Revisions` of a group
whose targets answer :func:`handlers`' calls (``wt_keep``: copy what it holds now as
generation g; ``wt_restore``: write generation g back, refused while it serves;
``wt_drop``). The copy costs one more copy of each target's bytes, in that target's
memory (:attr:`KeptOnTargets.kept_bytes`, on all targets; while a new generation is kept
and before the oldest is dropped, one copy more); the digests of a kept generation are
the targets' own, checked against what the generation was verified with (``expected``)
before it is kept. With generation g kept, a delta keeps no undo log either: its
rollback restores g from these copies."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Optional

import torch

from weight_manifest import content
from weight_manifest.errors import manifest_error as _error
from ..group import Coordinator, Handler, Member
from ..lifecycle.revisions import RevisionKeeper

__all__ = ["KeptOnTargets", "handlers"]


def handlers(member: Member) -> dict[str, Handler]:
    """The calls by which ``member`` (a target) keeps copies of its own tensors."""
    kept: dict[int, dict[str, torch.Tensor]] = {}
    lock = threading.Lock()

    def keep(request: dict[str, Any]) -> dict[str, Any]:
        generation = int(request["generation"])
        copy = {n: t.detach().clone() for n, t in member.tensors.items()}
        with lock:
            kept[generation] = copy
        return {"bytes": sum(t.numel() * t.element_size() for t in copy.values())}

    def restore(request: dict[str, Any]) -> dict[str, Any]:
        generation = int(request["generation"])
        if not member.writable():
            raise _error("lifecycle_state_invalid",
                         f"target {member.worker_id} serves from its tensors: a restore would change served bytes")
        with lock:
            copy = kept.get(generation)
        if copy is None:
            raise _error("lifecycle_revision_missing",
                         f"target {member.worker_id} keeps no copy of generation {generation}")
        for name, tensor in member.tensors.items():
            tensor.copy_(copy[name])
        return {}

    def drop(request: dict[str, Any]) -> dict[str, Any]:
        with lock:
            kept.pop(int(request["generation"]), None)
        return {}

    return {"wt_keep": keep, "wt_restore": restore, "wt_drop": drop}


class KeptOnTargets:
    """Revisions kept by the targets themselves (the last ``keep`` activated)."""

    def __init__(self, *, keep: int = 1, block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> None:
        self.keeper = RevisionKeeper(keep)
        self.block_elements = block_elements
        self._digests: dict[int, dict[str, str]] = {}
        self._bytes: dict[int, int] = {}

    @property
    def kept_bytes(self) -> int:
        """The bytes the kept copies take, in all the targets' memory together."""
        return sum(self._bytes.values())

    def digests(self, generation: int) -> Optional[dict[str, str]]:
        return dict(self._digests[generation]) if generation in self.keeper.kept else None

    def save(self, coordinator: Coordinator, generation: int, side: str,
             expected: Optional[Mapping[str, str]] = None) -> None:
        if side != "target":
            raise _error("store_failed", f"revision {generation} is kept by the targets only, not from the {side}s")
        targets = coordinator.workers("target")
        got = coordinator.digests("target", self.block_elements, workers=targets)
        self.keeper.check_whole(generation, iter(got))
        self.keeper.check_expected(generation, side, got, expected)
        replies = coordinator.request_all(targets, {"op": "wt_keep", "generation": generation})
        self.keeper.tensors = self.keeper.tensors or frozenset(got)
        self._digests[generation] = got
        self._bytes[generation] = sum(int(r["bytes"]) for r in replies.values())
        for old in self.keeper.add(generation):
            self._digests.pop(old, None)
            self._bytes.pop(old, None)
            coordinator.request_all(targets, {"op": "wt_drop", "generation": old})

    def restore(self, coordinator: Coordinator, generation: int, *, check: bool = True) -> None:
        with self.keeper.lease(generation):
            targets = coordinator.workers("target")
            coordinator.request_all(targets, {"op": "wt_restore", "generation": generation})
            if check:
                got = coordinator.digests("target", self.block_elements, workers=targets)
                content.check(self._digests[generation], got, code="lifecycle_rollback_failed",
                              when=f"after the restore of kept generation {generation}", against="the kept",
                              outcome="they stay out of service")
