"""weight-manifest as a backend of vLLM's own weight-sync API (``vllm.distributed.weight_transfer``):
``vllm serve MODEL --weight-transfer-config '{"backend": "weight_manifest"}'`` or
``LLM(..., weight_transfer_config={"backend": "weight_manifest"})`` on the engine's side
(the plugin, :mod:`.plugin`, registers the name in every vLLM process), and
``WeightTransferTrainerFactory.trainer_init(TrainerInfo(rank=r, state_dict=...), client=...)``
then ``send_weights()`` on every trainer rank (:mod:`.trainer`).

The parts, one responsibility each: :mod:`.plugin` (registration, the worker's gate and
session), :mod:`.engine` (a vLLM worker as a target of the group), :mod:`.trainer` (the
trainer's ranks as sources, rank 0 the coordinator), :mod:`.channel` (the control channel
members dial in to), :mod:`.payloads` (the JSON payloads against their schema),
:mod:`.kept` (the generation a full update rolls back to, kept by the targets). Importing
this package imports neither vLLM nor torch.
"""

from .plugin import BACKEND, register

__all__ = ["BACKEND", "register"]
