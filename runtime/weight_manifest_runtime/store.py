"""Save weights to Mooncake Store and restore them into any layout, failing closed.

**Save** (:func:`save`): each source worker puts the fragments it was chosen for straight
from its registered tensors (``batch_put_from_multi_buffers``: several fragments packed in
one object, no copy), under keys derived from the placement::

    {group_id}/payload/{worker_id}/{n}    the packed objects
    {group_id}/content                    the tensors' content digests (contract §19.5)
    {group_id}/manifest                   upstream's WeightManifest, written last

with ``group_id`` = ``{namespace}/{model_id}/{revision}/{weight_generation}`` by default.
Each distinct box of a tensor is stored once (replicas are not stored twice; the holder is
chosen to balance the bytes each worker puts). The manifest is put only after every object
and the digests are in, so a reader that finds a manifest finds its whole payload; a save
that died before its manifest leaves no manifest, and the next save of the group first
removes what it left.

**Restore** (:func:`restore`): the manifest is read and checked against the digest the
save reported (``manifest_digest``, upstream's ``sha256`` of its text), every object's size
against the fragments it must hold, then the planner plans from the stored layout (every
stored fragment on one rank, :meth:`StorageManifest.placement`) to the targets' placement,
and each target worker reads its regions straight into its registered tensors
(:class:`StoreBackend`, with :func:`weight_manifest_runtime.transfer.execute`: runs that are
contiguous in an object but split in the target are read whole into a staging buffer and
scattered). Then every target's content digests must equal the saved ones. Any failure
raises :class:`ManifestError`; nothing is reported restored.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Union

import numpy as np

from weight_manifest import (
    PlacementManifest, RuntimeBindingFragment, RuntimeBindingManifest, bind_plan, content, plan,
)
from weight_manifest.errors import manifest_error as _error
from weight_manifest.mooncake import StorageManifest
from . import transfer
from .group import Coordinator, Handler

__all__ = [
    "DEFAULT_MAX_OBJECT_BYTES",
    "STORE_BASE",
    "RestoreReport",
    "SaveOptions",
    "SaveReport",
    "StoreBackend",
    "handlers",
    "restore",
    "save",
    "save_checkpoint",
]

#: Packed objects are cut at this size (a fragment larger than it is one object alone).
DEFAULT_MAX_OBJECT_BYTES = 64 << 20
#: Stored bytes are bound at ``STORE_BASE + object_offset``: a binding's addresses must be
#: non-zero, and :class:`StoreBackend` subtracts it again.
STORE_BASE = 1 << 12
_PUT_BATCH = 16


def _status(rc: Any) -> int:
    return int(rc[0]) if isinstance(rc, (list, tuple)) else int(rc)


class StoreBackend:
    """A :class:`weight_manifest_runtime.transfer.Backend` over a ``MooncakeDistributedStore``
    client: a session name is an object key, a remote address is ``STORE_BASE`` plus an
    offset in that object, and only reads are supported (a save puts whole objects with
    :meth:`put`). Each batch is one ranged get (``batch_get_into_multi_buffer_ranges``)
    run on a thread (the client releases the GIL), so batches overlap. Any span of an
    object can be read (``reads_gaps``), so strided runs of one object are read whole."""

    reads_gaps = True

    def __init__(self, client: Any, *, threads: int = transfer.DEFAULT_MAX_IN_FLIGHT) -> None:
        self.client = client
        self._pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="store")
        self._batches: dict[int, tuple[Future[int], int]] = {}
        self._next = 1

    def register(self, address: int, length: int) -> None:
        rc = self.client.register_buffer(address, length)
        if rc != 0:
            raise _error("store_failed", f"the Store client did not register {length} bytes at {address:#x} ({rc})")

    def unregister(self, address: int) -> None:
        self.client.unregister_buffer(address)

    def _get(self, key: str, local: list[int], offsets: list[int], lengths: list[int]) -> int:
        started = _status(self.client.batch_get_session_start([key]))
        if started != 0:
            return started
        try:
            return _status(self.client.batch_get_into_multi_buffer_ranges([key], [local], [lengths], [offsets]))
        finally:
            self.client.batch_get_session_end([key])

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        if write:
            raise _error("transfer_arguments_invalid", "the Store backend only reads: restore with mode='pull'")
        offsets = [r - STORE_BASE for r in remote]
        if any(o < 0 for o in offsets):
            raise _error("transfer_failed", f"a segment lies before the start of object {session}")
        handle, self._next = self._next, self._next + 1
        self._batches[handle] = (self._pool.submit(self._get, session, local, offsets, lengths), sum(lengths))
        return handle

    def wait(self, handle: int) -> bool:
        future, expected = self._batches.pop(handle)
        try:
            return future.result() == expected
        except Exception:  # noqa: BLE001 - a failed batch is reported by the executor
            return False

    def put(self, objects: Sequence[tuple[str, Sequence[tuple[int, int]]]]) -> int:
        """Put each object (key, its parts as (address, length) of registered memory)
        and return the bytes put; ``store_failed`` naming the first object not put."""
        total = 0
        for start in range(0, len(objects), _PUT_BATCH):
            chunk = objects[start:start + _PUT_BATCH]
            keys = [k for k, _ in chunk]
            rcs = self.client.batch_put_from_multi_buffers(
                keys, [[a for a, _ in parts] for _, parts in chunk], [[n for _, n in parts] for _, parts in chunk])
            for key, rc in zip(keys, rcs):
                if rc != 0:
                    raise _error("store_failed", f"the Store did not take object {key} ({rc})")
            total += sum(n for _, parts in chunk for _, n in parts)
        return total

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def handlers(backend: StoreBackend) -> dict[str, Handler]:
    """The requests a worker holding ``backend`` answers for :func:`save`: ``store_put``."""

    def store_put(request: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        objects = [(str(key), [(int(a), int(n)) for a, n in parts]) for key, parts in request["objects"]]
        return {"bytes": backend.put(objects), "seconds": time.perf_counter() - started}

    return {"store_put": store_put}


# ---- save ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SaveOptions:
    """Where and how a save writes: the key namespace and weight generation (the group is
    ``{namespace}/{model_id}/{revision}/{weight_generation}`` unless ``group_id`` names
    one), the packed object size, the manifest's ``created_at`` (default: now, UTC) and the
    content digests' block size."""

    namespace: str
    weight_generation: int
    group_id: Optional[str] = None
    max_object_bytes: int = DEFAULT_MAX_OBJECT_BYTES
    created_at: Optional[str] = None
    block_elements: int = content.DEFAULT_BLOCK_ELEMENTS


@dataclass(frozen=True)
class SaveReport:
    """What :func:`save` wrote: the manifest's identity (upstream's
    ``StoredManifestIdentity``: its key and ``content_sha256``, the manifest digest a
    restore checks) and the figures."""

    namespace: str
    resource_id: str
    revision: str
    weight_generation: int
    group_id: str
    manifest_key: str
    manifest_digest: str
    bytes: int
    objects: int
    fragments: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _group(namespace: str, placement: PlacementManifest, generation: int) -> str:
    return f"{namespace}/{placement.model_id}/{placement.revision}/{generation}"


def _stored_layout(placement: PlacementManifest, binding: RuntimeBindingManifest, group_id: str,
                   max_object_bytes: int) -> tuple[list[tuple[Any, ...]], dict[str, list[tuple[str, list[tuple[int, int]]]]]]:
    """One holder per distinct box (the worker with the fewest bytes chosen so far), the
    boxes packed per worker into objects of at most ``max_object_bytes``: the stored
    fragments for the manifest and each worker's objects."""
    where = {f.placement_fragment_id: f for f in binding.fragments}
    boxes: dict[tuple[str, tuple[int, ...], tuple[int, ...]], list[Any]] = {}
    for fragment in placement.fragments:
        key = (fragment.tensor_id, tuple(fragment.global_offset), tuple(fragment.local_shape))
        boxes.setdefault(key, []).append(fragment)
    load: dict[str, int] = {}
    chosen: dict[str, list[Any]] = {}
    for key in sorted(boxes, key=lambda k: -boxes[k][0].nbytes):
        candidates = sorted(boxes[key], key=lambda f: (load.get(where[f.placement_fragment_id].worker_id, 0),
                                                        where[f.placement_fragment_id].worker_id))
        pick = candidates[0]
        worker = where[pick.placement_fragment_id].worker_id
        load[worker] = load.get(worker, 0) + pick.nbytes
        chosen.setdefault(worker, []).append(pick)
    stored: list[tuple[Any, ...]] = []
    objects: dict[str, list[tuple[str, list[tuple[int, int]]]]] = {}
    for worker in sorted(chosen):
        mine = objects[worker] = []
        for fragment in sorted(chosen[worker], key=lambda f: f.placement_fragment_id):
            if not mine or (mine[-1][1] and _size(mine[-1][1]) + fragment.nbytes > max_object_bytes):
                mine.append((f"{group_id}/payload/{worker}/{len(mine)}", []))
            object_key, parts = mine[-1]
            stored.append((fragment.placement_fragment_id, fragment.tensor_id, list(fragment.global_offset),
                           list(fragment.local_shape), object_key, _size(parts), fragment.nbytes,
                           list(fragment.aliases)))
            parts.append((where[fragment.placement_fragment_id].address, fragment.nbytes))
    return stored, objects


def _size(parts: list[tuple[int, int]]) -> int:
    return sum(n for _, n in parts)


def _as_stored(placement: PlacementManifest) -> PlacementManifest:
    """``placement`` with each tensor's shard dims the dims its fragments cut: what the
    stored boxes are cut along. A dim declared sharded that no fragment cuts (a TP1
    layout of a column-parallel weight) is not a split Mooncake could name an axis for."""
    shapes = {t.tensor_id: t.global_shape for t in placement.tensors}
    cut: dict[str, set[int]] = {}
    for f in placement.fragments:
        cut.setdefault(f.tensor_id, set()).update(d for d, (e, g) in enumerate(zip(f.local_shape, shapes[f.tensor_id])) if e != g)
    tensors = []
    changed = False
    for t in placement.tensors:
        dims = tuple(sorted(cut.get(t.tensor_id, set())))
        declared = tuple(t.shard_dims) if t.shard_dims is not None else (
            () if t.partition_dim is None else (t.partition_dim,))
        if dims == declared:
            tensors.append(t)
            continue
        changed = True
        tensors.append(dataclasses.replace(t, partition_dim=dims[0] if len(dims) == 1 else None, shard_dims=dims))
    if not changed:
        return placement
    return PlacementManifest(model_id=placement.model_id, revision=placement.revision, tensors=tuple(tensors),
                             fragments=placement.fragments)


def _put_text(client: Any, key: str, text: str) -> None:
    rc = client.put(key, text.encode("utf-8"))
    if rc != 0:
        raise _error("store_failed", f"the Store did not take {key} ({rc})")


def _save(
    placement: PlacementManifest,
    binding: RuntimeBindingManifest,
    client: Any,
    put: Callable[[dict[str, list[tuple[str, list[tuple[int, int]]]]]], Any],
    digests: Callable[[], Mapping[str, str]],
    options: SaveOptions,
) -> SaveReport:
    """The save of ``placement`` whose bytes ``binding`` locates: ``put`` puts each
    worker's objects, ``digests`` gives each tensor's content digest."""
    started = time.perf_counter()
    o = options
    group_id = o.group_id or _group(o.namespace, placement, o.weight_generation)
    manifest_key = f"{group_id}/manifest"
    if _status(client.is_exist(manifest_key)) == 1:
        raise _error("store_manifest_exists",
                     f"{manifest_key} already holds a saved manifest; remove it or save under another group")
    stored, objects = _stored_layout(placement, binding, group_id, o.max_object_bytes)
    created_at = o.created_at or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = StorageManifest.build(_as_stored(placement), stored, namespace=o.namespace, group_id=group_id,
                                     weight_generation=o.weight_generation, created_at=created_at)
    # What an earlier save of this group left before it died (it wrote no manifest). The
    # Store's put of an existing key reports success and keeps the old bytes, so every key
    # this save writes must be gone before the first put.
    client.remove_by_regex("^" + re.escape(f"{group_id}/"), True)
    keys = [k for parts in objects.values() for k, _ in parts] + [f"{group_id}/content"]
    left = [k for k, there in zip(keys, client.batch_is_exist(keys)) if there != 0]
    if left:
        raise _error("store_failed", f"{left[0]} (and {len(left) - 1} more keys of the group) could not be "
                     "removed before the save; nothing was written")
    put(objects)
    known = digests()
    tensors = [(t.tensor_id, t.dtype, list(t.global_shape), t.itemsize, known[t.tensor_id])
               for t in placement.tensors]
    record = content.write_manifest(placement.model_id, placement.revision, o.weight_generation,
                                            o.block_elements, tensors)
    _put_text(client, f"{group_id}/content", record)
    _put_text(client, manifest_key, manifest.to_json())
    return SaveReport(namespace=o.namespace, resource_id=manifest.resource_id, revision=manifest.revision,
                      weight_generation=o.weight_generation, group_id=group_id, manifest_key=manifest_key,
                      manifest_digest=manifest.digest, bytes=sum(f[6] for f in stored),
                      objects=sum(len(o) for o in objects.values()), fragments=len(stored),
                      seconds=time.perf_counter() - started)


def save(coordinator: Coordinator, client: Any, options: SaveOptions, *, side: str = "source") -> SaveReport:
    """Save the weights the coordinator's source workers hold (or ``side``'s: a target's
    active revision, kept for a rollback), each answering ``store_put`` (see
    :func:`handlers`), through ``client`` (this process's Store client): objects, then
    content digests, then the manifest. ``store_manifest_exists`` if the
    group already has a manifest (remove it first: a saved generation is not overwritten);
    ``store_failed`` if the Store refuses an object, ``transfer_worker_lost`` if a worker
    dies (no manifest is then written)."""
    layout = coordinator.side(side)

    def put(objects: dict[str, list[tuple[str, list[tuple[int, int]]]]]) -> None:
        workers = sorted(objects)
        coordinator.request_all(workers, {"op": "store_put"},
                                {w: {"objects": [[k, p] for k, p in objects[w]]} for w in workers})

    return _save(layout.placement, layout.binding, client, put,
                 lambda: coordinator.digests(side, options.block_elements), options)


def save_checkpoint(
    client: Any,
    path: Union[str, os.PathLike[str]],
    rules: Union[str, bytes, os.PathLike[str]],
    options: SaveOptions,
    *,
    model_id: str,
    revision: str,
) -> SaveReport:
    """Save a safetensors checkpoint (one ``model.safetensors``) from this process: the
    file is mapped (copy-on-write: it is never written), its tensors placed by ``rules`` as
    one rank holds them (:func:`weight_manifest.adapt.adapt_safetensors`), and put straight
    from the mapping, as :func:`save` puts live tensors."""
    from weight_manifest.adapt import adapt_safetensors

    placement, _ = adapt_safetensors(path, rules, model_id=model_id, revision=revision)
    mapped = np.memmap(path, dtype=np.uint8, mode="c")
    header = int.from_bytes(bytes(mapped[:8]), "little")
    meta = json.loads(bytes(mapped[8:8 + header]))
    itemsize = {t.tensor_id: t.itemsize for t in placement.tensors}
    base = int(mapped.ctypes.data)
    tensors: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    fragments: list[RuntimeBindingFragment] = []
    for f in placement.fragments:
        start, end = meta[f.tensor_id]["data_offsets"]
        # Viewed as unsigned words of the tensor's itemsize: digests need only the bytes.
        words = mapped[8 + header + start:8 + header + end].view(f"u{itemsize[f.tensor_id]}")
        tensors[f.tensor_id] = words.reshape(f.local_shape)
        records.append({"tensor_id": f.tensor_id, "global_shape": list(meta[f.tensor_id]["shape"]),
                        "itemsize": itemsize[f.tensor_id], "global_offset": list(f.global_offset),
                        "local_shape": list(f.local_shape)})
        fragments.append(RuntimeBindingFragment(
            placement_fragment_id=f.placement_fragment_id, fragment_id=f.placement_fragment_id,
            address=base + 8 + header + start, nbytes=f.nbytes, worker_id="checkpoint", endpoint=str(path),
            device="cpu"))
    binding = RuntimeBindingManifest(model_id=model_id, placement_id=str(placement.placement_id),
                                     placement_digest=placement.digest, instance_id=str(path),
                                     generation=options.weight_generation, lease_id="checkpoint", revision=revision,
                                     fragments=tuple(fragments))
    inventory = {"tensors": records}
    backend = StoreBackend(client)
    backend.register(base, int(mapped.nbytes))
    try:
        def put(objects: dict[str, list[tuple[str, list[tuple[int, int]]]]]) -> None:
            for parts in objects.values():
                backend.put(parts)

        def digests() -> Mapping[str, str]:
            b = options.block_elements
            return content.digests(content.partials(tensors, inventory, b), b)

        return _save(placement, binding, client, put, digests, options)
    finally:
        backend.unregister(base)
        backend.close()
        del mapped


# ---- restore ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoreReport:
    """What :func:`restore` moved and checked."""

    manifest_key: str
    manifest_digest: str
    bytes: int
    regions: int
    operations: int
    #: The whole restore without the content check; of it, the transfer itself.
    seconds: float
    transfer_seconds: float
    verify_seconds: float
    #: Each (object, target worker) pair's report (:class:`weight_manifest_runtime.transfer.PairReport`).
    pairs: list[dict[str, Any]] = field(default_factory=list)
    #: Each target worker's execution: ``seconds`` and, of them, ``prepare_seconds``.
    workers: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The tensors whose content digest on the targets equals the saved one (all of them).
    verified_tensors: int = 0

    @property
    def gib_per_s(self) -> float:
        """The restore's rate: bytes over ``seconds`` (without the content check)."""
        return self.bytes / float(1 << 30) / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "gib_per_s": self.gib_per_s}


def _get_text(client: Any, key: str) -> bytes:
    if _status(client.is_exist(key)) != 1:
        raise _error("store_manifest_missing", f"the Store holds no {key}: no complete save is there")
    data = client.get(key)
    if not data:
        raise _error("store_manifest_missing", f"the Store returned nothing for {key}")
    return bytes(data)


def read_manifest(client: Any, manifest_key: str, manifest_digest: Optional[str]) -> StorageManifest:
    """The manifest at ``manifest_key``, its text's sha256 checked against
    ``manifest_digest`` (``store_manifest_digest_mismatch``) unless that is None, read and
    validated as upstream's ``WeightManifest`` (its own codes)."""
    text = _get_text(client, manifest_key)
    digest = hashlib.sha256(text).hexdigest()
    if manifest_digest is not None and digest != manifest_digest:
        raise _error("store_manifest_digest_mismatch",
                     f"{manifest_key} has digest {digest}, the save reported {manifest_digest}: it is not that save")
    return StorageManifest.from_json(text)


def _check_objects(client: Any, manifest: StorageManifest) -> None:
    """Every object the manifest names exists and holds the bytes its fragments need."""
    need: dict[str, int] = {}
    for f in manifest.fragments:
        need[f.object_key] = max(need.get(f.object_key, 0), f.object_offset + f.nbytes)
    keys = sorted(need)
    present = client.batch_is_exist(keys)
    for key, there in zip(keys, present):
        if there != 1:
            raise _error("store_object_missing", f"the Store holds no {key}, which {manifest.manifest_key} names")
        size = int(client.get_size(key))
        if size < need[key]:
            raise _error("store_object_short",
                         f"{key} holds {size} bytes, {manifest.manifest_key} needs {need[key]}")


def stored_binding(manifest: StorageManifest, placement: PlacementManifest) -> RuntimeBindingManifest:
    """The stored layout as a runtime binding: each stored fragment on "worker" object
    key, at ``STORE_BASE + object_offset``, fenced by the manifest (instance: its group,
    lease: its digest, generation: its weight_generation)."""
    fragments = tuple(
        RuntimeBindingFragment(placement_fragment_id=f.fragment_id, fragment_id=f"{f.object_key}@{f.object_offset}",
                               address=STORE_BASE + f.object_offset, nbytes=f.nbytes, worker_id=f.object_key,
                               endpoint="mooncake-store", device="store")
        for f in manifest.fragments)
    return RuntimeBindingManifest(model_id=placement.model_id, placement_id=str(placement.placement_id),
                                  placement_digest=placement.digest, instance_id=manifest.group_id,
                                  generation=manifest.weight_generation, lease_id=manifest.digest,
                                  revision=placement.revision, fragments=fragments)


def restore(
    coordinator: Coordinator,
    client: Any,
    manifest_key: str,
    *,
    manifest_digest: Optional[str],
    options: transfer.ExecuteOptions = transfer.ExecuteOptions(),
    block_elements: int = content.DEFAULT_BLOCK_ELEMENTS,
    after_transfer: Optional[Callable[[], Any]] = None,
    readers: Optional[int] = None,
    backend: Optional[str] = None,
    verify_content: bool = True,
) -> RestoreReport:
    """Restore the save at ``manifest_key`` into the coordinator's target workers (each
    holding a :class:`StoreBackend`), then check every tensor's content digest on the
    targets against the saved ones (``store_verify_failed``). ``manifest_digest`` is the
    save's (:attr:`SaveReport.manifest_digest`); None skips that check. ``options`` go to
    :func:`weight_manifest_runtime.transfer.execute`; ``after_transfer`` runs between the transfer
    and the content check (a test's fault). ``readers`` bounds how many target workers
    read at once (default: all): on a host with few cores, many concurrent readers of one
    store holder contend for the same CPUs. ``backend`` names the targets' Store backend
    when it is not their main one (:class:`weight_manifest_runtime.group.Member`'s ``backends``).
    ``verify_content=False`` leaves the content check to the caller (a restore into some
    of a layout's targets, whose boxes do not cover every tensor)."""
    started = time.perf_counter()
    manifest = read_manifest(client, manifest_key, manifest_digest)
    record = content.read_manifest(_get_text(client, f"{manifest.group_id}/content"))
    if (record["model_id"], record["revision"], record["generation"]) != (
            manifest.resource_id, manifest.revision, manifest.weight_generation):
        raise _error("store_verify_failed",
                     f"{manifest.group_id}/content describes {record['model_id']} {record['revision']} generation "
                     f"{record['generation']}, not the manifest's")
    _check_objects(client, manifest)
    source = manifest.placement
    target = coordinator.side("target")
    reshard = plan(source, target.placement)
    bound = bind_plan(reshard, stored_binding(manifest, source), target.binding,
                      source_generation=manifest.weight_generation, target_generation=target.binding.generation)
    coordinator.check_live(bound, sides=("target",))
    sessions = {f.object_key: f.object_key for f in manifest.fragments}
    transfer_started = time.perf_counter()
    reports = coordinator.execute(bound, mode="pull", options=options, sessions=sessions, at_once=readers,
                                  backend=backend, windows=False)
    targets = sorted(reports)
    seconds = time.perf_counter() - started
    transfer_seconds = time.perf_counter() - transfer_started
    if after_transfer is not None:
        after_transfer()
    verify_started = time.perf_counter()
    restored = coordinator.digests("target", block_elements) if verify_content else dict(record["digests"])
    content.check(record["digests"], restored, code="store_verify_failed", when="after the restore",
                  against="the saved", outcome="nothing is restored")
    pairs = [p for w in targets for p in reports[w]["pairs"]]
    workers = {w: {k: reports[w][k] for k in ("seconds", "prepare_seconds")} for w in targets}
    return RestoreReport(manifest_key=manifest_key, manifest_digest=manifest.digest,
                         bytes=sum(p["bytes"] for p in pairs), regions=len(reshard.regions),
                         operations=sum(p["segments"] for p in pairs), seconds=seconds,
                         transfer_seconds=transfer_seconds, pairs=pairs, workers=workers,
                         verify_seconds=time.perf_counter() - verify_started,
                         verified_tensors=len(record["digests"]) if verify_content else 0)
