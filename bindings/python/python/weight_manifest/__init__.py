"""weight_manifest: the model-weight manifest contract, backed by a Rust core.

A drop-in for the reference implementation's ``mooncake.model_weight``: the same names,
fields, defaults and messages. Every rejection is a ``ValueError`` (precisely a
:class:`ManifestError`) whose message is the contract's, with the stable ``code`` and
the JSON pointer ``path`` (or ``None``) attached; an ``invalid_json`` rejection also has
the ``line``, ``column`` and byte ``offset`` where the text breaks (else ``None``).
"""

# The analysis operations (coverage, plan, bind_plan and their results) are added by this
# implementation: importable, but not in __all__, the reference API.
from ._analysis import (
    BoundPlan as BoundPlan,
    CopyGroup as CopyGroup,
    CoverageReport as CoverageReport,
    Plan as Plan,
    PlanLimits as PlanLimits,
    PlanRegion as PlanRegion,
    bind_plan as bind_plan,
    coverage as coverage,
    plan as plan,
)
from ._manifests import (
    PlacementManifest,
    RuntimeBindingManifest,
    RuntimeManifest,
    bind_runtime_manifest,
    placement_manifest_from_runtime_manifest,
    runtime_binding_from_runtime_manifest,
)
from ._native import ManifestError as ManifestError
# The fence check of a bound plan (contract §17.7), for the runtime's executors.
from ._native import check_fence as check_fence

# The safetensors adapter (weight_manifest.adapt) and live tensors (weight_manifest.live):
# like bind_plan, importable but not in __all__.
from .adapt import adapt_safetensors
from ._types import (
    ParallelRank,
    PlacementFragment,
    RuntimeBindingFragment,
    RuntimeFragment,
    TensorDescriptor,
)

__all__ = [
    "ParallelRank",
    "PlacementFragment",
    "PlacementManifest",
    "RuntimeBindingFragment",
    "RuntimeBindingManifest",
    "RuntimeFragment",
    "RuntimeManifest",
    "TensorDescriptor",
    "bind_runtime_manifest",
    "placement_manifest_from_runtime_manifest",
    "runtime_binding_from_runtime_manifest",
]
