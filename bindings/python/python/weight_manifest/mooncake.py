"""Mooncake's released formats (``mooncake.reshard`` 0.3.13; contract §20) from Python: the
same operations as ``weight-manifest mooncake export|import|validate``, on the same core.

- :func:`export_placement`: our placement as Mooncake's ``WeightPlacementManifest`` text
  (``weight_placement_from_json`` reads it), topology, participants and axes inferred
  unless ``overrides`` (the CLI's ``--overrides`` JSON) says them.
- :func:`import_placement`: a Mooncake placement as our :class:`PlacementManifest`, with
  the list of what ours has no place for.
- :func:`validate`: a Mooncake placement read by every Mooncake rule; its ids and counts.
- :func:`plan`: the transfer between two Mooncake documents in upstream's region form
  (``plan_placement_transfer``; from a Store manifest
  ``plan_stored_transfer_to_target_placement``).
- :func:`export_binding` / :func:`import_binding`: our one runtime binding of a placement
  and Mooncake's per-participant ``WeightRuntimeBindingManifest`` objects, in this project's JSON
  form of them (upstream has none: an array of objects whose keys are the dataclasses'
  fields); :func:`validate_bindings` checks them as upstream's ``validate_runtime_bindings``
  does, and :func:`upstream_bindings` builds upstream's own objects from that form.
- :class:`StorageManifest`: Mooncake Store's ``WeightManifest``, read strictly
  (:meth:`StorageManifest.from_json`) or built from a placement and the stored fragments'
  object locations (:meth:`StorageManifest.build`), written byte for byte as upstream
  writes it (its ``manifest_digest`` is sha256 of that text).

Every rejection is a :class:`ManifestError` with the code and JSON pointer the CLI reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

from . import _native
from ._manifests import PlacementManifest, RuntimeBindingManifest

__all__ = [
    "Imported",
    "ImportedBinding",
    "StorageManifest",
    "StoredFragment",
    "export_binding",
    "export_placement",
    "import_binding",
    "import_placement",
    "plan",
    "plan_json",
    "upstream_bindings",
    "validate",
    "validate_bindings",
    "validate_storage",
]

Text = Union[str, bytes]


def export_placement(placement: Union[PlacementManifest, Text], *, overrides: Optional[Text] = None) -> str:
    """``placement`` (a :class:`PlacementManifest` or its JSON) as Mooncake's canonical
    placement text; ``overrides`` is the JSON of ``mooncake export --overrides``
    (weight_generation, placement_set_id, sizes, participants, parallel_axes)."""
    return _native.mooncake_export(placement, overrides)


@dataclass(frozen=True)
class Imported:
    """A Mooncake document read as our placement, and what ours dropped from it."""

    placement: PlacementManifest
    dropped: list[str]


def import_placement(text: Text) -> Imported:
    """A Mooncake ``WeightPlacementManifest`` (its JSON text) as our placement."""
    canonical, dropped = _native.mooncake_import(text)
    return Imported(PlacementManifest.from_json(canonical), dropped)


def validate(text: Text) -> dict[str, Any]:
    """Read a Mooncake placement by every Mooncake rule; return its ``placement_id``,
    ``topology_id``, ``digest``, resource, revision, generation, placement set and counts
    (what ``mooncake validate --format json`` reports)."""
    return _native.mooncake_validate(text)


def plan(source: Text, target: Text) -> list[dict[str, Any]]:
    """The transfer from ``source`` (a Mooncake placement, or a Store manifest: it has a
    ``manifest_key`` member) to the Mooncake placement ``target``, as upstream's
    ``plan_placement_transfer`` regions (``tensor_id``, ``source_fragment_id``,
    ``target_fragment_id``, ``overlap_offset``, ``overlap_shape``, ``source_base_offset``,
    ``target_base_offset``, ``inner_bytes``, ``outer_loop_counts``, ``source_strides``,
    ``target_strides``), ordered by target fragment, then overlap offset; the weight
    generations must agree (``mooncake_generation_mismatch``). :func:`plan_json` gives the
    canonical JSON text."""
    import json

    regions: list[dict[str, Any]] = json.loads(plan_json(source, target))
    return regions


def plan_json(source: Text, target: Text) -> str:
    """:func:`plan`'s regions as a canonical JSON array (the ``mooncake.plan`` conformance
    operation's result)."""
    return _native.mooncake_plan(source, target)


def validate_storage(text: Text) -> tuple[str, str]:
    """A Store manifest read and validated as upstream's ``WeightManifest.from_json`` does:
    (its text as upstream writes it, its manifest_digest); :class:`StorageManifest` also
    imports it as our placement."""
    return _native.mooncake_storage_validate(text)


def export_binding(binding: Union[RuntimeBindingManifest, Text], placement: Text) -> str:
    """Our runtime binding (a :class:`RuntimeBindingManifest` or its JSON) of the Mooncake
    placement ``placement`` (its text, e.g. :func:`export_placement`'s) as Mooncake's
    per-participant bindings: the JSON array ``mooncake export-binding`` writes, each view
    contiguous with canonical strides and its storage the view itself."""
    return _native.mooncake_export_binding(binding, placement)


@dataclass(frozen=True)
class ImportedBinding:
    """Mooncake's bindings read as our one binding, and what ours dropped from them."""

    binding: RuntimeBindingManifest
    dropped: list[str]


def import_binding(bindings: Text, placement: Text) -> ImportedBinding:
    """Mooncake's per-participant bindings (the JSON array) of ``placement`` as our one
    binding of its import: validated by upstream's rules first; bindings that differ in
    instance, generation or lease are ``mooncake_binding_inexpressible``."""
    text, dropped = _native.mooncake_import_binding(bindings, placement)
    return ImportedBinding(RuntimeBindingManifest.from_json(text), dropped)


def validate_bindings(bindings: Text, placement: Text) -> None:
    """Check Mooncake's per-participant bindings (the JSON array) against ``placement``
    as upstream's ``validate_runtime_bindings`` does; raise on the first rule broken."""
    _native.mooncake_validate_bindings(bindings, placement)


def upstream_bindings(bindings: Text) -> tuple[Any, ...]:
    """Upstream's own ``WeightRuntimeBindingManifest`` objects (``mooncake.reshard``, which
    must be installed) from this project's JSON form of them."""
    import json

    from mooncake.reshard import weight  # type: ignore[import-untyped]

    out = []
    for doc in json.loads(bindings):
        fragments = tuple(
            weight.RuntimeBindingFragment(**{k: tuple(v) if isinstance(v, list) else v for k, v in f.items()})
            for f in doc["fragments"])
        top = {k: v for k, v in doc.items() if k not in ("fragments", "resource_kind")}
        out.append(weight.WeightRuntimeBindingManifest(**top, fragments=fragments))
    return tuple(out)


@dataclass(frozen=True)
class StoredFragment:
    """Where one stored box's bytes are: ``nbytes`` at ``object_offset`` of ``object_key``."""

    fragment_id: str
    tensor_id: str
    object_key: str
    object_offset: int
    nbytes: int


class StorageManifest:
    """A Mooncake Store ``WeightManifest``: its text, header, stored fragments and the
    stored layout as our placement (every fragment on rank 0), for planning a restore."""

    def __init__(self, facts: dict[str, Any]) -> None:
        #: The canonical text, upstream's ``to_json()``.
        self.text: str = facts["text"]
        self.namespace: str = facts["namespace"]
        self.resource_id: str = facts["resource_id"]
        self.revision: str = facts["revision"]
        self.weight_generation: int = facts["weight_generation"]
        self.group_id: str = facts["group_id"]
        self.manifest_key: str = facts["manifest_key"]
        self.created_at: str = facts["created_at"]
        #: sha256 hex of the text, upstream's ``manifest_digest``.
        self.digest: str = facts["manifest_digest"]
        self.fragments = [StoredFragment(*f) for f in facts["fragments"]]
        self.dropped: list[str] = facts["dropped"]
        self._placement_text: str = facts["placement"]
        self._placement: Optional[PlacementManifest] = None

    @classmethod
    def from_json(cls, text: Text) -> StorageManifest:
        """Read and validate a manifest as upstream's ``WeightManifest.from_json`` does."""
        return cls(_native.mooncake_storage_read(text))

    @classmethod
    def build(
        cls,
        placement: Union[PlacementManifest, Text],
        fragments: Sequence[tuple[str, str, Sequence[int], Sequence[int], str, int, int, Sequence[str]]],
        *,
        namespace: str,
        group_id: str,
        weight_generation: int,
        created_at: str,
        overrides: Optional[Text] = None,
    ) -> StorageManifest:
        """The manifest of ``fragments`` (fragment_id, tensor_id, global_offset,
        local_shape, object_key, object_offset, nbytes, aliases), one per stored box of
        the tensors of ``placement``, whose descriptors and axes are those of its Mooncake
        export. ``manifest_key`` is ``{group_id}/manifest`` and every object key must
        start with ``{group_id}/payload/``, as upstream requires."""
        text, _ = _native.mooncake_storage_write(
            placement, fragments, namespace=namespace, group_id=group_id,
            weight_generation=weight_generation, created_at=created_at, overrides=overrides)
        return cls.from_json(text)

    @property
    def placement(self) -> PlacementManifest:
        """The stored layout as our placement (``weight-manifest mooncake import``)."""
        if self._placement is None:
            self._placement = PlacementManifest.from_json(self._placement_text)
        return self._placement

    def to_json(self) -> str:
        """The manifest's text, byte for byte upstream's ``WeightManifest.to_json()``."""
        return self.text
