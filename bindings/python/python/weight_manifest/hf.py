"""What both sides of an update agree on when they hold a Hugging Face model: the tensor
names and shapes of its checkpoint (``q_proj``, not vLLM's fused ``qkv_proj``), row-major,
with the sharding left to the placement.

A trainer (:mod:`weight_manifest_runtime.dtensor`) and an inference engine
(:mod:`weight_manifest_runtime.vllm`) describe the same logical tensors, so a plan between them
needs equal descriptors: the same layout_fingerprint, layer_id and expert_id (contract
§17.3, ``plan_tensor_mismatch``). Both default to the two values here; the adapter's vLLM
presets (``examples/rules/vllm-*.json``) use the same fingerprint and read the same ids
from the same names.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

__all__ = ["LAYOUT_FINGERPRINT", "Ids", "ids"]

LAYOUT_FINGERPRINT = "hf:v1"
"""The layout_fingerprint of a tensor held in its Hugging Face checkpoint layout."""

Ids = Callable[[str], tuple[Optional[int], Optional[int]]]
"""A tensor name to its (layer_id, expert_id)."""

_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_EXPERT = re.compile(r"(?:^|\.)experts\.(\d+)\.")


def ids(name: str) -> tuple[Optional[int], Optional[int]]:
    """The layer and expert of a Hugging Face tensor name: the numbers after ``layers.``
    and ``experts.`` (``model.layers.3.mlp.experts.7.up_proj.weight`` is (3, 7)), each
    None when the name has none."""
    layer = _LAYER.search(name)
    expert = _EXPERT.search(name)
    return (int(layer.group(1)) if layer else None, int(expert.group(1)) if expert else None)
