"""Content digests of live tensors (contract: content digests), for verification and deltas.

A tensor's digest does not depend on how it is sharded: each holder hashes the blocks of
its own fragment in Rust, over the tensor's memory (:func:`partials`), and the partials
of any fragments that partition the tensor combine to the same digest (:func:`digests`);
identical boxes (replicas) count once. So a trainer holding TP8/PP4 and a rollout holding
TP4/PP8 compare digests tensor by tensor (:func:`compare`).

For a delta update, a worker keeps a :class:`Snapshot` of its fragments' block values and
later asks which source bytes changed since (:meth:`Snapshot.changed`): the (start, end)
address ranges :func:`weight_manifest.transfer.execute` takes as ``changed=``.

It protects against accidental corruption (flipped bits, torn or skipped writes, wrong
offsets), not against an adversary: the block hash is not cryptographic and the
combination is a modular sum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _native
from ._errors import manifest_error as _error
from .live import tensor_of

__all__ = ["DEFAULT_BLOCK_ELEMENTS", "Snapshot", "block_values_of_bytes", "compare", "digests", "partial_of_bytes",
           "partials", "verify_manifest"]

DEFAULT_BLOCK_ELEMENTS = 64


def partials(tensors: Mapping[Any, Any], inventory: Mapping[str, Any],
             block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> list[dict[str, Any]]:
    """The partial of each tensor a worker holds: ``inventory`` is its runtime inventory
    (:func:`weight_manifest.live.runtime_inventory`, which says where each tensor sits);
    each record has tensor_id, global_shape, itemsize, global_offset, local_shape and
    partial."""
    out = []
    for record in inventory["tensors"]:
        name = record["tensor_id"]
        partial = _native.content_partial(tensor_of(tensors, record), name, record["global_shape"],
                                          record["global_offset"], block_elements)
        out.append({
            "tensor_id": name,
            "global_shape": list(record["global_shape"]),
            "itemsize": int(record["itemsize"]),
            "global_offset": list(record["global_offset"]),
            "local_shape": list(record["local_shape"]),
            "partial": partial,
        })
    return out


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


U64 = npt.NDArray[np.uint64]


class Snapshot:
    """The block values of a worker's fragments at one moment (its base generation), to
    find the source bytes that changed since then."""

    def __init__(self, tensors: Mapping[Any, Any], inventory: Mapping[str, Any],
                 block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> None:
        self.block_elements = block_elements
        self.inventory = inventory
        self.values = {_box(r): self._values(tensors, r) for r in inventory["tensors"]}

    def _values(self, tensors: Mapping[Any, Any], record: Mapping[str, Any]) -> tuple[U64, U64, U64, U64, Any]:
        name = record["tensor_id"]
        tensor = tensor_of(tensors, record)
        rows, blocks, hi, lo = _native.block_values(tensor, name, record["global_shape"],
                                                    record["global_offset"], self.block_elements)
        edges = _native.content_partial(tensor, name, record["global_shape"], record["global_offset"],
                                        self.block_elements)["edges"]
        return rows, blocks, hi, lo, edges

    def changed(self, tensors: Mapping[Any, Any]) -> dict[tuple[str, str], U64]:
        """(worker id, device) -> the sorted, merged [start, end) address ranges of the
        blocks whose bytes differ from the snapshot's (whole blocks by value, a
        fragment's cut blocks by their bytes)."""
        ranges: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for record in self.inventory["tensors"]:
            name = record["tensor_id"]
            rows, blocks, hi, lo, edges = self.values[_box(record)]
            now = self._values(tensors, record)
            if len(now[0]) != len(rows):
                raise _error("live_inventory_mismatch", f"tensor {name} changed shape since its snapshot")
            differ = np.flatnonzero((now[2] != hi) | (now[3] != lo))
            spans = self._block_spans(record, rows[differ], blocks[differ])
            for old, new in zip(edges, now[4]):
                if old != new:
                    spans.extend(self._edge_spans(record, old))
            key = (str(record["worker_id"]), str(record["device"]))
            ranges.setdefault(key, []).extend(spans)
        return {key: _merge(spans) for key, spans in ranges.items()}

    def _geometry(self, record: Mapping[str, Any]) -> tuple[int, int, int, int, int, list[int], list[int], list[int]]:
        shape, offset, local = list(record["global_shape"]), list(record["global_offset"]), list(record["local_shape"])
        n, o_in, m_in = shape[-1], offset[-1], local[-1]
        return int(record["address"]), int(record["itemsize"]), n, o_in, m_in, shape, offset, local

    def _local_row(self, record: Mapping[str, Any], row: int) -> int:
        """The local row index of global row ``row`` (inside the fragment's box)."""
        _, _, _, _, _, shape, offset, local = self._geometry(record)
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

    def _block_spans(self, record: Mapping[str, Any], rows: U64, blocks: U64) -> list[tuple[int, int]]:
        address, itemsize, n, o_in, m_in, _, _, _ = self._geometry(record)
        b = self.block_elements
        spans = []
        for row, block in zip(rows.tolist(), blocks.tolist()):
            start = max(block * b, o_in) - o_in
            end = min((block + 1) * b, n, o_in + m_in) - o_in
            base = address + self._local_row(record, row) * m_in * itemsize
            spans.append((base + start * itemsize, base + end * itemsize))
        return spans

    def _edge_spans(self, record: Mapping[str, Any], edge: Mapping[str, Any]) -> list[tuple[int, int]]:
        address, itemsize, _, o_in, m_in, _, _, _ = self._geometry(record)
        base = address + self._local_row(record, int(edge["row"])) * m_in * itemsize
        start = (int(edge["start"]) - o_in) * itemsize
        return [(base + start, base + start + len(edge["bytes"]) // 2)]


def _box(record: Mapping[str, Any]) -> tuple[str, tuple[int, ...]]:
    """A record's box: its tensor and where the box starts (a worker may hold several
    boxes of one tensor)."""
    return str(record["tensor_id"]), tuple(record["global_offset"])


def _merge(spans: list[tuple[int, int]]) -> U64:
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return np.array(merged, dtype=np.uint64).reshape(-1, 2)
