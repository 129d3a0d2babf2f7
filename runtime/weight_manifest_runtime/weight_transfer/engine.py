"""The worker side: a vLLM ``WeightTransferEngine`` that makes each vLLM worker a target of
a weight-update group whose coordinator is the trainer's rank 0.

vLLM creates it in every worker after loading the model, when the engine runs with
``weight_transfer_config={"backend": "weight_manifest"}`` (the plugin registers the name).
Its calls, in the order the trainer makes them (``docs/vllm.md``):

- ``init_transfer_engine(init_info)``: the worker describes what it holds as the
  checkpoint's tensors, asked of vLLM's own loader (:mod:`weight_manifest_runtime.vllm`): in its
  own parameters (``direct``: linears kept plain) or in a staging buffer (``staged``:
  applied through vLLM's layer-wise reload, which repacks), registers that memory with a
  Mooncake Transfer Engine on its address towards the coordinator, and joins the group as a
  target (its lease and fence generation, the generation it serves:
  :class:`~weight_manifest_runtime.lifecycle.TargetVersions`), answering the coordinator's calls on
  the control channel (:mod:`.channel`) from a thread of its own;
- ``start_weight_update()``: a session opens; only inside one does the worker take the
  coordinator's prepare of generation g+1;
- ``update_weights(update_info)``: the update it must have been prepared for (id,
  generation, mode, the coordinator's epoch), else refused; the bytes are then pulled by
  this worker from every trainer rank's own shards and checked by content digests against
  the trainer's, and the coordinator decides for every worker of every server at once;
- ``finish_weight_update()``: the decision as told by the coordinator: committed, it serves
  g+1 (vLLM then records the weight version); aborted, every byte is back at g, it serves g
  and this raises the failure's code and message. The worker's session is closed on every
  path (the plugin closes vLLM's side of it when this raises).

**What holds requests: this engine's gate, not vLLM's /pause.** The plugin wraps the
worker's ``execute_model``: a forward pass waits while the gate is closed. Direct: the gate
closes at the prepare (after the forward passes running then end) and opens at the decision
(activation of g+1, or of g after the rollback), so no pass reads changing bytes; staged:
the served parameters change only inside the reload at activation, so the gate closes only
around it and the engine serves g during the transfer.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Optional

import torch
from vllm.distributed.weight_transfer.base import (
    WeightTransferEngine,
    WeightTransferInitInfo,
    WeightTransferUpdateInfo,
)

from weight_manifest import ManifestError
from weight_manifest.errors import manifest_error as _error
from .. import vllm as wv
from ..group import Member
from ..lifecycle import TargetVersions
from . import channel, kept, payloads

__all__ = ["InitInfo", "UpdateInfo", "WeightManifestEngine"]

#: The fence generation of a worker's layout (its memory does not move between updates;
#: the weights' version is the lifecycle's generation).
LAYOUT_GENERATION = 1


def _coded(call: Callable[..., Any]) -> Callable[..., Any]:
    """A call vLLM makes: a rejection's message starts with its code (an HTTP client sees
    only the text of the exception, in a status 500), so the trainer gets the code back."""

    @functools.wraps(call)
    def coded(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except ManifestError as error:
            if str(error).startswith(f"{error.code}: "):
                raise
            raise _error(str(error.code), f"{error.code}: {error}", error.path) from None

    return coded


@dataclass
class InitInfo(WeightTransferInitInfo):
    """``init_info``, checked against the schema's ``InitInfo``."""

    payload: dict[str, Any]


@dataclass
class UpdateInfo(WeightTransferUpdateInfo):
    """``update_info``, checked against the schema's ``UpdateInfo``."""

    payload: dict[str, Any]


class _HeldModel(wv.WeightManifestExtension):
    """The adapter's description of a worker's model (:mod:`weight_manifest_runtime.vllm`), over
    the model and config vLLM gives this engine."""

    def __init__(self, model: torch.nn.Module, vllm_config: Any) -> None:
        self.model_runner = SimpleNamespace(model=model)
        self.vllm_config = vllm_config

    def execute_model(self, *args: Any, **kwargs: Any) -> Any:  # the adapter's own gate wraps it: unused here
        raise RuntimeError("not a worker")

    def reload_weights(self, weights_iterator: Any) -> None:
        """vLLM's own in-place (layer-wise) reload of checkpoint tensors."""
        from vllm.config import set_current_vllm_config
        from vllm.model_executor.model_loader.reload.inplace import reload_weights

        with set_current_vllm_config(self.vllm_config):
            reload_weights(self.vllm_config, self.model_runner.model, weights_iterator=weights_iterator,
                           weights_path=None, is_checkpoint_format=True)


@dataclass
class _Joined:
    held: _HeldModel
    member: Member
    versions: TargetVersions
    mode: str
    membership: channel.Membership
    #: Each parameter's address when the worker joined (direct: the update writes there).
    pointers: dict[str, int]


class WeightManifestEngine(WeightTransferEngine[InitInfo, UpdateInfo]):
    """The ``weight_manifest`` backend of vLLM's weight transfer, worker side (see the
    module's documentation). ``pause_timeout``: how long a forward pass waits at the closed
    gate before it fails (``vllm_engine_paused``)."""

    init_info_cls = InitInfo
    update_info_cls = UpdateInfo
    supports_draft_weight_update = False
    pause_timeout = 600.0

    def __init__(self, config: Any, vllm_config: Any, device: torch.device, model: torch.nn.Module) -> None:
        super().__init__(config, vllm_config, device, model)
        self._gate = threading.Condition()
        self._open = True
        self._running = 0
        self._joined: Optional[_Joined] = None
        self._session = False
        self._update: Optional[dict[str, Any]] = None
        self._outcome: Optional[dict[str, Any]] = None
        self._applied: Optional[int] = None
        #: Why a committed generation could not be applied (vLLM's reload failed): the
        #: worker serves nothing, and its finish says so.
        self._broken: Optional[str] = None

    # ---- payloads ---------------------------------------------------------------------------

    @_coded
    def parse_init_info(self, init_dict: dict[str, Any]) -> InitInfo:
        return InitInfo(payloads.check(payloads.INIT_INFO, init_dict, "init_info"))

    @_coded
    def parse_update_info(self, update_dict: dict[str, Any]) -> UpdateInfo:
        return UpdateInfo(payloads.check(payloads.UPDATE_INFO, update_dict, "update_info"))

    # ---- the gate ---------------------------------------------------------------------------

    def enter_forward(self) -> None:
        """Before a forward pass: wait while the gate is closed (``vllm_engine_paused``
        after ``pause_timeout``)."""
        with self._gate:
            if not self._gate.wait_for(lambda: self._open, self.pause_timeout):
                raise _error("vllm_engine_paused",
                             f"a forward pass waited {self.pause_timeout:g} s for a weight update to end")
            self._running += 1

    def leave_forward(self) -> None:
        with self._gate:
            self._running -= 1
            self._gate.notify_all()

    def _close_gate(self) -> None:
        with self._gate:
            self._open = False
            if not self._gate.wait_for(lambda: self._running == 0, self.pause_timeout):
                self._open = True
                self._gate.notify_all()
                raise _error("vllm_engine_paused", f"a forward pass did not end in {self.pause_timeout:g} s: "
                             "the update does not start")

    def _open_gate(self) -> None:
        with self._gate:
            self._open = True
            self._gate.notify_all()

    # ---- init -------------------------------------------------------------------------------

    def _worker(self) -> str:
        return "this worker" if self._joined is None else f"worker {self._joined.member.worker_id}"

    @_coded
    def init_transfer_engine(self, init_info: InitInfo) -> None:
        info = init_info.payload
        if self._joined is not None:
            raise _error("vllm_transfer_join_refused",
                         f"{self._worker()} is a member of group {info['group']} already: "
                         "shutdown_weight_transfer_engine first")
        from vllm.distributed import get_tensor_model_parallel_rank

        held = _HeldModel(self.model, self.vllm_config)
        made: dict[str, Any] = {}

        def make(ordinal: int, host: str) -> Member:
            from ..group.ray import engine_backend

            mode = self._describe(held, info, ordinal, get_tensor_model_parallel_rank())
            backend, session = engine_backend(host)
            where = {**held.wm_where(), "endpoint": session}
            member = Member(held.wm_tensors(), backend=backend, session=session, register=held.wm_regions(),
                            window=True, **where)
            versions = TargetVersions(member, int(info["generation"]))
            member.handlers.update(kept.handlers(member))
            member.handlers["wt_outcome"] = self._told
            self._gate_lifecycle(member, versions, mode)
            versions.on_activate(self._activated)
            made.update(held=held, versions=versions, mode=mode)
            return member

        replica = str(getattr(self.vllm_config, "instance_id", "") or id(self))
        membership = channel.join(info["coordinator"], info["key"], "target", replica, make, on_stop=self._left)
        self._applied = int(info["generation"])
        pointers = {n: int(p.data_ptr()) for n, p in self.model.named_parameters()}
        self._joined = _Joined(made["held"], membership.member, made["versions"], made["mode"], membership, pointers)

    def _describe(self, held: _HeldModel, info: dict[str, Any], dp: int, tp: int) -> str:
        """Describe the worker (``auto``: direct where the parameters are plain and hold the
        checkpoint's bytes, else staged); the mode taken."""
        keywords = dict(instance_id=info["instance_id"], model_id=info["model_id"], revision=info["revision"],
                        dp=dp, worker_id=f"{info['instance_id']}-dp{dp}-tp{tp}",
                        lease_id=f"{info['instance_id']}-lease", generation=LAYOUT_GENERATION)
        if info["mode"] in ("auto", "direct"):
            try:
                held.wm_describe(mode="direct", **keywords)
                return "direct"
            except ManifestError as error:
                if info["mode"] == "direct" or error.code != "vllm_direct_unsupported":
                    raise
        held.wm_describe(mode="staged", **keywords)
        return "staged"

    def _gate_lifecycle(self, member: Member, versions: TargetVersions, mode: str) -> None:
        """The lifecycle's prepare happens only inside a session, and (direct) closes the
        gate before any byte changes."""
        prepare: Callable[[dict[str, Any]], dict[str, Any]] = member.handlers["lc_prepare"]

        def gated_prepare(request: dict[str, Any]) -> dict[str, Any]:
            if not self._session:
                raise _error("lifecycle_state_invalid",
                             f"worker {member.worker_id}: no weight update session is open (the trainer calls "
                             "start_weight_update before the coordinator prepares)")
            if mode == "direct" and versions.serving:
                self._close_gate()
            try:
                return prepare(request)
            except BaseException:
                if versions.serving:
                    self._open_gate()
                raise

        member.handlers["lc_prepare"] = gated_prepare

    def _activated(self, generation: int) -> None:
        """After an activation (g+1 at a commit, g after a rollback): a staged generation
        not yet served goes through vLLM's reload (gate closed around it); the gate opens."""
        joined = self._joined
        if joined is not None and joined.mode == "staged" and generation != self._applied:
            self._close_gate()
            try:
                joined.held.wm_apply_staged()
            except Exception as error:  # the gate stays closed: it serves nothing
                self._broken = f"{type(error).__name__}: {error}"
                raise
        self._applied = generation
        self._open_gate()

    def _told(self, request: dict[str, Any]) -> dict[str, Any]:
        outcome = payloads.check(payloads.OUTCOME, {k: v for k, v in request.items()
                                                     if k not in ("epoch", "coordinator")}, "the outcome")
        self._outcome = outcome
        return {}

    def _left(self) -> None:
        """The coordinator stopped or its channel ended: this worker leaves the group (it
        serves what it served)."""
        self._joined = None
        self._session = False

    # ---- an update --------------------------------------------------------------------------

    def _need(self) -> _Joined:
        joined = self._joined
        if joined is None:
            raise _error("vllm_transfer_session_invalid",
                         "this worker is not in a weight-update group: init_weight_transfer_engine first (the "
                         "trainer's trainer_init)")
        return joined

    @_coded
    def start_weight_update(self) -> None:
        joined = self._need()
        if joined.mode == "direct":
            moved = [n for n, p in self.model.named_parameters() if joined.pointers.get(n) != int(p.data_ptr())]
            if moved:
                raise _error("vllm_direct_unsupported",
                             f"parameter {moved[0]} of worker {joined.member.worker_id} moved since it joined (a "
                             "reload that allocated anew): shutdown_weight_transfer_engine, then init again")
        status = joined.versions.status()
        if not status["serving"]:
            raise _error("lifecycle_state_invalid",
                         f"worker {joined.member.worker_id} is out of service (state {status['state']}, "
                         f"generation {status['active']}): an update starts only from a worker that serves")
        self._session, self._update, self._outcome = True, None, None

    def receive_weights(self, update_info: UpdateInfo) -> None:
        joined = self._need()
        update = update_info.payload
        status = joined.versions.status()
        if not self._session:
            raise _error("vllm_transfer_session_invalid", f"worker {joined.member.worker_id}: update_weights "
                         "outside a session (start_weight_update first)")
        if (status["state"] != "updating" or status["staged"] != update["generation"]
                or status["coordinator"] != update["coordinator"] or status["open_epoch"] != update["epoch"]):
            raise _error("lifecycle_state_invalid",
                         f"worker {joined.member.worker_id} was not prepared for update {update['update']} to "
                         f"generation {update['generation']} by coordinator {update['coordinator']} (epoch "
                         f"{update['epoch']}): it is {status['state']}, staged {status['staged']}, coordinator "
                         f"{status['coordinator']} (epoch {status['open_epoch']})")
        self._update = update

    @_coded
    def update_weights(self, update_info: dict[str, Any]) -> None:
        # The bytes move on the Transfer Engine, not on the device: nothing to synchronise.
        self.receive_weights(self.parse_update_info(update_info))

    @_coded
    def finish_weight_update(self) -> None:
        joined = self._need()
        outcome, self._session, self._update = self._outcome, False, None
        status = joined.versions.status()
        if outcome is None:
            raise _error("vllm_transfer_session_invalid",
                         f"worker {joined.member.worker_id} heard no decision for this update: it "
                         + ("serves generation " + str(status["active"]) if status["serving"] else
                            f"is out of service ({status['state']}) until a coordinator recovers it"))
        if not outcome["committed"]:
            raise _error(str(outcome["code"] or "transfer_failed"),
                         f"{outcome['message']} (worker {joined.member.worker_id} serves generation "
                         f"{status['active']})")
        if self._broken is not None:
            raise _error("vllm_staged_mismatch",
                         f"worker {joined.member.worker_id} could not apply generation {outcome['generation']} through "
                         f"vLLM's reload ({self._broken}): it serves nothing until the engine is restarted")
        if not status["serving"] or status["active"] != outcome["generation"]:
            raise _error("lifecycle_state_invalid",
                         f"update {outcome['update']} committed generation {outcome['generation']}, and worker "
                         f"{joined.member.worker_id} is {status['state']} at {status['active']}")

    def shutdown(self) -> None:
        joined, self._joined = self._joined, None
        if joined is not None:
            joined.membership.leave()
        if joined is None or joined.versions.serving:
            self._open_gate()  # an open update's bytes stay behind the closed gate

    # ---- for tests and operators ----------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The target's lifecycle status, its mode, and the gate."""
        joined = self._need()
        return {**joined.versions.status(), "mode": joined.mode, "gate_open": self._open,
                "worker_id": joined.member.worker_id}
