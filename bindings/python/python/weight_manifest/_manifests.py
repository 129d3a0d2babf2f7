"""The three manifests (§2.6–§2.8), the projections (§11) and bind (§12).

Construction, inventory reading, identity and every rule run in the Rust core; the
validated core value is kept on the instance (``_wm_core``, not a dataclass field, not
pickled: an unpickled manifest is validated again when first used).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Union

from . import _native
from ._types import (
    PlacementFragment,
    RuntimeBindingFragment,
    RuntimeFragment,
    TensorDescriptor,
)

_CORE = "_wm_core"
# The members a manifest made by the core (from_json, projections, bind, from_records)
# builds on first access: the core value answers ids, JSON and plans without them.
_LAZY = frozenset({"tensors", "fragments"})


def _state(manifest: Any) -> dict[str, Any]:
    _native.materialize(manifest)
    state = dict(manifest.__dict__)
    state.pop(_CORE, None)
    return state


def _lazy_member(manifest: Any, name: str) -> Any:
    """``__getattr__`` of the manifests: makes the lazy members once."""
    if name in _LAZY and _CORE in manifest.__dict__:
        _native.materialize(manifest)
        if name in manifest.__dict__:
            return manifest.__dict__[name]
    raise AttributeError(f"{type(manifest).__name__!r} object has no attribute {name!r}")


@dataclass(frozen=True)
class PlacementManifest:
    """Serialisable, address-free placement with a canonical content id (§2.6).

    Tensors are held canonical and sorted by tensor_id, fragments sorted by
    placement_fragment_id; ``placement_id`` is always the canonical id (§7.1).
    """

    model_id: str
    revision: str
    tensors: tuple[TensorDescriptor, ...]
    fragments: tuple[PlacementFragment, ...]
    placement_id: Optional[str] = None

    def __post_init__(self) -> None:
        _native.init_placement_manifest(self)

    def __getstate__(self) -> dict[str, Any]:
        return _state(self)

    def __getattr__(self, name: str) -> Any:
        return _lazy_member(self, name)

    @property
    def digest(self) -> str:
        """SHA-256 of :meth:`to_json`, 64 lowercase hex digits (§7.2)."""
        return _native.placement_digest(self)

    def to_json(self) -> str:
        """The canonical wire JSON (§6.1): ASCII, no whitespace."""
        return _native.placement_to_json(self)

    @classmethod
    def from_json(cls, value: Union[str, bytes]) -> PlacementManifest:
        """Parses placement manifest JSON strictly (§6.2); bytes must be UTF-8."""
        return _native.placement_from_json(cls, value)

    @classmethod
    def from_records(
        cls,
        *,
        model_id: str,
        revision: str,
        tensors: Iterable[Any],
        fragments: Iterable[Any],
        placement_id: Optional[str] = None,
    ) -> PlacementManifest:
        """The bulk path: a placement from plain records in one native call, validated as
        the placement document with these members (§6.2) would be, so a rejection points
        at the record, e.g. ``/fragments/5/nbytes``. Each record is a dict (with the
        document's member names), a tuple in the dataclass's field order, or an object
        with those attributes; a fragment's ``rank`` may be a dict, a ``(dp, tp, pp, ep)``
        tuple or a :class:`ParallelRank`. Optional members left out take the dataclass
        defaults. ``tensors`` and ``fragments`` of the result are built on first access."""
        return _native.placement_from_records(
            cls, model_id, revision, tensors, fragments, placement_id
        )

    @classmethod
    def from_runtime_inventory(cls, inventory: Any) -> PlacementManifest:
        """Reads a placement inventory (§10.5): a mapping or an attribute object whose
        records are mappings or attribute objects."""
        return _native.placement_from_inventory(cls, inventory)


@dataclass(frozen=True)
class RuntimeManifest:
    """A validated runtime snapshot, logical and physical (§2.7). Tensors are held
    canonical in manifest order; fragments keep manifest order and their owners."""

    model_id: str
    revision: str
    instance_id: str
    tensors: tuple[TensorDescriptor, ...]
    fragments: tuple[RuntimeFragment, ...]
    lease_id: Optional[str] = None
    placement_id: Optional[str] = None
    generation: Optional[int] = None

    def __post_init__(self) -> None:
        _native.init_runtime_manifest(self)

    def __getstate__(self) -> dict[str, Any]:
        return _state(self)

    def __getattr__(self, name: str) -> Any:
        return _lazy_member(self, name)

    def to_json(self) -> str:
        """The runtime manifest JSON (§9.1), canonical; owners are not serialised."""
        return _native.runtime_to_json(self)

    @classmethod
    def from_json(cls, value: Union[str, bytes]) -> RuntimeManifest:
        """Parses runtime manifest JSON strictly (§9.1)."""
        return _native.runtime_from_json(cls, value)

    @classmethod
    def from_runtime_inventory(
        cls,
        inventory: Any,
        *,
        owner_resolver: Optional[Callable[[Any], Any]] = None,
        address_semantics: Optional[str] = None,
    ) -> RuntimeManifest:
        """Reads a runtime inventory (§10.3). ``owner_resolver(record)`` gives each
        fragment's owner; ``address_semantics="view"`` allows non-zero offsets (§10.2)."""
        return _native.runtime_from_inventory(
            cls, inventory, owner_resolver, address_semantics
        )


@dataclass(frozen=True)
class RuntimeBindingManifest:
    """Ephemeral locations and lifetime fence for one placement (§2.8). Fragments are
    held sorted by placement_fragment_id."""

    model_id: str
    revision: str
    placement_id: str
    placement_digest: str
    instance_id: str
    generation: int
    lease_id: str
    fragments: tuple[RuntimeBindingFragment, ...]

    def __post_init__(self) -> None:
        _native.init_binding_manifest(self)

    def __getstate__(self) -> dict[str, Any]:
        return _state(self)

    def __getattr__(self, name: str) -> Any:
        return _lazy_member(self, name)

    def to_json(self) -> str:
        """The runtime binding manifest JSON (§9.2), canonical."""
        return _native.binding_to_json(self)

    @classmethod
    def from_json(cls, value: Union[str, bytes]) -> RuntimeBindingManifest:
        """Parses runtime binding manifest JSON strictly (§9.2)."""
        return _native.binding_from_json(cls, value)

    @classmethod
    def from_runtime_inventory(
        cls,
        inventory: Any,
        *,
        owner_resolver: Optional[Callable[[Any], Any]] = None,
        address_semantics: Optional[str] = None,
    ) -> RuntimeBindingManifest:
        """Reads a binding inventory (§10.4)."""
        return _native.binding_from_inventory(
            cls, inventory, owner_resolver, address_semantics
        )


def placement_manifest_from_runtime_manifest(
    manifest: RuntimeManifest,
    *,
    placement_id: Optional[str] = None,
) -> PlacementManifest:
    """Projects a runtime snapshot to its address-free placement (§11.1)."""
    return _native.project_placement(manifest, placement_id)


def runtime_binding_from_runtime_manifest(
    manifest: RuntimeManifest,
    *,
    placement_id: Optional[str] = None,
) -> RuntimeBindingManifest:
    """Projects a runtime snapshot to the binding of its placement (§11.2); owners are
    carried over."""
    return _native.project_binding(manifest, placement_id)


def bind_runtime_manifest(
    placement: PlacementManifest,
    binding: RuntimeBindingManifest,
) -> RuntimeManifest:
    """Binds physical locations to an exact placement (§12); owners are carried over."""
    return _native.bind(placement, binding)


_native.register(
    placement=PlacementManifest,
    runtime=RuntimeManifest,
    binding=RuntimeBindingManifest,
)
