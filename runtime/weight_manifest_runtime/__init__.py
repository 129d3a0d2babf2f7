"""weight_manifest_runtime: weight updates between trainers and inference engines.

The door: the names a framework needs to move a trainer's sharded weights into its engines,
check every landed byte and activate a new version on all of them at once, or on none.

- A group: :class:`Member` (one trainer rank or engine worker: its tensors and where they
  sit), joined in this process (:class:`LocalGroup`), in child processes
  (:class:`PipeGroup`) or across hosts on Ray (:class:`RayGroup`, whose actors hold a
  :class:`GroupMember`; :func:`new_key` is the group's secret, :func:`engine_backend` a
  Transfer Engine on the member's host); :class:`Coordinator` plans, binds, moves, verifies
  and activates over it.
- Versions: :class:`TargetVersions` is what a target serves (the one owner of its
  generation: an engine waits on it), :class:`VersionedUpdate` the atomic update of a whole
  group with its durable :class:`DecisionLog` (contract §22).
- A trainer: :func:`local_shards` describes a rank's DTensors.

The modules below are the parts (``transfer``, ``group``, ``lifecycle``, ``store``,
``dtensor``, ``vllm``, ``simulate``): see ``runtime/README.md``.
"""

from .dtensor import local_shards
from .group import Coordinator, LocalGroup, Member, PipeGroup
from .group.ray import GroupMember, RayGroup, engine_backend, new_key
from .lifecycle import DecisionLog, TargetVersions, VersionedUpdate

__all__ = [
    "Coordinator",
    "DecisionLog",
    "GroupMember",
    "LocalGroup",
    "Member",
    "PipeGroup",
    "RayGroup",
    "TargetVersions",
    "VersionedUpdate",
    "engine_backend",
    "local_shards",
    "new_key",
]
