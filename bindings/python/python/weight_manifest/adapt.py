"""The safetensors adapter (contract §17.5) from Python: the placement of a checkpoint laid
out by a rules file, the same one ``weight-manifest adapt safetensors`` writes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Optional, Union

from . import _native
from ._manifests import PlacementManifest


def adapt_safetensors(
    path: Union[str, os.PathLike[str]],
    rules: Union[str, bytes, os.PathLike[str]],
    *,
    model_id: str,
    revision: str,
    tp: int = 1,
    pp: int = 1,
    ep: int = 1,
    dp: int = 1,
    dims: Optional[Mapping[str, int]] = None,
) -> tuple[PlacementManifest, dict[str, Any]]:
    """Places the tensors of a safetensors checkpoint by a rules file (headers only).

    ``path`` is a ``model.safetensors``, a ``model.safetensors.index.json`` or the folder
    holding one; ``rules`` is the rules JSON text (``str`` or ``bytes``) or the path of a
    rules file (an ``os.PathLike``: a ``str`` is always text). ``dims`` gives the model
    dimensions a rule's ``pieces`` counts (the CLI's ``--dim``: ``{"heads": 32,
    "kv_heads": 8}``). Returns the placement (its ``to_json()`` is the CLI's ``-o`` output
    byte for byte) and the runtime inventory template the CLI's ``--inventory`` writes, as
    Python data (a fused buffer's members inside one allocation at their offsets).

    Rejections raise :class:`ManifestError` with the adapter's or the contract's code and
    pointer (``adapt_rules_invalid``, ``adapt_unmatched_tensor``, ``adapt_uneven_split``,
    ``adapt_grid_invalid``, ``adapt_header_invalid``, ``adapt_fused_invalid``,
    ``adapt_dimension_missing``, ...); a file that cannot be read
    raises ``OSError``.
    """
    return _native.adapt_safetensors(
        path, rules, model_id=model_id, revision=revision, tp=tp, pp=pp, ep=ep, dp=dp,
        dims=None if dims is None else dict(dims),
    )
