"""Coverage (contract §16), the reshard planner (§17) and plan binding (§17.4).

Thin over the Rust core: each function hands its arguments to one native call, and the
result classes (:class:`CoverageReport`, :class:`Plan`, :class:`BoundPlan`) hold the core's
value, so their ``to_json()`` is the CLI's output byte for byte. Documents may be given as
manifest objects, as JSON text (``str`` or ``bytes``) or as file paths (``os.PathLike``).
Rejections raise :class:`ManifestError` with the core's code and pointer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional, Union

from . import _native
from ._manifests import PlacementManifest, RuntimeBindingManifest
from ._native import BoundPlan, CopyGroup, CoverageReport, Plan, PlanRegion

__all__ = [
    "BoundPlan",
    "CopyGroup",
    "CoverageReport",
    "Plan",
    "PlanLimits",
    "PlanRegion",
    "bind_plan",
    "coverage",
    "plan",
]

Document = Union[str, bytes, "os.PathLike[str]"]
PlacementInput = Union[PlacementManifest, Document]
BindingInput = Union[RuntimeBindingManifest, Document]


@dataclass(frozen=True)
class PlanLimits:
    """Bounds on a plan's size; a plan that needs more fails with ``plan_limit_exceeded``
    (the CLI's ``--max-regions`` and ``--max-segments``). ``max_geometry_work`` bounds the
    planner's box arithmetic (the document limit of the same name; None: the default)."""

    max_regions: int = _native.DEFAULT_MAX_REGIONS
    max_segments: int = _native.DEFAULT_MAX_SEGMENTS
    max_geometry_work: Optional[int] = None


def coverage(placement: PlacementInput) -> CoverageReport:
    """How the fragments of ``placement`` cover its tensors (complete, gaps, ambiguous)."""
    return _native.coverage(placement)


def plan(
    source: PlacementInput,
    target: PlacementInput,
    *,
    limits: Optional[PlanLimits] = None,
    replica_choice: str = "balanced",
    source_hosts: Optional[Mapping[tuple[int, int, int, int], str]] = None,
    quantization: Optional[str] = None,
) -> Plan:
    """The reshard plan that moves the weights from the ``source`` placement to the
    ``target`` placement: the same regions, plan_id and JSON as ``weight-manifest plan``
    with the same ``--replica-choice``. ``replica_choice="balanced"`` (the default) reads
    a target's tiles from its own DP replica, then the least loaded rank; ``"spread"`` lets
    every region read any replica, so that the busiest source sends the fewest bytes (for
    sources with more DP replicas than the target). ``source_hosts`` (spread only) maps a
    source rank ``(dp, tp, pp, ep)`` to its host: the busiest host link is then balanced
    first. ``quantization`` (balanced only) is a quantization spec's JSON text (contract
    §17.8): the target holds the tensors it names in block FP8, and their regions carry
    the ``transform`` the source computes. The planner runs without the GIL."""
    limits = limits or PlanLimits()
    if replica_choice not in ("balanced", "spread"):
        raise ValueError(f"replica_choice must be 'balanced' or 'spread', not {replica_choice!r}")
    if source_hosts is not None and replica_choice != "spread":
        raise ValueError("source_hosts needs replica_choice='spread'")
    if quantization is not None and replica_choice != "balanced":
        raise ValueError("quantization needs replica_choice='balanced'")
    return _native.plan(
        source,
        target,
        limits.max_regions,
        limits.max_segments,
        limits.max_geometry_work,
        replica_choice == "spread",
        dict(source_hosts) if source_hosts is not None else None,
        quantization,
    )


def bind_plan(
    plan: Union[Plan, Document],
    source_binding: BindingInput,
    target_binding: BindingInput,
    *,
    source_generation: Optional[int] = None,
    target_generation: Optional[int] = None,
) -> BoundPlan:
    """Binds ``plan`` to the runtime bindings of its source and target placements: every
    region gets the absolute addresses of its first source and target byte, grouped by
    (source worker, target worker) (:attr:`BoundPlan.pairs`; each group's
    :meth:`CopyGroup.segments` gives numpy arrays for an executor). A given generation is a
    fence: a binding of another generation is stale (``plan_binding_generation_mismatch``).
    The plan is read first, then the source binding, then the target binding."""
    return _native.bind_plan(
        plan, source_binding, target_binding, source_generation, target_generation
    )
