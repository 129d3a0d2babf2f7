"""Type stub of the Rust extension module (``bindings/python/src``)."""

import os
from typing import Any, Callable, Optional, Sequence, TypedDict, TypeVar, Union

import numpy as np
import numpy.typing as npt

from ._manifests import PlacementManifest, RuntimeBindingManifest, RuntimeManifest
from ._types import ParallelRank

_T = TypeVar("_T")

class ManifestError(ValueError):
    """A contract rejection: the contract's message, its stable code and, where the
    contract defines one, the JSON pointer into the input (else None). An invalid_json
    rejection also names where the text breaks: the line (1-based), column (1-based, in
    characters) and byte offset (0-based) of the first offending byte (else None).
    ``detail`` is a dict of the numbers behind the rejection where there are some, else
    None: ``expected`` and ``got`` of a mismatch; ``axis``, ``offset``, ``extent`` and
    ``size`` of a box on one axis; ``other``, the pointer of the first of two elements (a
    duplicate, an overlap, whose ``offset`` and ``shape`` are the common region); a
    fields_mismatch's ``missing`` and ``unexpected`` keys and ``looks_like``, the document
    kind they are instead, with the command that reads it."""

    code: str
    path: Optional[str]
    line: Optional[int]
    column: Optional[int]
    offset: Optional[int]
    detail: Optional[dict[str, Any]]

class PlacementCore: ...
class RuntimeCore: ...
class BindingCore: ...

def register(*, placement: type, runtime: type, binding: type) -> None: ...
def effective_shard_dims(descriptor: Any) -> tuple[int, ...]: ...
def init_placement_manifest(this: Any) -> None: ...
def init_runtime_manifest(this: Any) -> None: ...
def init_binding_manifest(this: Any) -> None: ...
def materialize(this: Any) -> None: ...
def placement_from_json(cls: type[_T], text: Union[str, bytes]) -> _T: ...
def placement_from_records(
    cls: type[_T],
    model_id: Any,
    revision: Any,
    tensors: Any,
    fragments: Any,
    placement_id: Optional[Any] = None,
) -> _T: ...
def placement_to_json(manifest: Any) -> str: ...
def placement_digest(manifest: Any) -> str: ...
def runtime_to_json(manifest: Any) -> str: ...
def binding_to_json(manifest: Any) -> str: ...
def runtime_from_json(cls: type[_T], text: Union[str, bytes]) -> _T: ...
def binding_from_json(cls: type[_T], text: Union[str, bytes]) -> _T: ...
def read_inventory_json(text: Union[str, bytes], kind: str) -> Any: ...
def runtime_from_inventory(
    cls: type[_T],
    inventory: Any,
    owner_resolver: Optional[Callable[[Any], Any]] = None,
    address_semantics: Optional[Any] = None,
) -> _T: ...
def binding_from_inventory(
    cls: type[_T],
    inventory: Any,
    owner_resolver: Optional[Callable[[Any], Any]] = None,
    address_semantics: Optional[Any] = None,
) -> _T: ...
def placement_from_inventory(cls: type[_T], inventory: Any) -> _T: ...
def project_placement(
    manifest: RuntimeManifest, placement_id: Optional[Any] = None
) -> PlacementManifest: ...
def project_binding(
    manifest: RuntimeManifest, placement_id: Optional[Any] = None
) -> RuntimeBindingManifest: ...
def bind(placement: PlacementManifest, binding: RuntimeBindingManifest) -> RuntimeManifest: ...

DEFAULT_MAX_REGIONS: int
DEFAULT_MAX_SEGMENTS: int

_Document = Union[str, bytes, "os.PathLike[str]"]

class CoverageReport:
    """How the fragments of a placement cover its tensors (contract §16)."""

    @staticmethod
    def from_json(text: _Document) -> CoverageReport: ...
    def to_json(self) -> str: ...
    @property
    def is_complete(self) -> bool: ...
    @property
    def placement_id(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def tensors_complete(self) -> int: ...
    @property
    def tensors_with_gaps(self) -> int: ...
    @property
    def tensors_ambiguous(self) -> int: ...
    @property
    def tensors(self) -> list[dict[str, Any]]: ...
    def require_complete(self) -> None: ...

class PlanRegion:
    """One region of a plan: runs of ``run_bytes`` repeated over ``loops``."""

    @property
    def tensor_id(self) -> str: ...
    @property
    def source_fragment_id(self) -> str: ...
    @property
    def target_fragment_id(self) -> str: ...
    @property
    def transform(self) -> Optional[str]: ...
    @property
    def source_offset(self) -> int: ...
    @property
    def target_offset(self) -> int: ...
    @property
    def global_offset(self) -> tuple[int, ...]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def run_bytes(self) -> int: ...
    @property
    def loops(self) -> tuple[tuple[int, int, int], ...]: ...

class SourceRankStats(TypedDict):
    rank: Any
    regions: int
    bytes: int

class PlanStats(TypedDict):
    regions: int
    segments: int
    bytes: int
    sources: list[SourceRankStats]

class Plan:
    """A reshard plan (contract §17)."""

    @staticmethod
    def from_json(text: _Document) -> Plan: ...
    def to_json(self) -> str: ...
    @property
    def plan_id(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def source_placement_id(self) -> str: ...
    @property
    def target_placement_id(self) -> str: ...
    @property
    def regions(self) -> list[PlanRegion]: ...
    @property
    def stats(self) -> PlanStats: ...
    def __len__(self) -> int: ...

class Segments:
    """Contiguous segments of one worker pair's copies (numpy columns)."""

    @property
    def source(self) -> npt.NDArray[np.uint64]: ...
    @property
    def target(self) -> npt.NDArray[np.uint64]: ...
    @property
    def length(self) -> npt.NDArray[np.uint64]: ...
    @property
    def device(self) -> npt.NDArray[np.uint32]: ...
    @property
    def devices(self) -> list[tuple[str, str]]: ...
    @property
    def copy(self) -> npt.NDArray[np.uint32]: ...
    def __len__(self) -> int: ...

class CopyGroup:
    """The copies one (source worker, target worker) pair moves."""

    @property
    def source_worker_id(self) -> str: ...
    @property
    def target_worker_id(self) -> str: ...
    @property
    def transformed(self) -> bool: ...
    @property
    def bytes(self) -> int: ...
    @property
    def copies(self) -> list[dict[str, Any]]: ...
    def segments(self, max_segments: int = ...) -> Segments: ...
    def __len__(self) -> int: ...

class BoundPlan:
    """A plan bound to live runtimes (contract §17.4)."""

    @staticmethod
    def from_json(text: _Document) -> BoundPlan: ...
    def to_json(self) -> str: ...
    @property
    def bound_plan_id(self) -> str: ...
    @property
    def plan_id(self) -> str: ...
    @property
    def source(self) -> dict[str, Any]: ...
    @property
    def target(self) -> dict[str, Any]: ...
    @property
    def pairs(self) -> list[CopyGroup]: ...

def coverage(placement: Any) -> CoverageReport: ...
def plan(
    source: Any,
    target: Any,
    max_regions: int = ...,
    max_segments: int = ...,
    max_geometry_work: Optional[int] = None,
    spread: bool = False,
    source_hosts: Optional[dict[tuple[int, int, int, int], str]] = None,
    quantization: Optional[str] = None,
) -> Plan: ...
def bind_plan(
    plan: Any,
    source: Any,
    target: Any,
    source_generation: Optional[int] = None,
    target_generation: Optional[int] = None,
) -> BoundPlan: ...
def check_fence(bound: BoundPlan, side: str, held: Any) -> None: ...
# The safetensors adapter and live tensors (src/adapt.rs, src/tensor.rs).
def adapt_safetensors(
    path: Union[str, "os.PathLike[str]"],
    rules: Union[str, bytes, "os.PathLike[str]"],
    *,
    model_id: str,
    revision: str,
    tp: int = 1,
    pp: int = 1,
    ep: int = 1,
    dp: int = 1,
    dims: Optional[dict[str, int]] = None,
) -> tuple[PlacementManifest, dict[str, Any]]: ...
def adapt_fragment_id(tensor: str, rank: ParallelRank) -> str: ...
def tensor_facts(tensor: Any, pointer: Optional[str] = None) -> dict[str, Any]: ...

class ContentEdge(TypedDict):
    block: int
    bytes: str
    row: int
    start: int

class ContentPartial(TypedDict):
    sum: str
    edges: list[ContentEdge]

class ContentFragmentPartial(TypedDict):
    global_offset: Sequence[int]
    local_shape: Sequence[int]
    partial: ContentPartial

def content_partial(
    tensor: Any,
    tensor_id: str,
    global_shape: Sequence[int],
    global_offset: Sequence[int],
    block_elements: int,
) -> ContentPartial: ...
def content_combine(
    tensor_id: str,
    global_shape: Sequence[int],
    itemsize: int,
    block_elements: int,
    partials: list[ContentFragmentPartial],
) -> str: ...
def block_values(
    tensor: Any,
    tensor_id: str,
    global_shape: Sequence[int],
    global_offset: Sequence[int],
    block_elements: int,
) -> tuple[
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
]: ...
def content_blocks(
    tensor: Any,
    tensor_id: str,
    global_shape: Sequence[int],
    global_offset: Sequence[int],
    block_elements: int,
) -> tuple[ContentPartial, bytes]: ...
def content_values_at(tensor: Any, tensor_id: str, blocks: bytes) -> bytes: ...
def content_manifest_write(
    model_id: str,
    revision: str,
    generation: Optional[int],
    block_elements: int,
    tensors: Sequence[tuple[str, str, Sequence[int], int, str]],
) -> str: ...
def content_manifest_read(text: Union[str, bytes]) -> dict[str, Any]: ...
def content_manifest_verify(text: Union[str, bytes]) -> str: ...
def content_partial_of_bytes(
    data: bytes,
    tensor_id: str,
    global_shape: Sequence[int],
    itemsize: int,
    global_offset: Sequence[int],
    local_shape: Sequence[int],
    block_elements: int,
) -> ContentPartial: ...
def block_values_of_bytes(
    data: bytes,
    tensor_id: str,
    global_shape: Sequence[int],
    itemsize: int,
    global_offset: Sequence[int],
    local_shape: Sequence[int],
    block_elements: int,
) -> tuple[
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
]: ...
def mooncake_export(placement: Any, overrides: Optional[Union[str, bytes]] = None) -> str: ...
def mooncake_import(text: Union[str, bytes]) -> tuple[str, list[str]]: ...
def mooncake_validate(text: Union[str, bytes]) -> dict[str, Any]: ...
def mooncake_export_binding(binding: Any, placement: Union[str, bytes]) -> str: ...
def mooncake_import_binding(bindings: Union[str, bytes], placement: Union[str, bytes]) -> tuple[str, list[str]]: ...
def mooncake_validate_bindings(bindings: Union[str, bytes], placement: Union[str, bytes]) -> None: ...
def mooncake_plan(source: Union[str, bytes], target: Union[str, bytes]) -> str: ...
def mooncake_storage_write(
    placement: Any,
    fragments: Sequence[tuple[str, str, Sequence[int], Sequence[int], str, int, int, Sequence[str]]],
    *,
    namespace: str,
    group_id: str,
    weight_generation: int,
    created_at: str,
    overrides: Optional[Union[str, bytes]] = None,
) -> tuple[str, str]: ...
def mooncake_storage_read(text: Union[str, bytes]) -> dict[str, Any]: ...
def mooncake_storage_validate(text: Union[str, bytes]) -> tuple[str, str]: ...
