"""Execute a bound plan's copies: move the bytes of a weight update, failing closed.

The parts, one responsibility each: :mod:`.fences` (the core's fence rule for each holder),
:mod:`.backends` (the transports), :mod:`.lowering` (copies to engine operations, staging,
a delta's packing), :mod:`.options` (the executor's options, one value), :mod:`.delta` (a delta's packed area on a pair's passive side), :mod:`.landed` (a pulling
target hashing what has landed),
:mod:`.quantize` (a source quantizing to block FP8 in its staging, contract §17.8; it
needs torch, so it is imported on its own), :mod:`.reports` (what moved) and :mod:`.executor` (:func:`execute`: batches in flight,
waited for, bounded, reported). Who runs which pairs is the group's business
(:mod:`weight_manifest_runtime.group`).
"""

from .backends import Backend, EngineBackend, LocalBackend
from .defaults import (
    DEFAULT_BATCH_SEGMENTS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_SEGMENTS,
    DEFAULT_STAGE_BELOW,
    DEFAULT_STAGING_BYTES,
    DEFAULT_STALL_SECONDS,
)
from .delta import Landing
from .landed import LandedPartials
from .executor import Progress, execute, operation_count
from .fences import FENCE_MEMBERS, Fence, check_fence, check_fences, fence_of
from .lowering import Changed, Staging, changed_from_wire, ranges_to_wire, written_ranges
from .options import ExecuteOptions
from .reports import PairReport, UpdateReport

__all__ = [
    "DEFAULT_BATCH_SEGMENTS",
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_MAX_SEGMENTS",
    "DEFAULT_STAGE_BELOW",
    "DEFAULT_STAGING_BYTES",
    "DEFAULT_STALL_SECONDS",
    "FENCE_MEMBERS",
    "Backend",
    "Changed",
    "EngineBackend",
    "ExecuteOptions",
    "Fence",
    "LandedPartials",
    "Landing",
    "LocalBackend",
    "PairReport",
    "Progress",
    "Staging",
    "UpdateReport",
    "changed_from_wire",
    "check_fence",
    "check_fences",
    "execute",
    "fence_of",
    "operation_count",
    "ranges_to_wire",
    "written_ranges",
]
