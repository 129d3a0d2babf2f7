"""The value types of the contract (§2.1–§2.5): frozen dataclasses stored natively.

Each class is declared here as a frozen dataclass (its fields, types, defaults and
docs), and :func:`_native_dataclass` binds the name to the native class of the same
name, which takes this declaration's dataclass metadata: ``dataclasses.fields``,
``replace``, ``asdict``, ``typing.get_type_hints`` and pattern matching see the
dataclass declared here. The native class stores the fields and the core's checked
value of them, made once by the constructor (one native call, no Python frame), and
gives the dataclass's ``__eq__``, ``__hash__``, ``__repr__``, frozen ``__setattr__`` and
pickling. Instances are immutable for real: ``object.__setattr__`` fails on them too
(so a plain subclass works, but a ``@dataclass`` subclass adding fields does not).

A constructor keeps each argument that is already in normal form (an exact ``str``,
``int`` or ``None``, or a tuple of them, aliases in sorted order) and stores the core's
normal form of the others (plain ``int``s, tuples, sorted aliases). A rejection is a
:class:`ManifestError` (a ``ValueError``) with the contract's message, ``code`` and
``path``.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

from . import _native

_T = TypeVar("_T")

# What a declaration gives its native class; the dataclass's generated methods are not
# among them (the native class has its own).
_METADATA = (
    "__doc__",
    "__annotations__",
    "__dataclass_fields__",
    "__dataclass_params__",
    "__match_args__",
    "__replace__",
)


def _native_dataclass(declaration: type[_T]) -> type[_T]:
    """The native class named as ``declaration``, given its dataclass metadata and its
    properties. The native class's fields must be the declared ones, in order, with
    ``owner`` (and only it) left out of comparison and repr."""
    native: Any = getattr(_native, declaration.__name__)
    fields = dataclasses.fields(declaration)  # type: ignore[arg-type]
    declared = [(f.name, f.compare, f.repr) for f in fields]
    expected = [(name, name != "owner", name != "owner") for name in native._fields]
    if declared != expected:
        raise ImportError(f"{declaration.__name__}: the native fields {expected} are not the declared {declared}")
    for name, member in vars(declaration).items():
        if name in _METADATA or isinstance(member, property):
            setattr(native, name, member)
    native.__signature__ = inspect.signature(declaration)
    return native  # type: ignore[no-any-return]


@_native_dataclass
@dataclass(frozen=True)
class ParallelRank:
    """Routing coordinates of the rank that owns a fragment (§2.1)."""

    dp: int = 0
    tp: int = 0
    pp: int = 0
    ep: int = 0


@_native_dataclass
@dataclass(frozen=True)
class TensorDescriptor:
    """Logical tensor identity (§2.2). Keeps the caller's spelling of ``partition_dim``
    and ``shard_dims``; manifests hold the canonical form (§3)."""

    tensor_id: str
    global_shape: tuple[int, ...]
    dtype: str
    itemsize: int
    partition_dim: Optional[int]
    layout_fingerprint: str
    layer_id: Optional[int] = None
    expert_id: Optional[int] = None
    shard_dims: Optional[tuple[int, ...]] = None

    @property
    def effective_shard_dims(self) -> tuple[int, ...]:
        """The shard dims of the canonical form: ``shard_dims``, else
        ``(partition_dim,)``, else ``()`` (replicated)."""
        return _native.effective_shard_dims(self)


@_native_dataclass
@dataclass(frozen=True)
class RuntimeFragment:
    """One contiguous runtime view backing a logical box (§2.4). ``address`` points at
    the first byte of this view. ``owner`` is never compared, hashed or serialised."""

    fragment_id: str
    tensor_id: str
    global_offset: tuple[int, ...]
    local_shape: tuple[int, ...]
    address: int
    nbytes: int
    worker_id: str
    endpoint: str
    device: str
    rank: ParallelRank
    lease_generation: int
    owner: Any = field(default=None, compare=False, repr=False)
    aliases: tuple[str, ...] = ()
    placement_fragment_id: Optional[str] = None


@_native_dataclass
@dataclass(frozen=True)
class PlacementFragment:
    """An address-free logical box owned by one rank (§2.3)."""

    placement_fragment_id: str
    tensor_id: str
    global_offset: tuple[int, ...]
    local_shape: tuple[int, ...]
    nbytes: int
    rank: ParallelRank
    aliases: tuple[str, ...] = ()

    @property
    def fragment_id(self) -> str:
        """The fragment's id (its placement_fragment_id)."""
        return self.placement_fragment_id


@_native_dataclass
@dataclass(frozen=True)
class RuntimeBindingFragment:
    """The physical location of one placement fragment (§2.5)."""

    placement_fragment_id: str
    fragment_id: str
    address: int
    nbytes: int
    worker_id: str
    endpoint: str
    device: str
    owner: Any = field(default=None, compare=False, repr=False)
