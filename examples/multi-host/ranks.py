"""One rank of a synthetic model as a Ray actor that adopts the member role of a
weight-update group (:class:`weight_manifest_runtime.group.ray.GroupMember`): its shard of the
model of examples/reshard-te/model.py (filled with the model's defining function, or
zeros), a Mooncake Transfer Engine on its host's own address, optionally a Store client,
and handlers that check every byte it holds against the defining function. Used by
multi_host.py and the multi-host tests."""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

import model
import weight_manifest as wm
from weight_manifest_runtime import store
from weight_manifest_runtime.group import Member
from weight_manifest_runtime.group.ray import GroupMember, engine_backend

__all__ = ["Rank"]


class Rank(GroupMember):
    """One rank of an instance: its shard of the synthetic model, on this host's engine."""

    def __init__(self, group: str, key: str, side: str, instance: str, layout: dict[str, int],
                 rank: dict[str, int], fill: bool, size: int, store_master: Optional[str] = None,
                 generation: Optional[int] = None) -> None:
        self.layout, self.rank = model.Layout(**layout), wm.ParallelRank(**rank)
        self.specs = model.synthetic_tensors(size)
        shard = model.synthetic_shard(self.specs, self.layout, self.rank, fill)
        self.tensors = shard["tensors"]
        self.side = side
        self.mutation: Optional[tuple[float, int]] = None
        backend, session = engine_backend()
        replica = f"dp{self.rank.dp}." if self.layout.dp > 1 else ""
        self.worker_id = f"{instance}-{replica}pp{self.rank.pp}.tp{self.rank.tp}"
        self.where = dict(worker_id=self.worker_id, endpoint=session, rank=self.rank, instance_id=instance,
                          lease_id=f"{instance}-lease", generation=1, **shard["where"])
        handlers = {"verify": self.verify, "mutate": self.mutate, "set": self.set, "clear": self.clear}
        backends: dict[str, Any] = {}
        if store_master is not None:
            # A Store client of its own (no memory of its own: the holder on host 0 has it),
            # its tensors registered with it: saves put from them, restores read into them.
            from mooncake.store import MooncakeDistributedStore

            client = MooncakeDistributedStore()
            host = session.rsplit(":", 1)[0]
            if client.setup(host, "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", store_master) != 0:
                raise wm.ManifestError(f"{self.worker_id}: the Store client did not connect to {store_master}")
            backends["store"] = store.StoreBackend(client)
            for tensor in self.tensors.values():
                backends["store"].register(int(tensor.ctypes.data), tensor.nbytes)
            handlers.update(store.handlers(backends["store"]))
        self.member = Member(self.tensors, backend=backend, session=session, handlers=handlers, backends=backends,
                             **self.where)
        if generation is not None and side == "target":
            # A versioned target (docs/lifecycle.md), serving ``generation`` from the start.
            from weight_manifest_runtime.lifecycle import TargetVersions

            self.versions = TargetVersions(self.member, generation)
        self.wm_join(group, key, side, self.member)

    def verify(self, _: dict[str, Any]) -> dict[str, Any]:
        problem = model.synthetic_check(self.specs, self.layout, self.rank, self.tensors, self.mutation)
        if problem is not None:
            raise wm.ManifestError(f"{self.worker_id}: {problem}")
        return {"verified": sum(t.nbytes for t in self.tensors.values())}

    def mutate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The next weights: sources change (fraction, block) of their blocks in place, a
        target learns what it must then hold."""
        self.mutation = (float(request["fraction"]), int(request["block"]))
        for tensor in self.specs:
            if tensor.name in self.tensors and self.side == "source":
                offset, _ = model.box(tensor, self.rank, self.layout)
                model.mutate(self.tensors[tensor.name].view(np.uint32), tensor, offset, *self.mutation)
        return {}

    def clear(self, _: dict[str, Any]) -> dict[str, Any]:
        for tensor in self.tensors.values():
            tensor.view(np.uint8).fill(0)
        return {}

    def set(self, request: dict[str, Any]) -> dict[str, Any]:
        self.member.where.update({k: request[k] for k in ("generation", "lease_id") if k in request})
        return {}

    def first_bytes(self, n: int) -> list[int]:
        first = self.tensors[sorted(self.tensors)[0]]
        return first.view(np.uint8).reshape(-1)[:n].tolist()

    def region(self) -> tuple[int, int]:
        first = self.tensors[sorted(self.tensors)[0]]
        return int(first.ctypes.data), int(first.nbytes)

    def pid(self) -> int:
        return os.getpid()
