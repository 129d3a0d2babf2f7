"""Where a full update's rollback takes generation g's bytes from: kept revisions.

A full update overwrites every target byte, so its rollback needs a copy of generation g
outside the targets: the Store's. :class:`Revisions` is what the lifecycle asks of such a
copy (whether generation g is kept and with which content digests, a restore into the
group's targets verified against them, a save). :class:`RevisionKeeper` keeps the last
``keep`` activated revisions and removes older ones, except a revision under a lease
(:meth:`RevisionKeeper.lease`, taken by every restore for its duration), so a revision
being restored is never removed under it. :class:`StoreRevisions` keeps them in Mooncake
Store (:mod:`weight_manifest_runtime.store`: one saved group per generation).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Optional, Protocol

from weight_manifest import content
from weight_manifest.errors import manifest_error as _error
from .. import store
from ..group import Coordinator

__all__ = ["DEFAULT_KEEP", "RevisionKeeper", "Revisions", "StoreRevisions"]

#: Revisions kept by default: the active one and the one before it.
DEFAULT_KEEP = 2


class Revisions(Protocol):
    """A copy of activated generations outside the targets."""

    def digests(self, generation: int) -> Optional[dict[str, str]]:
        """The content digests of kept revision ``generation``, or None if not kept."""

    def restore(self, coordinator: Coordinator, generation: int, *, check: bool = True) -> None:
        """Write kept revision ``generation`` into the coordinator's targets and (with
        ``check``: when they cover every tensor) check their content digests against the
        kept ones; ``lifecycle_revision_missing`` if it is not kept."""

    def save(self, coordinator: Coordinator, generation: int, side: str,
             expected: Optional[Mapping[str, str]] = None) -> None:
        """Keep what ``side``'s workers hold as revision ``generation`` (activated), and
        let go of revisions beyond the kept count; with ``expected`` (the generation's
        content digests), ``lifecycle_revision_invalid`` and nothing kept unless what was
        read digests to them."""


class RevisionKeeper:
    """Which generations are kept (the last ``keep`` activated) and which are leased."""

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        if keep < 1:
            raise _error("transfer_arguments_invalid", f"keep must be at least 1, not {keep}")
        self.keep = keep
        self.kept: list[int] = []
        #: The tensors every kept revision holds (the first saved one's).
        self.tensors: Optional[frozenset[str]] = None
        self._leases: dict[int, int] = {}
        self._lock = threading.Lock()

    @contextmanager
    def lease(self, generation: int) -> Iterator[None]:
        """Hold ``generation`` (it is not removed while held); ``lifecycle_revision_missing``
        if it is not kept."""
        with self._lock:
            if generation not in self.kept:
                raise _error("lifecycle_revision_missing",
                             f"revision {generation} is not kept (kept: {self.kept}); it cannot be restored")
            self._leases[generation] = self._leases.get(generation, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._leases[generation] -= 1
                if not self._leases[generation]:
                    del self._leases[generation]

    def leased(self, generation: int) -> bool:
        with self._lock:
            return generation in self._leases

    def check_whole(self, generation: int, tensors: Iterator[str]) -> None:
        """``store_failed`` unless revision ``generation`` holds every tensor the kept
        ones hold (a save from a side that lost a worker is not a revision)."""
        names = frozenset(tensors)
        if self.tensors is not None and names != self.tensors:
            missing = sorted(self.tensors - names) or sorted(names - self.tensors)
            raise _error("store_failed", f"revision {generation} would not hold the model's tensors "
                         f"({', '.join(missing[:5])} differ): it is not kept")

    @staticmethod
    def check_expected(generation: int, side: str, got: Mapping[str, str],
                       expected: Optional[Mapping[str, str]]) -> None:
        """``lifecycle_revision_invalid`` unless ``got`` (what was read from ``side``)
        equals ``expected``, generation ``generation``'s digests (None: no check)."""
        if expected is not None:
            content.check(expected, got, code="lifecycle_revision_invalid", on=f"{side}s",
                          when=f"while keeping revision {generation}", against=f"generation {generation}'s verified",
                          outcome="it is not kept (a byte changed after the verify; status(check=True) names the "
                                  "target)")

    def add(self, generation: int) -> list[int]:
        """Record ``generation`` as kept; the generations to remove now (beyond the kept
        count, oldest first, none under a lease: those go at a later add)."""
        with self._lock:
            if generation not in self.kept:
                self.kept.append(generation)
                self.kept.sort()
            excess = self.kept[:-self.keep]
            removable = [g for g in excess if g not in self._leases]
            self.kept = [g for g in self.kept if g not in removable]
            return removable


class StoreRevisions:
    """Revisions in Mooncake Store: generation g of the group is the saved group
    ``{namespace}/{model}/{revision}/{g}`` (:func:`weight_manifest_runtime.store.save`), every
    worker of the saving side answering ``store_put`` and every target holding a Store
    backend (``backend``: its name in the members' ``backends``, when not their main one)."""

    def __init__(self, client: Any, namespace: str, *, keep: int = DEFAULT_KEEP, backend: Optional[str] = None,
                 block_elements: int = content.DEFAULT_BLOCK_ELEMENTS) -> None:
        self.client, self.namespace, self.backend = client, namespace, backend
        self.block_elements = block_elements
        self.keeper = RevisionKeeper(keep)
        self.saved: dict[int, store.SaveReport] = {}
        self._digests: dict[int, dict[str, str]] = {}

    def digests(self, generation: int) -> Optional[dict[str, str]]:
        return dict(self._digests[generation]) if generation in self.keeper.kept else None

    def restore(self, coordinator: Coordinator, generation: int, *, check: bool = True) -> None:
        with self.keeper.lease(generation):
            report = self.saved[generation]
            store.restore(coordinator, self.client, report.manifest_key, manifest_digest=report.manifest_digest,
                          block_elements=self.block_elements, backend=self.backend, verify_content=check)

    def save(self, coordinator: Coordinator, generation: int, side: str,
             expected: Optional[Mapping[str, str]] = None) -> None:
        report = store.save(coordinator, self.client,
                            store.SaveOptions(namespace=self.namespace, weight_generation=generation,
                                              block_elements=self.block_elements), side=side)
        record = content.read_manifest(bytes(self.client.get(f"{report.group_id}/content")))
        try:
            self.keeper.check_whole(generation, iter(record["digests"]))
            self.keeper.check_expected(generation, side, record["digests"], expected)
        except Exception:
            self.client.remove_by_regex("^" + re.escape(report.group_id + "/"), True)
            raise
        self.keeper.tensors = self.keeper.tensors or frozenset(record["digests"])
        self.saved[generation], self._digests[generation] = report, dict(record["digests"])
        for old in self.keeper.add(generation):
            self._remove(old)

    def _remove(self, generation: int) -> None:
        report = self.saved.pop(generation)
        self._digests.pop(generation, None)
        self.client.remove_by_regex("^" + re.escape(report.group_id + "/"), True)


