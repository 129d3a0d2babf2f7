"""A torch trainer's weights where they live: the local shards of a ``state_dict`` of
DTensors and plain tensors, with their boxes, descriptors and the worker's rank.

Each DTensor's box comes from its own placements on its own ``DeviceMesh``, applied left
to right as torch applies them: ``Shard(d)`` keeps this rank's ``torch.chunk`` piece of
what dim d still holds (uneven chunks, empty ones included), ``_StridedShard(d,
split_factor=f)`` (FSDP2 over a tensor-parallel dim) keeps its piece of each of f equal
splits, ``Replicate()`` keeps everything. What a rank holds of a dim is then a list of
global indices; runs of consecutive ones are boxes, so a strided shard whose rows are not
consecutive becomes several boxes of one tensor, keyed ``(tensor_id, global_offset)`` (see
:mod:`weight_manifest.live`). A plain tensor is held whole. ``Partial`` placements,
non-default shard orders and values that are not tensors are refused
(``dtensor_placement_unsupported``) rather than described wrongly.

The worker's rank is its coordinate on the trainer's mesh, each mesh dim mapped to one of
the contract's axes (dp, tp, pp, ep) by a small explicit mapping: ``{"dp_shard": "dp",
"tp": "tp"}``. Without one, a dim named ``tp``, ``pp`` or ``ep`` is that axis and every
other dim (``dp``, ``dp_shard``, ``dp_replicate``, ``fsdp``, ``cp``, or an unnamed one) is
dp. Several mesh dims of one axis combine in mesh order, row-major. A mapping that names
an axis other than the four, leaves a mesh dim out or names a dim the mesh does not have
is ``dtensor_axes_invalid``.

The live memory is the DTensor's local tensor itself (``to_local()``: the same storage,
so an optimizer step in place keeps every address), read without a copy by
:func:`weight_manifest.live.runtime_inventory`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from weight_manifest import ParallelRank, TensorDescriptor, hf, live
from weight_manifest.errors import manifest_error as _error

__all__ = ["AXES", "LocalShards", "default_axes", "local_shards", "mesh_rank"]

AXES = ("dp", "tp", "pp", "ep")
"""The contract's parallel axes a mesh dim can map to."""


def _dim_names(mesh: Any) -> tuple[str, ...]:
    """The mesh's dim names; an unnamed mesh's dims are named by their index."""
    names = getattr(mesh, "mesh_dim_names", None)
    return tuple(names) if names else tuple(str(i) for i in range(mesh.ndim))


def default_axes(mesh: Any) -> dict[str, str]:
    """The default mapping of ``mesh``'s dims: ``tp``, ``pp`` and ``ep`` are themselves,
    every other dim is dp."""
    return {name: name if name in ("tp", "pp", "ep") else "dp" for name in _dim_names(mesh)}


def mesh_rank(mesh: Any, axes: Optional[Mapping[str, str]] = None) -> ParallelRank:
    """This process's :class:`ParallelRank` on ``mesh``: each axis the row-major
    combination of the coordinates of the mesh dims mapped to it (``axes``, default
    :func:`default_axes`)."""
    names = _dim_names(mesh)
    mapping = dict(default_axes(mesh) if axes is None else axes)
    for name, axis in mapping.items():
        if name not in names:
            raise _error("dtensor_axes_invalid", f"the axes map mesh dim {name!r}, the mesh has {list(names)}")
        if axis not in AXES:
            raise _error("dtensor_axes_invalid", f"mesh dim {name!r} maps to {axis!r}, not one of {list(AXES)}")
    missing = [n for n in names if n not in mapping]
    if missing:
        raise _error("dtensor_axes_invalid", f"the axes leave mesh dims {missing} out: map each to one of {list(AXES)}")
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        raise _error("dtensor_axes_invalid", "this process is not on the mesh")
    shape = tuple(mesh.shape)
    rank = dict.fromkeys(AXES, 0)
    for index, name in enumerate(names):
        axis = mapping[name]
        rank[axis] = rank[axis] * shape[index] + int(coordinate[index])
    return ParallelRank(dp=rank["dp"], tp=rank["tp"], pp=rank["pp"], ep=rank["ep"])


def _chunk(held: list[int], pieces: int, index: int) -> list[int]:
    """Piece ``index`` of ``pieces`` of ``held`` as ``torch.chunk`` cuts it (ceil-sized
    pieces; the last ones short or empty)."""
    size = -(-len(held) // pieces)
    start = min(index * size, len(held))
    return held[start : min(start + size, len(held))]


def _strided(held: list[int], split_factor: int, pieces: int, index: int) -> list[int]:
    """What ``_StridedShard(split_factor)`` keeps of ``held``: piece ``index`` of each of
    the ``split_factor`` chunks, in order."""
    kept: list[int] = []
    for split in range(split_factor):
        kept += _chunk(_chunk(held, split_factor, split), pieces, index)
    return kept


def _runs(held: Sequence[int]) -> list[tuple[int, int, int]]:
    """(local start, global start, length) of each run of consecutive global indices."""
    runs: list[tuple[int, int, int]] = []
    for position, index in enumerate(held):
        if runs and runs[-1][1] + runs[-1][2] == index:
            local, first, length = runs[-1]
            runs[-1] = (local, first, length + 1)
        else:
            runs.append((position, index, 1))
    return runs


def _pointer(name: str) -> str:
    return "/tensors/" + name.replace("~", "~0").replace("/", "~1")


def _held_indices(name: str, tensor: Any) -> list[list[int]]:
    """The global indices this process holds of each dim of the DTensor ``tensor``."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor._dtensor_spec import DTensorSpec
    from torch.distributed.tensor.placement_types import _StridedShard

    spec = tensor._spec
    mesh = tensor.device_mesh
    coordinate = mesh.get_coordinate()
    held = [list(range(n)) for n in tensor.shape]
    if coordinate is None:
        return [[] for _ in held]
    if not spec.use_strided_shard_as_shard_order and spec.shard_order != DTensorSpec.compute_default_shard_order(
        spec.placements
    ):
        raise _error("dtensor_placement_unsupported",
                     f"tensor {name} has the shard order {spec.shard_order}, not the default", _pointer(name))
    for mesh_dim, placement in enumerate(spec.placements):
        pieces, index = int(mesh.size(mesh_dim)), int(coordinate[mesh_dim])
        if isinstance(placement, _StridedShard):
            held[placement.dim] = _strided(held[placement.dim], int(placement.split_factor), pieces, index)
        elif isinstance(placement, Shard):
            held[placement.dim] = _chunk(held[placement.dim], pieces, index)
        elif not isinstance(placement, Replicate):
            raise _error("dtensor_placement_unsupported",
                         f"tensor {name} has the placement {placement!r} on mesh dim {mesh_dim}: only Shard, "
                         "_StridedShard and Replicate describe what a rank holds", _pointer(name))
    return held


@dataclass(frozen=True)
class LocalShards:
    """What one trainer process holds: its local views keyed as
    :func:`weight_manifest.live.runtime_inventory` takes them (``tensor_id``, or
    ``(tensor_id, global_offset)`` for each box of a tensor held as several), the
    descriptors of every tensor of the state_dict, the offsets of the tensors held as one
    box, and the process's rank."""

    tensors: dict[live.TensorKey, Any]
    descriptors: dict[str, TensorDescriptor]
    offsets: dict[str, list[int]]
    rank: ParallelRank
    model_id: str
    revision: str

    def where(self) -> dict[str, Any]:
        """The keywords of :func:`weight_manifest.live.runtime_inventory` (and of
        :class:`weight_manifest_runtime.group.Member`) that say where the tensors sit."""
        return {"rank": self.rank, "descriptors": self.descriptors, "offsets": self.offsets,
                "model_id": self.model_id, "revision": self.revision}

    def inventory(self, *, worker_id: str, endpoint: str, instance_id: str, generation: int,
                  lease_id: Optional[str] = None) -> dict[str, Any]:
        """The runtime inventory of these shards for the worker named here."""
        return live.runtime_inventory(self.tensors, worker_id=worker_id, endpoint=endpoint,
                                      instance_id=instance_id, generation=generation, lease_id=lease_id,
                                      **self.where())


def local_shards(
    state_dict: Mapping[str, Any],
    mesh: Any,
    *,
    model_id: str,
    revision: str,
    axes: Optional[Mapping[str, str]] = None,
    layout_fingerprint: str = hf.LAYOUT_FINGERPRINT,
    ids: Optional[hf.Ids] = hf.ids,
) -> LocalShards:
    """The local shards of ``state_dict`` (DTensors on any mesh this process is on, and
    plain tensors, held whole) on this process, which sits on ``mesh`` (the trainer's
    whole mesh; each mesh dim mapped to an axis by ``axes``, default :func:`default_axes`).

    Descriptors: tensor_id the state_dict key, global_shape the DTensor's, dtype and
    itemsize torch's, shard_dims the dims some placement shards (partition_dim the one
    when there is one), layout_fingerprint as given, layer_id and expert_id from ``ids``
    (default :func:`weight_manifest.hf.ids`; None leaves them unset). A tensor this
    process holds nothing of (an empty chunk) has a descriptor and no view."""
    import torch
    from torch.distributed.tensor import DTensor, Replicate

    rank = mesh_rank(mesh, axes)
    tensors: dict[live.TensorKey, Any] = {}
    descriptors: dict[str, TensorDescriptor] = {}
    offsets: dict[str, list[int]] = {}
    for name, value in state_dict.items():
        if isinstance(value, DTensor):
            held = _held_indices(name, value)
            local = value.to_local().detach()
            sharded = sorted({p.dim for p in value.placements if not isinstance(p, Replicate) and hasattr(p, "dim")})
        elif isinstance(value, torch.Tensor):
            held = [list(range(n)) for n in value.shape]
            local = value.detach()
            sharded = []
        else:
            raise _error("dtensor_placement_unsupported",
                         f"the value of {name} is a {type(value).__name__}, not a tensor", _pointer(name))
        if tuple(local.shape) != tuple(len(h) for h in held):
            raise _error("dtensor_placement_unsupported",
                         f"tensor {name}: torch holds a local shape {list(local.shape)}, its placements give "
                         f"{[len(h) for h in held]}", _pointer(name))
        layer, expert = ids(name) if ids is not None else (None, None)
        descriptors[name] = TensorDescriptor(
            tensor_id=name, global_shape=tuple(value.shape), dtype=str(value.dtype).removeprefix("torch."),
            itemsize=value.element_size(), partition_dim=sharded[0] if len(sharded) == 1 else None,
            shard_dims=tuple(sharded), layer_id=layer, expert_id=expert, layout_fingerprint=layout_fingerprint)
        if any(not h for h in held):
            continue
        boxes: list[tuple[list[int], Any]] = [([], local)]
        for dim, indices in enumerate(held):
            boxes = [(offset + [first], view.narrow(dim, start, length))
                     for offset, view in boxes for start, first, length in _runs(indices)]
        if len(boxes) == 1:
            tensors[name] = boxes[0][1]
            offsets[name] = boxes[0][0]
        else:
            for offset, view in boxes:
                tensors[(name, tuple(offset))] = view
    return LocalShards(tensors, descriptors, offsets, rank, model_id, revision)
