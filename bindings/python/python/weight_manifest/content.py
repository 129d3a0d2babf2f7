"""Content digests of live tensors (contract: content digests), for verification and deltas.

A tensor's digest does not depend on how it is sharded: each holder hashes the blocks of
its own fragment in Rust, over the tensor's memory (:func:`partials`), and the partials
of any fragments that partition the tensor combine to the same digest (:func:`digests`);
identical boxes (replicas) count once. So a trainer holding TP8/PP4 and a rollout holding
TP4/PP8 compare digests tensor by tensor (:func:`compare`).

For a delta update, a worker keeps a :class:`Snapshot` of its fragments' block values and
later asks which source bytes changed since (:meth:`Snapshot.changed`): the (start, end)
address ranges :func:`weight_manifest_runtime.transfer.execute` takes as ``changed=``.

It protects against accidental corruption (flipped bits, torn or skipped writes, wrong
offsets), not against an adversary: the block hash is not cryptographic and the
combination is a modular sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from . import _native
from .errors import manifest_error as _error
from .live import tensor_of

__all__ = ["DEFAULT_BLOCK_ELEMENTS", "Snapshot", "block_values_at", "block_values_of_bytes", "check", "compare",
           "digests", "partial_of_bytes", "partials", "read_manifest", "verify_manifest", "write_manifest"]

DEFAULT_BLOCK_ELEMENTS = 64


def partials(tensors: Mapping[Any, Any], inventory: Mapping[str, Any],
             block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> list[dict[str, Any]]:
    """The partial of each tensor a worker holds: ``inventory`` is its runtime inventory
    (:func:`weight_manifest.live.runtime_inventory`, which says where each tensor sits);
    each record has tensor_id, global_shape, itemsize, global_offset, local_shape and
    partial."""
    return [
        _partial_record(record, _native.content_partial(tensor_of(tensors, record), record["tensor_id"],
                                                        record["global_shape"], record["global_offset"],
                                                        block_elements))
        for record in inventory["tensors"]
    ]


def _partial_record(record: Mapping[str, Any], partial: Any) -> dict[str, Any]:
    return {
        "tensor_id": record["tensor_id"],
        "global_shape": list(record["global_shape"]),
        "itemsize": int(record["itemsize"]),
        "global_offset": list(record["global_offset"]),
        "local_shape": list(record["local_shape"]),
        "partial": partial,
    }


def partial_of_bytes(data: bytes, tensor_id: str, global_shape: Sequence[int], itemsize: int,
                     global_offset: Sequence[int], local_shape: Sequence[int],
                     block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> _native.ContentPartial:
    """The partial of the fragment (``global_offset``, ``local_shape``) whose row-major
    bytes are ``data`` (bytes received into a buffer, read from a file): ``{"sum", "edges"}``
    as :func:`partials` gives it. ``data`` must hold exactly product(local_shape) x itemsize
    bytes (``content_buffer_invalid``)."""
    return _native.content_partial_of_bytes(bytes(data), tensor_id, global_shape, itemsize, global_offset,
                                            local_shape, block_elements)


def block_values_of_bytes(data: bytes, tensor_id: str, global_shape: Sequence[int], itemsize: int,
                          global_offset: Sequence[int], local_shape: Sequence[int],
                          block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> list[tuple[int, int, int]]:
    """(row, block, value) of each block wholly inside the fragment whose row-major bytes
    are ``data``, by row, then block (the values :class:`Snapshot` compares)."""
    rows, blocks, hi, lo = _native.block_values_of_bytes(bytes(data), tensor_id, global_shape, itemsize,
                                                         global_offset, local_shape, block_elements)
    return [(int(r), int(b), (int(h) << 64) | int(v)) for r, b, h, v in zip(rows, blocks, hi, lo)]


def block_values_at(tensor: Any, tensor_id: str, offsets: npt.ArrayLike, lengths: npt.ArrayLike,
                    rows: npt.ArrayLike, blocks: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """The values of some blocks of a live fragment (host memory, row-major contiguous),
    hashed in one native call: block i is the ``lengths[i]`` bytes at byte ``offsets[i]``
    of ``tensor``'s memory, block ``blocks[i]`` of global row ``rows[i]`` of tensor
    ``tensor_id`` (contract §19.1). A (k, 2) array of each value's (low, high) 64 bits,
    as :class:`Snapshot` keeps them; ``content_buffer_invalid`` for a block outside the
    memory. A target that kept its fragments' values re-hashes only the blocks a delta
    wrote with it."""
    packed = np.stack([np.asarray(a, dtype=np.uint64).reshape(-1) for a in (offsets, lengths, rows, blocks)],
                      axis=1)
    raw = _native.content_values_at(tensor, tensor_id, np.ascontiguousarray(packed).tobytes())
    return np.frombuffer(raw, dtype=np.uint64).reshape(-1, 2)


def write_manifest(model_id: str, revision: str, generation: Optional[int], block_elements: int,
                   tensors: Sequence[tuple[str, str, Sequence[int], int, str]]) -> str:
    """The canonical text of a content manifest (contract: content digests) of ``tensors``,
    each ``(tensor_id, dtype, global_shape, itemsize, digest)``."""
    return _native.content_manifest_write(model_id, revision, generation, block_elements, tensors)


def read_manifest(text: str | bytes) -> dict[str, Any]:
    """A content manifest read strictly (its digests recombined and checked), as a dict."""
    return _native.content_manifest_read(text)


def verify_manifest(text: str | bytes) -> str:
    """Reads a content manifest strictly and recombines its fragments' partials to each
    tensor's digest (``content_digest_mismatch`` naming the first that differs); returns
    its canonical text."""
    return _native.content_manifest_verify(text)


def digests(records: Iterable[Mapping[str, Any]], block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> dict[str, str]:
    """Each tensor's digest from the partials of fragments that partition it (from any
    number of workers; replicas, i.e. identical boxes, count once)."""
    by_tensor: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_tensor.setdefault(str(record["tensor_id"]), []).append(record)
    out = {}
    for name in sorted(by_tensor):
        group = by_tensor[name]
        first = group[0]
        fragments: list[_native.ContentFragmentPartial] = [
            {"global_offset": r["global_offset"], "local_shape": r["local_shape"], "partial": r["partial"]}
            for r in group
        ]
        out[name] = _native.content_combine(name, first["global_shape"], first["itemsize"], block_elements, fragments)
    return out


def compare(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """The tensors whose digests differ or that one side lacks, sorted."""
    return sorted(n for n in set(expected) | set(actual) if expected.get(n) != actual.get(n))


def check(expected: Mapping[str, str], got: Mapping[str, str], *, code: str, when: str, against: str, outcome: str,
          on: str = "targets", holders: Optional[Callable[[str], Sequence[str]]] = None) -> list[str]:
    """The one content check of the runtime (an update's verify, a rollback's, a restore's,
    a revision's): raise ``code`` naming every tensor whose digest in ``got`` (what the
    ``on`` hold) differs from ``expected`` (``against``'s), at most five and how many more,
    with ``holders`` of the first when given, then ``outcome``; or naming the first tensor
    of ``expected`` that ``got`` lacks. Else the tensors checked, sorted."""
    differ = [n for n in compare(expected, got) if n in got]
    if differ:
        shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
        held = f" (held by {', '.join(holders(differ[0])) or 'no worker'})" if holders is not None else ""
        raise _error(code, f"{when}, tensor {shown} differs on the {on} from {against} content digest{held}; {outcome}")
    missing = [n for n in expected if n not in got]
    if missing:
        raise _error(code, f"the {on} hold no fragment of tensor {missing[0]}; {outcome}")
    return sorted(expected)


U64 = npt.NDArray[np.uint64]


class Snapshot:
    """The block values of a worker's fragments at one moment (its base generation), to
    find the source bytes that changed since then. Each look hashes the fragments' bytes
    once (``content_blocks``): their block values and their partials come from the same
    pass."""

    def __init__(self, tensors: Mapping[Any, Any], inventory: Mapping[str, Any],
                 block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> None:
        self.block_elements = block_elements
        self.inventory = inventory
        self.values: dict[tuple[str, tuple[int, ...]], tuple[U64, list[Any]]] = {}
        #: The partials of the bytes last looked at (:func:`partials`' records).
        self.partials: list[dict[str, Any]] = []
        # The block values of the last look (:meth:`changed`), for :meth:`advance`.
        self._looked: dict[tuple[str, tuple[int, ...]], tuple[U64, list[Any]]] = {}
        for record in inventory["tensors"]:
            partial, values = self._look(tensors, record)
            self.values[_box(record)] = (values, partial["edges"])
            self.partials.append(_partial_record(record, partial))

    def _look(self, tensors: Mapping[Any, Any], record: Mapping[str, Any]) -> tuple[Any, U64]:
        partial, raw = _native.content_blocks(tensor_of(tensors, record), record["tensor_id"],
                                              record["global_shape"], record["global_offset"],
                                              self.block_elements)
        return partial, np.frombuffer(raw, dtype=np.uint64).reshape(-1, 2)

    def changed(self, tensors: Mapping[Any, Any]) -> dict[tuple[str, str], U64]:
        """(worker id, device) -> the sorted, merged [start, end) address ranges of the
        blocks whose bytes differ from the snapshot's (whole blocks by value, a
        fragment's cut blocks by their bytes). :attr:`partials` are then those of the
        bytes looked at: the digest the delta's targets are verified against."""
        ranges: dict[tuple[str, str], list[U64]] = {}
        partials = []
        looked: dict[tuple[str, tuple[int, ...]], tuple[U64, list[Any]]] = {}
        for record in self.inventory["tensors"]:
            name = record["tensor_id"]
            values, edges = self.values[_box(record)]
            partial, now = self._look(tensors, record)
            if now.shape != values.shape or len(partial["edges"]) != len(edges):
                raise _error("live_inventory_mismatch", f"tensor {name} changed shape since its snapshot")
            spans = [self._block_spans(record, np.flatnonzero((now != values).any(axis=1)), len(now))]
            for old, new in zip(edges, partial["edges"]):
                if old != new:
                    spans.append(self._edge_span(record, old))
            key = (str(record["worker_id"]), str(record["device"]))
            ranges.setdefault(key, []).extend(spans)
            partials.append(_partial_record(record, partial))
            looked[_box(record)] = (now, partial["edges"])
        self.partials, self._looked = partials, looked
        return {key: _merge(spans) for key, spans in ranges.items()}

    def advance(self) -> bool:
        """Make the bytes of the last :meth:`changed` look the base (after the delta that
        sent them committed): no second pass, and the base is what was sent even if the
        tensors moved on since. False (nothing changed) when there was no look."""
        if not self._looked:
            return False
        self.values, self._looked = self._looked, {}
        return True

    def _geometry(self, record: Mapping[str, Any]) -> tuple[int, int, int, int, int, list[int], list[int]]:
        # A scalar is one row of one element.
        shape = list(record["global_shape"]) or [1]
        offset = list(record["global_offset"]) or [0]
        local = list(record["local_shape"]) or [1]
        return int(record["address"]), int(record["itemsize"]), shape[-1], offset[-1], local[-1], shape, local

    def _block_spans(self, record: Mapping[str, Any], which: npt.NDArray[np.intp], count: int) -> U64:
        """The address ranges of the whole blocks at positions ``which`` of the fragment's
        ``count`` block values (by local row, then block: the same whole blocks in every
        row)."""
        address, itemsize, n, o_in, m_in, _, local = self._geometry(record)
        b = self.block_elements
        first = -(-o_in // b)
        end = o_in + m_in
        last = -(-n // b) if end == n else end // b
        per_row = max(last - first, 0)
        if per_row * math.prod(local[:-1]) != count:
            raise _error("live_inventory_mismatch",
                         f"tensor {record['tensor_id']}: its block values do not fit its box")
        if len(which) == 0 or per_row == 0:
            return np.zeros((0, 2), dtype=np.uint64)
        i = which.astype(np.uint64)
        row, block = i // np.uint64(per_row), np.uint64(first) + i % np.uint64(per_row)
        base = np.uint64(address) + row * np.uint64(m_in * itemsize)
        start = base + (block * np.uint64(b) - np.uint64(o_in)) * np.uint64(itemsize)
        stop = base + (np.minimum((block + np.uint64(1)) * np.uint64(b), np.uint64(n)) - np.uint64(o_in)) * np.uint64(itemsize)
        return np.stack([start, stop], axis=1)

    def _local_row(self, record: Mapping[str, Any], row: int) -> int:
        """The local row index of global row ``row`` (inside the fragment's box)."""
        _, _, _, _, _, shape, local = self._geometry(record)
        offset = list(record["global_offset"]) or [0]
        outer = shape[:-1]
        index = []
        for extent in reversed(outer):
            index.append(row % extent)
            row //= extent
        index.reverse()
        local_row = 0
        for i, extent in zip(range(len(outer)), local[:-1]):
            local_row = local_row * extent + (index[i] - offset[i])
        return local_row

    def _edge_span(self, record: Mapping[str, Any], edge: Mapping[str, Any]) -> U64:
        address, itemsize, _, o_in, m_in, _, _ = self._geometry(record)
        base = address + self._local_row(record, int(edge["row"])) * m_in * itemsize
        start = (int(edge["start"]) - o_in) * itemsize
        return np.array([[base + start, base + start + len(edge["bytes"]) // 2]], dtype=np.uint64)


def _box(record: Mapping[str, Any]) -> tuple[str, tuple[int, ...]]:
    """A record's box: its tensor and where the box starts (a worker may hold several
    boxes of one tensor)."""
    return str(record["tensor_id"]), tuple(record["global_offset"])


def _merge(spans: list[U64]) -> U64:
    """Sorted, disjoint [start, end) ranges from (k, 2) arrays of ranges."""
    if not spans:
        return np.zeros((0, 2), dtype=np.uint64)
    flat = np.concatenate(spans).reshape(-1, 2)
    flat = flat[np.argsort(flat[:, 0], kind="stable")]
    merged: list[list[int]] = []
    for a, b in flat.tolist():
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return np.array(merged, dtype=np.uint64).reshape(-1, 2)
