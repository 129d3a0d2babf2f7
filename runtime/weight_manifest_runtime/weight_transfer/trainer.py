"""The trainer side: a vLLM ``TrainerWeightTransferEngine`` under the backend name
``weight_manifest``; its rank 0 is the group's coordinator.

``WeightTransferTrainerFactory.trainer_init(TrainerInfo(rank=r, state_dict=...), client=...)``
runs on every trainer rank with that rank's state dict (DTensors, or plain tensors held
whole). Rank 0 opens the control channel (:mod:`.channel`) and gives its address and the
group's key to the other ranks (a broadcast on the default process group); every rank joins
the group as a source holding only its own local shards (:mod:`weight_manifest_runtime.dtensor`:
nothing is gathered); then rank 0 drives the handshake through ``client`` (vLLM's own
``HTTPVLLMWeightSyncClient`` or ``RayVLLMWeightSyncClient``, any object with their four
methods, or :class:`Servers` over several): ``init_weight_transfer_engine`` makes every
worker of every server join as a target; rank 0 plans and binds the trainer's layout to
theirs, keeps the generation they serve (``TrainerInfo.revisions``: by default
:class:`~.kept.KeptOnTargets`, a copy in each worker's memory, ``kept_bytes`` in every
result; or any :class:`~weight_manifest_runtime.lifecycle.Revisions`, such as a Store's) and takes
the first snapshot of the sources (a delta's base). A revision is kept at need: before a
full update, generation g (what the workers serve, checked against the digests it was
verified with), never after a commit; so a full update's rollback restores g, and a delta
keeps an undo log of just the bytes it writes (its cost: about the delta's bytes in each
worker's memory and time), with nothing copied or re-hashed at its commit.

:meth:`WeightManifestTrainer.send_weights` (every rank; ``mode="full"`` or ``"delta"``):
rank 0 calls ``start_weight_update`` on the servers, runs one versioned update
(:class:`weight_manifest_runtime.lifecycle.VersionedUpdate`: prepare g+1, ``update_weights`` with
the update's identity, every server's workers pull the changed or all bytes from every
trainer rank's own shards on the Transfer Engine, content digests of every landed byte
against the trainer's, then commit at one barrier for every worker of every server, or
abort and roll every one back to g), tells each worker the outcome and calls
``finish_weight_update`` (the weight version on commit; on an abort each server's finish
fails with the update's code). Every rank returns the same result or raises the same
error (a broadcast from rank 0); the other ranks' members answer the coordinator meanwhile.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, cast

from vllm.distributed.weight_transfer.base import TrainerInitInfo, TrainerWeightTransferEngine

from weight_manifest import BoundPlan, ManifestError
from weight_manifest.errors import manifest_error as _error
from .. import dtensor
from ..transfer import ExecuteOptions
from ..group import Coordinator, Member
from ..lifecycle import DecisionLog, Revisions, VersionedUpdate
from . import channel, payloads
from .kept import KeptOnTargets

__all__ = ["DEFAULT_BLOCK_ELEMENTS", "Servers", "TrainerInfo", "WeightManifestTrainer"]

#: Blocks of 16,384 elements (64 KiB in fp32): a trained tensor changes whole, and finding
#: and merging the changed ranges of small blocks costs more than it saves.
DEFAULT_BLOCK_ELEMENTS = 16384


@dataclass
class TrainerInfo(TrainerInitInfo):
    """What ``trainer_init`` takes on every rank (``rank`` is this rank's, explicitly).

    ``state_dict``: this rank's tensors as the engines' checkpoint names them (DTensors of
    one mesh, or plain tensors); updated in place between sends (an optimizer step keeps
    their memory). ``mesh``: their device mesh (default: the first DTensor's), ``axes`` its
    dims as parallel axes (default: ``tp``/``pp``/``ep`` by name, else data parallel).
    ``host``/``port``: where rank 0's control channel listens (and each rank's Transfer
    Engine binds to its own address towards it). ``generation``: the version the engines
    serve now (their checkpoint). ``mode``: how the workers take updates (``auto``,
    ``direct``, ``staged``). ``transfer_mode``: who moves the bytes: ``pull`` (each worker
    reads its slice from every rank) or ``push`` (each rank writes its shards into every
    worker; a rank gathers the strided pieces of a row-parallel tensor's column slice into
    one write per worker, where a pull reads them row by row: faster into engines of
    tensor parallelism > 1 over real links); ``options``: the executor's
    (:class:`~weight_manifest_runtime.transfer.ExecuteOptions`; ``concurrent_pairs`` > 1 keeps
    every link of a worker busy). ``decisions``: the folder of the decision
    record (default: a new temporary one, removed at :meth:`WeightManifestTrainer.shutdown`:
    a record no later trainer can find). ``timeout``: seconds to wait for the ranks to join.
    ``revisions`` (rank 0's): where a rollback takes generation g from (any
    :class:`~weight_manifest_runtime.lifecycle.Revisions`, such as a Store's; default
    :class:`~.kept.KeptOnTargets`: one copy of the model in the workers' memory)."""

    backend: ClassVar[str] = "weight_manifest"

    state_dict: Optional[Mapping[str, Any]] = None
    mesh: Any = None
    axes: Optional[Mapping[str, str]] = None
    model_id: str = "model"
    revision: str = "rl"
    host: str = "127.0.0.1"
    port: int = 0
    generation: int = 0
    instance_id: str = "rollout"
    mode: str = "auto"
    transfer_mode: str = "pull"
    #: The executor's options of every update (batches, staging, pairs at once).
    options: ExecuteOptions = field(default_factory=ExecuteOptions)
    block_elements: int = DEFAULT_BLOCK_ELEMENTS
    decisions: Optional[str] = None
    group: str = field(default_factory=lambda: f"vllm-{uuid.uuid4().hex[:12]}")
    timeout: float = 300.0
    revisions: Optional[Revisions] = None


_CODED = re.compile(r"([a-z][a-z0-9]*(?:_[a-z0-9]+)+): ")


def _failed(what: str, error: BaseException) -> ManifestError:
    """A client's failure as a ManifestError: the server's own answer when there is one,
    with the code this backend's worker put at the start of its message (an HTTP server
    answers 500 with the text); else ``vllm_transfer_failed``."""
    if isinstance(error, ManifestError):
        return error
    response = getattr(error, "response", None)
    text = str(getattr(response, "text", None) or error)
    try:
        body = json.loads(text)
        found = body.get("error", body) if isinstance(body, dict) else body
        text = str(found.get("message", found) if isinstance(found, dict) else found)
    except ValueError:
        pass
    coded = _CODED.search(text)
    code = coded.group(1) if coded is not None else "vllm_transfer_failed"
    return _error(code, f"{what} failed: {text}")


class Servers:
    """Several servers driven as one (each call made on every client at once, the init one
    after the other; every failure, named by the server's URL, raised together after all
    were made, with the first's code): data-parallel replicas, each its own
    ``vllm serve``, behind vLLM's own ``HTTPVLLMWeightSyncClient`` each."""

    def __init__(self, clients: Sequence[Any]) -> None:
        self.clients = list(clients)

    def _all(self, method: str, *args: Any, at_once: bool = True) -> None:
        def call(index: int) -> Optional[tuple[str, str]]:
            client = self.clients[index]
            try:
                getattr(client, method)(*args)
                return None
            except Exception as error:
                where = getattr(client, "base_url", None) or f"server {index}"
                failure = _failed(method, error)
                return failure.code, f"{where}: {failure}"

        indices = range(len(self.clients))
        if at_once and len(self.clients) > 1:
            with ThreadPoolExecutor(max_workers=len(self.clients)) as pool:
                outcomes = list(pool.map(call, indices))
        else:
            outcomes = [call(i) for i in indices]
        errors = [o for o in outcomes if o is not None]
        if errors:
            raise _error(errors[0][0], f"{method} failed on {len(errors)} of {len(self.clients)} servers: "
                         + "; ".join(text for _, text in errors))

    def init_weight_transfer_engine(self, init_info: dict[str, Any]) -> None:
        # One after the other: the servers' workers join in this order (their data-parallel
        # ranks follow the clients' order).
        self._all("init_weight_transfer_engine", init_info, at_once=False)

    def start_weight_update(self) -> None:
        self._all("start_weight_update")

    def update_weights(self, update_info: Any) -> None:
        self._all("update_weights", update_info)

    def finish_weight_update(self, weight_version: Optional[str] = None) -> None:
        self._all("finish_weight_update", weight_version)

    def shutdown_weight_transfer_engine(self) -> None:
        self._all("shutdown_weight_transfer_engine")


def _world() -> int:
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _broadcast(value: Any, rank: int) -> Any:
    """``value`` from rank 0 on every rank (the default process group)."""
    if _world() == 1:
        return value
    import torch.distributed as dist

    box = [value if rank == 0 else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def _barrier() -> None:
    """Every rank of the default process group has reached this point."""
    if _world() == 1:
        return
    import torch.distributed as dist

    dist.barrier()


def _state(info: TrainerInfo, source: Any) -> Mapping[str, Any]:
    if info.state_dict is not None:
        return info.state_dict
    module = getattr(source, "_module", None)  # vLLM's ModuleSource over a module
    if module is not None:
        return dict(module.state_dict())
    raise _error("vllm_transfer_arguments_invalid",
                 "trainer_init needs the trainer's tensors: TrainerInfo(state_dict=model.state_dict()) or a "
                 "ModuleSource over the model (a WeightSource that only streams gathered tensors does not say "
                 "where each rank's shards live)")


class _Replicas:
    """The mesh of a trainer whose tensors are plain (each rank holds them whole): one
    data-parallel dim of ``world`` ranks."""

    mesh_dim_names = ("dp",)
    ndim = 1

    def __init__(self, rank: int, world: int) -> None:
        self.shape = (world,)
        self._rank = rank

    def get_coordinate(self) -> list[int]:
        return [self._rank]


def untie(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``state`` with each tensor that shares another's memory left out (a model's tied
    embeddings: ``state_dict()`` gives ``lm_head.weight`` and ``model.embed_tokens.weight``,
    one tensor), keeping the first name in the state dict's order; and each name left out
    -> the name kept. Its bytes move once, under the name kept (the checkpoint's: a tied
    model's checkpoint holds the embedding)."""
    kept: dict[str, Any] = {}
    tied: dict[str, str] = {}
    seen: dict[tuple[Any, ...], str] = {}
    for name, tensor in state.items():
        local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
        key = (int(local.data_ptr()), tuple(tensor.shape), tuple(local.stride()), str(tensor.dtype)) \
            if local.numel() else (id(tensor),)
        if key in seen:
            tied[name] = seen[key]
            continue
        seen[key] = name
        kept[name] = tensor
    return kept, tied


def _mesh(info: TrainerInfo, state: Mapping[str, Any]) -> Any:
    if info.mesh is not None:
        return info.mesh
    for tensor in state.values():
        mesh = getattr(tensor, "device_mesh", None)
        if mesh is not None:
            return mesh
    return _Replicas(int(info.rank), _world())


class WeightManifestTrainer(TrainerWeightTransferEngine[TrainerInfo]):
    """The ``weight_manifest`` backend's trainer engine (see the module's documentation)."""

    init_info_cls = TrainerInfo

    def __init__(self, *, client: Any, source: Any = None, is_sender: bool = True) -> None:
        super().__init__(client=client, source=source, is_sender=is_sender)
        self.info: Optional[TrainerInfo] = None
        self.membership: Optional[channel.Membership] = None
        self.group: Optional[channel.ChannelGroup] = None
        self.coordinator: Optional[Coordinator] = None
        self.bound: Optional[BoundPlan] = None
        #: Where a rollback takes generation g from (``trainer_init``'s ``revisions``).
        self.revisions: Optional[Revisions] = None
        self.log: Optional[DecisionLog] = None
        #: Removes the record's folder when this trainer made it (no ``decisions`` given):
        #: at :meth:`shutdown`, else when the trainer is collected or the process exits.
        self._remove_decisions: Optional[Callable[[], Any]] = None
        #: The generation the engines serve.
        self.generation = 0
        #: Called after each step of an update (``VersionedUpdate``'s ``on_step``): a test's fault.
        self.on_step: Optional[Any] = None
        #: What each server said when its finish failed on the last update (their bodies).
        self.finish_errors: list[str] = []
        #: The state dict's names left out as tied to another (:func:`untie`): name -> kept.
        self.tied: dict[str, str] = {}

    # ---- init -------------------------------------------------------------------------------

    @classmethod
    def trainer_init(cls, init_info: TrainerInfo, *, client: Any, source: Any = None) -> "WeightManifestTrainer":
        info = init_info
        rank, world = int(info.rank), _world()
        state, tied = untie(_state(info, source))
        mesh = _mesh(info, state)
        self = cls(client=client, source=source, is_sender=rank == 0)
        self.revisions = info.revisions
        self.info, self.generation, self.tied = info, int(info.generation), tied
        key = secrets.token_hex(32) if rank == 0 else None
        if rank == 0:
            self.group = channel.ChannelGroup(info.host, str(key), port=info.port, timeout=info.timeout)
        address, key = _broadcast((self.group.address if self.group else None, key), rank)
        shards = dtensor.local_shards(state, mesh, model_id=info.model_id, revision=info.revision, axes=info.axes)

        def make(ordinal: int, host: str) -> Member:
            from ..group.ray import engine_backend

            backend, session = engine_backend(host)
            return Member(cast(Mapping[str, Any], shards.tensors), backend=backend, session=session, worker_id=f"trainer-{rank}",
                          endpoint=session, instance_id="trainer", generation=1, lease_id="trainer-lease",
                          **shards.where())

        try:
            # Every rank takes part in the broadcast of the outcome, also one whose join
            # failed (else rank 0 would wait for it in the collective).
            joined: Optional[ManifestError] = None
            try:
                self.membership = channel.join(str(address), str(key), "source", f"trainer-{rank}", make,
                                               timeout=info.timeout)
            except ManifestError as error:
                joined = error
            failure: Optional[ManifestError] = joined if rank == 0 else None
            if rank == 0 and joined is None:
                try:
                    self._rendezvous(world)
                except Exception as error:
                    failure = _failed("trainer_init", error)
            told = _broadcast(None if failure is None else (failure.code, str(failure)), rank)
            if joined is not None:
                raise joined
            if told is not None:
                raise _error(told[0], told[1])
        except BaseException:
            self.shutdown()
            raise
        return self

    def _rendezvous(self, world: int) -> None:
        """Rank 0: every trainer rank joined, every worker of every server joined through
        ``init_weight_transfer_engine``; plan, bind, keep generation g, take the first
        snapshot."""
        assert self.group is not None and self.info is not None
        info = self.info
        try:
            self.group.wait_members("source", world, info.timeout)
        except ManifestError:
            joined = set(self.group.members())
            absent = [r for r in range(world) if f"trainer-{r}" not in joined]
            raise _error("transfer_worker_lost", f"trainer rank {', '.join(map(str, absent))} of {world} did not join "
                         f"in {info.timeout:g} s (every rank calls trainer_init with its own state dict)") from None
        init = payloads.check(payloads.INIT_INFO, {
            "coordinator": self.group.address, "key": self.group.key, "group": info.group,
            "generation": int(info.generation), "instance_id": info.instance_id, "mode": info.mode,
            "model_id": info.model_id, "revision": info.revision}, "init_info")
        try:
            self.client.init_weight_transfer_engine(init)
        except Exception as error:
            raise _failed("init_weight_transfer_engine", error) from None
        self.coordinator = coordinator = Coordinator(self.group)
        if not coordinator.workers("target"):
            raise _error("vllm_transfer_session_invalid",
                         "init_weight_transfer_engine returned and no vLLM worker joined: is the server started "
                         "with --weight-transfer-config '{\"backend\": \"weight_manifest\"}'?")
        held = {r["tensor_id"] for w in coordinator.workers("target") for r in coordinator.peers[w].inventory["tensors"]}
        wrongly = sorted(n for n in self.tied if n in held and self.tied[n] not in held)
        if wrongly:
            raise _error("vllm_transfer_arguments_invalid",
                         f"trainer tensor {wrongly[0]} is tied to {self.tied[wrongly[0]]}, and the engines hold "
                         f"{wrongly[0]}, not {self.tied[wrongly[0]]}: put {wrongly[0]} first in the state dict")
        missing = sorted(held - {r["tensor_id"] for w in coordinator.workers("source")
                                 for r in coordinator.peers[w].inventory["tensors"]})
        if missing:
            raise _error("vllm_transfer_arguments_invalid",
                         f"the engines hold tensor {missing[0]}"
                         f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}, which no trainer rank "
                         "gives (its state dict names the checkpoint's tensors)")
        self.bound = coordinator.bind(coordinator.plan())
        if self.revisions is None:
            self.revisions = KeptOnTargets(block_elements=info.block_elements)
        self.revisions.save(coordinator, self.generation, "target")
        coordinator.snapshot(info.block_elements)
        folder = info.decisions
        if not folder:
            folder = tempfile.mkdtemp(prefix="wm-vllm-decisions-")
            self._remove_decisions = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.log = DecisionLog(folder, info.group)

    # ---- an update --------------------------------------------------------------------------

    # vLLM's send_weights returns nothing; this one returns the update's figures.
    def send_weights(  # type: ignore[override]
            self, *, mode: str = "full", weight_version: Optional[str] = None) -> dict[str, Any]:
        """Send the trainer's tensors as they are now (``mode``: ``full``, every byte; or
        ``delta``, the blocks changed since the last commit) and activate them on every
        worker of every server at once, as generation g+1 (``weight_version``: vLLM's
        version string, default the generation); or leave every worker serving g and
        raise. Every rank calls it (a collective): the tensors sent are every rank's as
        they are when the last rank calls; every rank returns the same figures."""
        assert self.info is not None
        rank = int(self.info.rank)
        # Rank 0 drives the update, and every rank's shards are read by its member's
        # thread: rank 0 must not start before every rank has called (and so finished
        # changing its tensors), or a slower rank's step lands half-done.
        _barrier()
        outcome: Any = None
        if rank == 0:
            try:
                outcome = ("ok", self._send(mode, weight_version))
            except Exception as error:  # every rank hears it: none waits in the broadcast
                failure = _failed("send_weights", error)
                outcome = ("error", failure.code, str(failure))
        outcome = _broadcast(outcome, rank)
        if outcome[0] == "error":
            raise _error(outcome[1], outcome[2])
        result: dict[str, Any] = outcome[1]
        self.generation = int(result["generation"])
        return result

    def _send(self, mode: str, weight_version: Optional[str]) -> dict[str, Any]:
        assert self.coordinator is not None and self.log is not None and self.info is not None
        if mode not in ("full", "delta"):
            raise _error("vllm_transfer_arguments_invalid", f"send_weights takes mode full or delta, not {mode!r}")
        if self.info.transfer_mode not in ("push", "pull"):
            raise _error("vllm_transfer_arguments_invalid",
                         f"TrainerInfo.transfer_mode is push or pull, not {self.info.transfer_mode!r}")
        started = time.perf_counter()
        g, to = self.generation, self.generation + 1
        update_id = uuid.uuid4().hex
        self.finish_errors = []
        error: Optional[ManifestError] = None
        decided = False
        result: dict[str, Any] = {}
        try:
            self.client.start_weight_update()
        except Exception as failure:
            error = _failed("start_weight_update", failure)
        if error is None and mode == "full":
            try:
                self._keep_served(g)
            except ManifestError as failure:
                error = failure
        if error is None:
            update = VersionedUpdate(self.coordinator, self.log, revisions=self.revisions,
                                     block_elements=self.info.block_elements, on_step=None, save_revisions=False)

            def on_step(step: str, worker: Optional[str]) -> None:
                if step == "prepared":
                    info = payloads.check(payloads.UPDATE_INFO, {
                        "update": update_id, "generation": to, "mode": mode, "coordinator": update.name,
                        "epoch": update.epoch}, "update_info")
                    try:
                        self.client.update_weights(info)
                    except Exception as failure:
                        raise _failed("update_weights", failure) from None
                if self.on_step is not None:
                    self.on_step(step, worker)

            update.on_step = on_step
            try:
                result = update.run(self.bound, to, mode=mode, transfer_mode=self.info.transfer_mode,
                                    options=self.info.options)
            except ManifestError as failure:
                error = failure
            # After a commit decision nothing is rolled back (a worker that failed to
            # activate is reported, and says so at its finish): the others serve g+1.
            decided = update.record is not None and update.record.decision == "commit"
        committed = error is None or decided
        self._tell({"update": update_id, "committed": committed, "generation": to if committed else g,
                    "code": None if committed else error.code if error else None,
                    "message": None if committed else str(error)})
        try:
            self.client.finish_weight_update((weight_version or str(to)) if committed else None)
        except Exception as failure:
            self.finish_errors.append(str(_failed("finish_weight_update", failure)))
            if committed:
                error = _failed("finish_weight_update", failure)
        if committed:
            self.generation = to
            self.coordinator.snapshot(self.info.block_elements, advance=mode == "delta")
        if error is not None:
            raise error
        return {**{k: v for k, v in result.items() if isinstance(v, (int, float, str, bool))},
                "generation": to, "mode": mode, "bytes": int(result.get("bytes", 0)),
                # The workers' memory the kept generations take (KeptOnTargets; 0 elsewhere).
                "kept_bytes": int(getattr(self.revisions, "kept_bytes", 0)),
                "seconds": time.perf_counter() - started}

    def _keep_served(self, generation: int) -> None:
        """Keep generation ``generation`` (what every worker serves) as the revision a full
        update rolls back to, unless it is kept: read from the workers, and kept only if it
        digests to what the last commit verified (``lifecycle_revision_invalid``: a byte
        changed since; the update does not start)."""
        assert self.revisions is not None and self.coordinator is not None and self.log is not None
        if self.revisions.digests(generation) is not None:
            return
        record = self.log.read()
        verified = (record.to_digests if record is not None and record.decision == "commit"
                    and record.to_generation == generation else None)
        self.revisions.save(self.coordinator, generation, "target", expected=verified or None)

    def _tell(self, outcome: dict[str, Any]) -> None:
        """Every worker that answers hears the decision (a lost one hears nothing: its
        finish says so)."""
        assert self.coordinator is not None
        told = payloads.check(payloads.OUTCOME, outcome, "the outcome")
        for worker in self.coordinator.workers("target"):
            try:
                self.coordinator.request_all([worker], {"op": "wt_outcome", **told})
            except ManifestError:
                pass

    # ---- the end ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Rank 0 stops the group (every worker leaves it and serves what it serves) and
        removes the decision record's folder if it made it (never a ``decisions`` given);
        every rank leaves (idempotent)."""
        if self.group is not None:
            self.group.close()
            self.group = None
        if self.membership is not None:
            self.membership.leave()
            self.membership = None
        if self._remove_decisions is not None:
            self._remove_decisions()

