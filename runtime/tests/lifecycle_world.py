"""A group in this process for versioned updates (test_lifecycle.py, fault_campaign.py):
sources and targets of random layouts holding slices of global tensors, and the
independent record of what each generation is.

The oracle is numpy: each generation g is a dict of global tensors drawn here
(:attr:`World.generations`); a worker's bytes hold generation g when each of its tensors
equals the slice of g's global tensor its box selects (:meth:`World.held`), computed from
the boxes drawn here, not from the planner or the lifecycle."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np

import weight_manifest as wm
from weight_manifest import live
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Coordinator, LocalGroup, Member
from weight_manifest_runtime import store as wm_store
from weight_manifest_runtime.lifecycle import DecisionLog, StoreRevisions, TargetVersions, VersionedUpdate
from weight_manifest_runtime.lifecycle.memory import MemoryRevisions

# A tensor: (global shape, split dim over tp or None, pipeline layer 0 or 1)
Model = dict[str, tuple[tuple[int, ...], Optional[int], int]]


def random_model(rng: np.random.Generator, scale: int = 1) -> Model:
    """2-5 tensors whose split dims divide by 4 (TP 1, 2 and 4 all fit)."""
    model: Model = {}
    for i in range(int(rng.integers(2, 6))):
        split = [None, 0, 1][int(rng.integers(0, 3))]
        rows, cols = 4 * int(rng.integers(1, 5 * scale + 1)), 4 * int(rng.integers(1, 9))
        shape: tuple[int, ...] = (rows, cols) if split != None or rng.random() < 0.7 else (cols,)
        model[f"t{i}"] = (shape, split if len(shape) == 2 else None, i % 2)
    return model


def box(model: Model, name: str, tp: int, t: int) -> tuple[list[int], tuple[slice, ...]]:
    """Rank ``t`` of ``tp``'s box of tensor ``name``: its offset and the slices it holds."""
    shape, split, _ = model[name]
    offset = [0] * len(shape)
    index = [slice(None)] * len(shape)
    if split is not None:
        size = shape[split] // tp
        offset[split] = t * size
        index[split] = slice(t * size, (t + 1) * size)
    return offset, tuple(index)


class Side:
    """One side's workers: one per (pp, tp) rank, holding the slices of its boxes."""

    def __init__(self, model: Model, prefix: str, tp: int, pp: int, values: dict[str, np.ndarray]) -> None:
        self.workers: dict[str, dict[str, np.ndarray]] = {}
        self.boxes: dict[tuple[str, str], tuple[slice, ...]] = {}
        self.where: dict[str, dict[str, Any]] = {}
        for p in range(pp):
            for t in range(tp):
                worker = f"{prefix}-p{p}t{t}"
                held, descriptors, offsets = {}, {}, {}
                for name, (shape, split, layer) in model.items():
                    if layer * pp // 2 != p:
                        continue
                    offset, index = box(model, name, tp, t)
                    held[name] = np.ascontiguousarray(values[name][index]).copy()
                    descriptors[name] = wm.TensorDescriptor(tensor_id=name, global_shape=shape, dtype="float32",
                                                            itemsize=4, partition_dim=split,
                                                            layout_fingerprint="test:v1")
                    offsets[name] = offset
                    self.boxes[(worker, name)] = index
                if not held:
                    continue
                self.workers[worker] = held
                self.where[worker] = dict(worker_id=worker, endpoint=worker, instance_id=prefix, lease_id="lease-1",
                                          generation=1, rank=wm.ParallelRank(pp=p, tp=t), descriptors=descriptors,
                                          offsets=offsets, model_id="model", revision="r1")

    def write(self, values: dict[str, np.ndarray]) -> None:
        """Every worker's bytes to the slices of ``values`` (in place)."""
        for worker, held in self.workers.items():
            for name, tensor in held.items():
                np.copyto(tensor, values[name][self.boxes[(worker, name)]])


class World:
    """Sources (TP ``source[0]`` x PP ``source[1]``) holding generation 2, targets
    holding and serving generation 1, in one LocalGroup, with the decision log in
    ``folder`` and kept revisions in memory (generation 1 saved from the targets)."""

    def __init__(self, rng: np.random.Generator, folder: Path, *, source: tuple[int, int] = (2, 1),
                 target: tuple[int, int] = (1, 2), model: Optional[Model] = None, delta: Optional[float] = None,
                 backend: Optional[transfer.Backend] = None, keep: int = 2, store: Any = None,
                 delta_rows: bool = False) -> None:
        self.rng = rng
        self.model = model or random_model(rng)
        self.folder = folder
        self.generations: dict[int, dict[str, np.ndarray]] = {1: self._draw()}
        self.source = Side(self.model, "src", *source, self.generations[1])
        self.target = Side(self.model, "dst", *target, self.generations[1])
        self.backend = backend or transfer.LocalBackend()
        self.group = LocalGroup()
        self.members: dict[str, Member] = {}
        self.versions: dict[str, TargetVersions] = {}
        self.closers: list[Any] = []
        for side_name, side in (("source", self.source), ("target", self.target)):
            for worker, held in side.workers.items():
                extra: dict[str, Any] = {}
                if store is not None:
                    extra = self._store_member(store, held)
                member = Member(held, backend=self.backend, session=worker, staging_bytes=0, **extra,
                                **side.where[worker])
                self.group.join(member, side_name)
                self.members[worker] = member
                if side_name == "target":
                    self.versions[worker] = TargetVersions(member, 1)
        self.group.refresh()
        self.coordinator = Coordinator(self.group)
        self.revisions: Any = MemoryRevisions(self.members, keep=keep)
        if store is not None:
            self.client = store.client()
            self.closers.append(self.client)
            self.revisions = StoreRevisions(self.client, "lifecycle", keep=keep, backend="store")
        self.revisions.save(self.coordinator, 1, "target")
        self.log = DecisionLog(folder, "group-1")
        self.delta = delta
        #: A delta changes whole rows (a fraction ``delta`` of them) rather than elements.
        self.delta_rows = delta_rows
        self.next_generation(2)

    def _store_member(self, local: Any, held: dict[str, np.ndarray]) -> dict[str, Any]:
        """A member's Store client and backend (a restore's and a save's), its tensors
        registered with it."""
        client = local.client(local_buffer_bytes=1 << 20)
        backend = wm_store.StoreBackend(client)
        for tensor in held.values():
            backend.register(int(tensor.ctypes.data), tensor.nbytes)
        self.closers.extend([backend, client])
        return {"backends": {"store": backend}, "handlers": wm_store.handlers(backend)}

    def close(self) -> None:
        for member in self.members.values():
            member.close()
        for thing in self.closers:
            thing.close()

    def _draw(self) -> dict[str, np.ndarray]:
        return {n: self.rng.integers(0, 2**32, size=s, dtype=np.uint32).view(np.float32)
                for n, (s, _, _) in self.model.items()}

    def next_generation(self, g: int) -> None:
        """Generation ``g`` drawn (a delta: a fraction of the elements of g-1 changed) and
        written into the sources (after their snapshot of g-1, for a delta)."""
        before = self.generations[g - 1]
        if self.delta is None:
            self.generations[g] = self._draw()
        else:
            self.source.write(before)
            self.coordinator.snapshot()
            now = {}
            for name, values in before.items():
                bits = values.copy().view(np.uint32)
                flat = bits.reshape(-1)
                if self.delta_rows and bits.ndim == 2:
                    bits[self.rng.random(bits.shape[0]) < self.delta] ^= np.uint32(0x5A5A5A5A)
                else:
                    flat[self.rng.random(flat.size) < self.delta] ^= np.uint32(0x5A5A5A5A)
                # At least one change in every target box, so that no target's bytes are
                # both generations (the oracle tells them apart).
                for (_, tensor), index in self.target.boxes.items():
                    if tensor == name and np.array_equal(bits[index], values.view(np.uint32)[index]):
                        where = tuple(int(self.rng.integers(b.start or 0, b.stop if b.stop is not None else n))
                                      for b, n in zip(index, bits.shape))
                        bits[where] ^= np.uint32(0x5A5A5A5A)
                now[name] = bits.view(np.float32)
            self.generations[g] = now
        self.source.write(self.generations[g])

    def update(self, **kwargs: Any) -> VersionedUpdate:
        return VersionedUpdate(self.coordinator, self.log, revisions=self.revisions, **kwargs)

    def bound(self) -> wm.BoundPlan:
        return self.coordinator.bind(self.coordinator.plan())

    def held(self, worker: str) -> Optional[int]:
        """The generation whose slices ``worker`` (a target) holds, or None (mixed)."""
        for g, values in sorted(self.generations.items(), reverse=True):
            if all(np.array_equal(t.view(np.uint32), values[n][self.target.boxes[(worker, n)]].view(np.uint32))
                   for n, t in self.target.workers[worker].items()):
                return g
        return None
