"""The vLLM general plugin (entry point group ``vllm.general_plugins``, name
``weight_manifest``): vLLM runs :func:`register` in each of its processes, possibly more
than once, before it builds a worker. It

- registers :class:`~.engine.WeightManifestEngine` under :data:`BACKEND` with vLLM's
  ``WeightTransferEngineFactory`` and :class:`~.trainer.WeightManifestTrainer` with its
  ``WeightTransferTrainerFactory`` (lazily: nothing of this package is imported until a
  worker or a trainer asks for the name);
- installs the adapter's plain-linear dispatch (:mod:`weight_manifest_runtime.vllm`: an engine
  started with ``additional_config={"weight_manifest_plain_linears": true}`` keeps its
  linear weights plain, so updates write into them: the direct mode);
- wraps the worker's ``execute_model`` / ``sample_tokens`` with the engine's gate (a
  forward pass waits while an update's bytes change) and its ``finish_weight_update`` so
  that when this backend's finish raises (the update was rolled back), vLLM's own session
  ends too: the next ``start_weight_update`` is taken, not refused as "already active".

Workers of other backends are left as they are (the wrappers look at the worker's engine).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

__all__ = ["BACKEND", "register"]

#: The backend name, on both sides: ``{"backend": "weight_manifest"}``.
BACKEND = "weight_manifest"


def register() -> None:
    """Register the backend and wrap the worker (idempotent)."""
    from vllm.distributed.weight_transfer.factory import WeightTransferEngineFactory, WeightTransferTrainerFactory

    if BACKEND not in WeightTransferEngineFactory._registry:
        WeightTransferEngineFactory.register_engine(BACKEND, "weight_manifest_runtime.weight_transfer.engine",
                                                    "WeightManifestEngine")
    if BACKEND not in WeightTransferTrainerFactory._registry:
        WeightTransferTrainerFactory.register_engine(BACKEND, "weight_manifest_runtime.weight_transfer.trainer",
                                                     "WeightManifestTrainer")
    from .. import vllm as _adapter

    _wrap_worker()


def _ours(worker: Any) -> Any:
    """The worker's engine if it is this backend's, else None."""
    from .engine import WeightManifestEngine

    engine = getattr(worker, "weight_transfer_engine", None)
    return engine if isinstance(engine, WeightManifestEngine) else None


def _wrap_worker() -> None:
    from vllm.v1.worker.gpu_worker import Worker

    if getattr(Worker, "_weight_manifest_wrapped", False):
        return
    execute: Callable[..., Any] = Worker.execute_model
    sample: Callable[..., Any] = Worker.sample_tokens
    finish: Callable[..., Any] = Worker.finish_weight_update

    @functools.wraps(execute)
    def execute_model(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine = _ours(self)
        if engine is None:
            return execute(self, *args, **kwargs)
        engine.enter_forward()
        try:
            output = execute(self, *args, **kwargs)
        except BaseException:
            engine.leave_forward()
            raise
        if output is None:
            self._weight_manifest_sampling = True  # the pass ends at sample_tokens
        else:
            engine.leave_forward()
        return output

    @functools.wraps(sample)
    def sample_tokens(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine = _ours(self)
        try:
            return sample(self, *args, **kwargs)
        finally:
            if engine is not None and getattr(self, "_weight_manifest_sampling", False):
                self._weight_manifest_sampling = False
                engine.leave_forward()

    @functools.wraps(finish)
    def finish_weight_update(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return finish(self, *args, **kwargs)
        except BaseException:
            if _ours(self) is not None and getattr(self, "_weight_update_active", False):
                # This backend closed its session before raising: vLLM's ends with it.
                self._weight_update_active = False
                self.weight_transfer_engine.reset_weight_update_target()
            raise

    Worker.execute_model = execute_model  # type: ignore[method-assign]
    Worker.sample_tokens = sample_tokens  # type: ignore[method-assign]
    Worker.finish_weight_update = finish_weight_update  # type: ignore[method-assign]
    Worker._weight_manifest_wrapped = True  # type: ignore[attr-defined]
