"""The value types of the contract (§2.1–§2.5) as frozen dataclasses.

Each ``__init__`` hands its arguments to the Rust core in one call: the core runs the
type's checks and stores the fields on the instance, as given when they are already in
normal form, else normalised (plain ``int``s, tuples, sorted aliases). The classes stay
dataclasses (``dataclasses.fields``, ``replace``, equality, hashing, repr); only the
generated ``__init__`` is replaced (``init=False``), since it would set every field once
more. A rejection is a :class:`ManifestError` (a ``ValueError``) with the contract's
message, ``code`` and ``path``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from . import _native


@dataclass(frozen=True, init=False)
class ParallelRank:
    """Routing coordinates of the rank that owns a fragment (§2.1)."""

    dp: int = 0
    tp: int = 0
    pp: int = 0
    ep: int = 0

    def __init__(self, dp: int = 0, tp: int = 0, pp: int = 0, ep: int = 0) -> None:
        _native.new_parallel_rank(self, dp, tp, pp, ep)


@dataclass(frozen=True, init=False)
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

    def __init__(
        self,
        tensor_id: str,
        global_shape: tuple[int, ...],
        dtype: str,
        itemsize: int,
        partition_dim: Optional[int],
        layout_fingerprint: str,
        layer_id: Optional[int] = None,
        expert_id: Optional[int] = None,
        shard_dims: Optional[tuple[int, ...]] = None,
    ) -> None:
        _native.new_tensor_descriptor(
            self,
            tensor_id,
            global_shape,
            dtype,
            itemsize,
            partition_dim,
            layout_fingerprint,
            layer_id,
            expert_id,
            shard_dims,
        )

    @property
    def effective_shard_dims(self) -> tuple[int, ...]:
        """The shard dims of the canonical form: ``shard_dims``, else
        ``(partition_dim,)``, else ``()`` (replicated)."""
        return _native.effective_shard_dims(self)


@dataclass(frozen=True, init=False)
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

    def __init__(
        self,
        fragment_id: str,
        tensor_id: str,
        global_offset: tuple[int, ...],
        local_shape: tuple[int, ...],
        address: int,
        nbytes: int,
        worker_id: str,
        endpoint: str,
        device: str,
        rank: ParallelRank,
        lease_generation: int,
        owner: Any = None,
        aliases: tuple[str, ...] = (),
        placement_fragment_id: Optional[str] = None,
    ) -> None:
        _native.new_runtime_fragment(
            self,
            fragment_id,
            tensor_id,
            global_offset,
            local_shape,
            address,
            nbytes,
            worker_id,
            endpoint,
            device,
            rank,
            lease_generation,
            owner,
            aliases,
            placement_fragment_id,
        )


@dataclass(frozen=True, init=False)
class PlacementFragment:
    """An address-free logical box owned by one rank (§2.3)."""

    placement_fragment_id: str
    tensor_id: str
    global_offset: tuple[int, ...]
    local_shape: tuple[int, ...]
    nbytes: int
    rank: ParallelRank
    aliases: tuple[str, ...] = ()

    def __init__(
        self,
        placement_fragment_id: str,
        tensor_id: str,
        global_offset: tuple[int, ...],
        local_shape: tuple[int, ...],
        nbytes: int,
        rank: ParallelRank,
        aliases: tuple[str, ...] = (),
    ) -> None:
        _native.new_placement_fragment(
            self,
            placement_fragment_id,
            tensor_id,
            global_offset,
            local_shape,
            nbytes,
            rank,
            aliases,
        )

    @property
    def fragment_id(self) -> str:
        """The fragment's id (its placement_fragment_id)."""
        return self.placement_fragment_id


@dataclass(frozen=True, init=False)
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

    def __init__(
        self,
        placement_fragment_id: str,
        fragment_id: str,
        address: int,
        nbytes: int,
        worker_id: str,
        endpoint: str,
        device: str,
        owner: Any = None,
    ) -> None:
        _native.new_binding_fragment(
            self,
            placement_fragment_id,
            fragment_id,
            address,
            nbytes,
            worker_id,
            endpoint,
            device,
            owner,
        )
