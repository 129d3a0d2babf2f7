"""Live tensors to a runtime inventory (contract §10.3): what one worker really holds.

A worker names the tensors it holds (``Mapping[key, tensor]``: numpy, torch, cupy, jax or
anything with DLPack, ``__array_interface__`` or a buffer) and says where each sits in its
global tensor, either by a placement and its own rank (the tensor keyed ``n`` is the
placement's fragment of tensor_id ``n`` on that rank) or by explicit descriptors and global
offsets. A tensor a worker holds as several boxes (SGLang's stacked experts: the gate rows
of each local expert are one view of the fused ``w13``, and the experts' views are not one
contiguous box) gives each box the key ``(tensor_id, global_offset)``. :func:`runtime_inventory` reads every tensor natively, without copying it, and
writes one record per tensor with the real facts: address (the view's first byte),
byte_offset and storage_offset (its distance from the start of its allocation), stride,
dtype, itemsize, device and is_contiguous.

No contract rule is applied here. A non-contiguous tensor is reported as it is and the
core's reader rejects it (``not_contiguous``); a tensor whose dtype or shape disagrees with
its placement is reported as it is and its projection fails (``placement_id_mismatch``);
partial overlaps are left to the core (``address_overlap``). Only the arguments are checked
here, with the codes ``live_arguments_invalid``, ``live_tensor_unknown``,
``live_fragment_ambiguous``, ``live_tensor_unreadable`` and ``live_inventory_mismatch``;
a rejection that concerns one tensor has the pointer ``/tensors/NAME`` (NAME escaped as a
JSON pointer token), an argument rejection has none.

Aliases: a view inside a parameter given in ``packed`` (for example SGLang's fused ``w13``,
whose gate and up halves are views of one buffer) carries that parameter's name; tensors
given twice with exactly the same bytes (tied weights) carry both names, sorted, which
makes them an exact declared alias pair (§8.5) when their boxes and descriptors agree.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

from . import _native
from .errors import manifest_error as _error
from ._manifests import PlacementManifest, RuntimeManifest
from ._types import ParallelRank, PlacementFragment, TensorDescriptor

__all__ = ["combine", "read_inventory", "runtime_inventory", "runtime_manifest", "tensor_of"]

TensorKey = Union[str, tuple[str, Sequence[int]]]
"""A live tensor's key: its tensor_id, or ``(tensor_id, global_offset)`` for one of the
boxes of a tensor the worker holds as several."""

# The members that one instance's inventories share; generation is left to the core,
# whose records each carry their own lease_generation (§10.3 step 4.4).
_SHARED = ("model_id", "revision", "instance_id", "lease_id", "placement_id")


def _pointer(name: str) -> str:
    """The pointer of tensor ``name`` (RFC 6901 escaping)."""
    return "/tensors/" + name.replace("~", "~0").replace("/", "~1")


def _key(key: Any) -> tuple[str, Optional[list[int]]]:
    """A tensor key's tensor_id and, for a ``(tensor_id, global_offset)`` key, the offset."""
    if isinstance(key, str):
        return key, None
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], Sequence):
        try:
            return key[0], [operator.index(o) for o in key[1]]
        except TypeError:
            pass
    raise _error(
        "live_arguments_invalid",
        f"a tensor is keyed by its tensor_id or by (tensor_id, global_offset), not by {key!r}",
    )


def _key_text(name: str, offset: Optional[Sequence[int]]) -> str:
    """How messages and pointers name a key: ``tensor_id`` or ``tensor_id@o0,o1,...``."""
    return name if offset is None else f"{name}@{','.join(str(o) for o in offset)}"


def tensor_of(tensors: Mapping[Any, Any], record: Mapping[str, Any]) -> Any:
    """The live tensor an inventory record of :func:`runtime_inventory` describes:
    ``tensors[tensor_id]``, or ``tensors[(tensor_id, global_offset)]`` for a box of a
    tensor held as several."""
    name = record["tensor_id"]
    if name in tensors:
        return tensors[name]
    return tensors[(name, tuple(record["global_offset"]))]


def _rank_text(rank: ParallelRank) -> str:
    return f"dp{rank.dp}.pp{rank.pp}.tp{rank.tp}.ep{rank.ep}"


class _Where:
    """Where each named tensor sits: its descriptor, global offset and fragment id."""

    def __init__(
        self,
        rank: Optional[ParallelRank],
        placement: Optional[PlacementManifest],
        descriptors: Optional[Mapping[str, TensorDescriptor]],
        offsets: Optional[Mapping[str, Sequence[int]]],
    ) -> None:
        if rank is None:
            raise _error("live_arguments_invalid", "rank= is required")
        if placement is not None and (descriptors is not None or offsets is not None):
            raise _error(
                "live_arguments_invalid",
                "give placement= or descriptors= with offsets=, not both",
            )
        if placement is None and (descriptors is None or offsets is None):
            raise _error(
                "live_arguments_invalid",
                "give placement=, or descriptors= together with offsets=",
            )
        self.rank = rank
        self.placement = placement
        self.descriptors: Mapping[str, TensorDescriptor] = descriptors or {}
        self.offsets: Mapping[str, Sequence[int]] = offsets or {}
        self.fragments: dict[str, list[PlacementFragment]] = {}
        if placement is not None:
            self.descriptors = {t.tensor_id: t for t in placement.tensors}
            for fragment in placement.fragments:
                if fragment.rank == rank:
                    self.fragments.setdefault(fragment.tensor_id, []).append(fragment)

    def locate(self, name: str, offset: Optional[list[int]]) -> tuple[TensorDescriptor, list[int], str]:
        """The descriptor, global offset and fragment id of the tensor ``name`` (at
        ``offset`` for one box of a tensor held as several)."""
        pointer = _pointer(_key_text(name, offset))
        if self.placement is None:
            descriptor = self.descriptors.get(name)
            if descriptor is None:
                raise _error("live_tensor_unknown", f"tensor {name} has no descriptor", pointer)
            fragment_id = _native.adapt_fragment_id(name, self.rank)
            if offset is not None:
                # Several boxes on one rank: the adapter's id and where the box starts.
                return descriptor, offset, f"{fragment_id}@{','.join(str(o) for o in offset)}"
            given = self.offsets.get(name)
            if given is None:
                raise _error("live_tensor_unknown", f"tensor {name} has no global offset", pointer)
            return descriptor, list(given), fragment_id
        found = self.fragments.get(name, [])
        if offset is not None:
            found = [f for f in found if list(f.global_offset) == offset]
        if not found:
            at = "" if offset is None else f" at global offset {offset}"
            raise _error(
                "live_tensor_unknown",
                f"tensor {name} has no fragment{at} on rank {_rank_text(self.rank)} in the placement",
                pointer,
            )
        if len(found) > 1:
            raise _error(
                "live_fragment_ambiguous",
                f"tensor {name} has {len(found)} fragments on rank {_rank_text(self.rank)} in the placement; "
                "key each box by (tensor_id, global_offset)",
                pointer,
            )
        fragment = found[0]
        descriptor = self.descriptors[name]
        return descriptor, list(fragment.global_offset), fragment.placement_fragment_id


def _span(facts: Mapping[str, Any]) -> int:
    """Bytes from a tensor's first element to the end of its last (non-negative strides)."""
    shape: tuple[int, ...] = facts["shape"]
    strides: tuple[int, ...] = facts["strides"]
    last = sum((n - 1) * s for n, s in zip(shape, strides) if n > 0 and s > 0)
    return (last + 1) * int(facts["itemsize"])


def _nbytes(facts: Mapping[str, Any]) -> int:
    count = 1
    for extent in facts["shape"]:
        count *= extent
    return count * int(facts["itemsize"])


def _allocation_start(tensor: Any, facts: Mapping[str, Any], pointer: str) -> int:
    """The address of the first byte of the allocation the tensor lives in: torch's
    untyped storage, else the root of a ``.base`` chain of readable arrays (numpy), else
    the tensor itself. The chain stops at a torch tensor's storage too: ``t.numpy()`` has
    ``t`` as its base, which may itself be a view."""
    root = tensor
    while True:
        storage = getattr(root, "untyped_storage", None)
        if callable(storage):
            return int(storage().data_ptr())
        base = getattr(root, "base", None)
        if base is None or not (hasattr(base, "__dlpack__") or hasattr(base, "__array_interface__")):
            break
        root = base
    if root is tensor:
        return int(facts["address"])
    return int(_native.tensor_facts(root, pointer)["address"])


def _packed_spans(packed: Mapping[str, Any]) -> list[tuple[str, str, int, int]]:
    """(name, device, first byte, end) of each packed parameter."""
    spans = []
    for name, tensor in packed.items():
        facts = _native.tensor_facts(tensor, "/packed/" + name.replace("~", "~0").replace("/", "~1"))
        start = int(facts["address"])
        spans.append((name, str(facts["device"]), start, start + _span(facts)))
    return spans


def runtime_inventory(
    tensors: Mapping[Any, Any],
    *,
    worker_id: str,
    endpoint: str,
    instance_id: str,
    generation: int,
    lease_id: Optional[str] = None,
    rank: Optional[ParallelRank] = None,
    placement: Optional[PlacementManifest] = None,
    descriptors: Optional[Mapping[str, TensorDescriptor]] = None,
    offsets: Optional[Mapping[str, Sequence[int]]] = None,
    packed: Optional[Mapping[str, Any]] = None,
    model_id: Optional[str] = None,
    revision: Optional[str] = None,
) -> dict[str, Any]:
    """The runtime inventory (§10.3) of the tensors one worker holds, as Python data.

    Where each tensor sits: ``placement`` (e.g. from :func:`adapt_safetensors` with this
    worker's world sizes) with ``rank``, the tensor named ``n`` being the placement's
    fragment of tensor_id ``n`` on ``rank`` (fragment id, global offset, descriptor; the
    inventory carries the placement's ``placement_id``, which a projection checks); or
    ``descriptors`` (name -> :class:`TensorDescriptor`) and ``offsets`` (name -> global
    offset) with ``rank``, fragment ids from the adapter's rule
    ``{name}@dp{d}.pp{p}.tp{t}.ep{e}``. model_id and revision default to the placement's.
    A key ``(tensor_id, global_offset)`` names one box of a tensor held as several: with a
    placement, its fragment on ``rank`` at that offset; without, the offset is the key's
    (``offsets`` need not name it) and the fragment id the adapter's followed by
    ``@o0,o1,...``.

    Each record's dtype, itemsize, local_shape, stride, is_contiguous, device and address
    are the tensor's own; byte_offset is the view's distance from the start of its
    allocation (a ``packed`` parameter that holds it, else torch's untyped storage, else
    numpy's ``.base`` root), storage_offset the same in elements. Records follow the order
    of ``tensors``.
    """
    where = _Where(rank, placement, descriptors, offsets)
    if placement is not None:
        model_id = placement.model_id if model_id is None else model_id
        revision = placement.revision if revision is None else revision
    if model_id is None or revision is None:
        raise _error("live_arguments_invalid", "model_id and revision are required without a placement")
    spans = _packed_spans(packed or {})
    records: list[dict[str, Any]] = []
    ties: dict[tuple[str, int, int], list[str]] = {}
    for key, tensor in tensors.items():
        name, offset = _key(key)
        descriptor, global_offset, fragment_id = where.locate(name, offset)
        pointer = _pointer(_key_text(name, offset))
        facts = _native.tensor_facts(tensor, pointer)
        address, nbytes, device = int(facts["address"]), _nbytes(facts), str(facts["device"])
        aliases: list[str] = []
        holder = next(
            (s for s in spans if s[1] == device and s[2] <= address and address + nbytes <= s[3]),
            None,
        )
        if holder is not None:
            start = holder[2]
            aliases.append(holder[0])
        else:
            start = _allocation_start(tensor, facts, pointer)
        byte_offset = address - start
        ties.setdefault((device, address, nbytes), []).append(name)
        records.append(
            {
                "tensor_id": name,
                "global_shape": list(descriptor.global_shape),
                "dtype": facts["dtype"],
                "itemsize": facts["itemsize"],
                "partition_dim": descriptor.partition_dim,
                "shard_dims": None if descriptor.shard_dims is None else list(descriptor.shard_dims),
                "layer_id": descriptor.layer_id,
                "expert_id": descriptor.expert_id,
                "layout_fingerprint": descriptor.layout_fingerprint,
                "is_contiguous": facts["is_contiguous"],
                "local_shape": list(facts["shape"]),
                "stride": list(facts["strides"]),
                "storage_offset": byte_offset // int(facts["itemsize"]),
                "byte_offset": byte_offset,
                "rank": {"dp": where.rank.dp, "tp": where.rank.tp, "pp": where.rank.pp, "ep": where.rank.ep},
                "lease_generation": generation,
                "fragment_id": fragment_id,
                "global_offset": global_offset,
                "address": address,
                "nbytes": nbytes,
                "worker_id": worker_id,
                "endpoint": endpoint,
                "device": device,
                "aliases": aliases,
                "placement_fragment_id": fragment_id,
            }
        )
    # Tied weights: every tensor of a group with exactly the same bytes names them all.
    for record in records:
        group = ties[(record["device"], record["address"], record["nbytes"])]
        if len(group) > 1:
            record["aliases"] = sorted(set(record["aliases"]) | set(group))
    inventory: dict[str, Any] = {
        "generation": generation,
        "model_id": model_id,
        "revision": revision,
        "instance_id": instance_id,
        "tensors": records,
    }
    if lease_id is not None:
        inventory["lease_id"] = lease_id
    if placement is not None:
        inventory["placement_id"] = placement.placement_id
    return inventory


def combine(inventories: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One instance's runtime inventory from the inventories of its workers (a
    coordinator's step): the records of each, in order, under the first one's top-level
    members. The workers must agree on model_id, revision, instance_id, lease_id and
    placement_id (``live_inventory_mismatch``, pointer ``/{i}/{member}``); a worker of
    another generation keeps its records' lease_generation, so the core's reader rejects
    it (``lease_generation_mismatch``)."""
    if not inventories:
        raise _error("live_arguments_invalid", "no inventories to combine")
    first = inventories[0]
    for index, inventory in enumerate(inventories[1:], start=1):
        for member in _SHARED:
            if inventory.get(member) != first.get(member):
                raise _error(
                    "live_inventory_mismatch",
                    f"inventory {index} has {member} {inventory.get(member)!r}, "
                    f"inventory 0 has {first.get(member)!r}",
                    f"/{index}/{member}",
                )
    combined = {key: value for key, value in first.items() if key != "tensors"}
    combined["tensors"] = [record for inventory in inventories for record in inventory["tensors"]]
    return combined


def read_inventory(
    inventory: Mapping[str, Any], *, owners: Optional[Mapping[Any, Any]] = None
) -> RuntimeManifest:
    """The inventory read by the core (:meth:`RuntimeManifest.from_runtime_inventory`),
    with ``address_semantics="view"`` exactly when some record has a non-zero
    storage_offset or byte_offset (§10.2). ``owners`` (keyed as the live tensors are, see
    :func:`tensor_of`) become the fragments' owners, keeping the memory alive while the
    manifest is."""
    view = any(r.get("storage_offset") or r.get("byte_offset") for r in inventory["tensors"])
    resolver = None
    if owners is not None:
        held = owners

        def resolver(record: Any) -> Any:
            try:
                return tensor_of(held, record)
            except KeyError:
                return None

    return RuntimeManifest.from_runtime_inventory(
        inventory, owner_resolver=resolver, address_semantics="view" if view else None
    )


def runtime_manifest(tensors: Mapping[Any, Any], **where: Any) -> RuntimeManifest:
    """:func:`runtime_inventory` of ``tensors`` (the same keywords) read by the core with
    :func:`read_inventory`; each fragment's owner is its tensor."""
    return read_inventory(runtime_inventory(tensors, **where), owners=tensors)
