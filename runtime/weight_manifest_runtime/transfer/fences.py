"""The fences of a bound plan against what each side holds now.

The rule is the core's (``fence::check``, contract §17.7): :func:`check_fence` calls it for
one holder (a worker's mapping of ``instance_id``, ``lease_id``, ``generation`` and
``worker_id``, or a side's whole :class:`RuntimeBindingManifest`); :func:`check_fences`
for every holder of both sides. Nothing here compares a member itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from weight_manifest import BoundPlan, RuntimeBindingManifest, check_fence

__all__ = ["FENCE_MEMBERS", "Fence", "check_fence", "check_fences", "fence_of"]

FENCE_MEMBERS = ("placement_id", "placement_digest", "instance_id", "lease_id", "generation")

Fence = Mapping[str, Any]
Held = Union[RuntimeBindingManifest, Fence, Sequence[Fence]]


def fence_of(binding: Union[RuntimeBindingManifest, Fence]) -> dict[str, Any]:
    """The fence members of a live binding (a :class:`RuntimeBindingManifest` or a mapping
    with at least the members of a bound plan's ``source`` / ``target``)."""
    if isinstance(binding, RuntimeBindingManifest):
        return {m: getattr(binding, m) for m in FENCE_MEMBERS}
    return {m: binding.get(m) for m in FENCE_MEMBERS}


def check_fences(bound: BoundPlan, source: Held, target: Held) -> None:
    """Raise ``transfer_fence_mismatch`` (pointer ``/source/generation`` and the like, into
    the bound plan) unless every holder of each side still holds the bound plan's fence.
    A side is one binding or one fence per worker (what each worker reports now)."""
    for side, live in (("source", source), ("target", target)):
        holders = [live] if isinstance(live, (RuntimeBindingManifest, Mapping)) else list(live)
        for held in holders:
            check_fence(bound, side, held)
