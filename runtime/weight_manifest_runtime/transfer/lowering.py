"""A pair's copies lowered to engine operations: runs merged, delta selection, staging of
runs that are contiguous on the remote side but split on the local one, and the rounds
that fit one staging half."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from weight_manifest import BoundPlan, CopyGroup
from weight_manifest.errors import manifest_error as _error
from .backends import Backend
from .defaults import DEFAULT_MAX_SEGMENTS, DEFAULT_STAGE_BELOW

__all__ = ["Changed", "Operation", "Packing", "Relocate", "Staging", "changed_from_wire", "packing", "pair_operations",
           "ranges_to_wire", "region_of", "select", "staging_rounds", "written_ranges"]


U64 = npt.NDArray[np.uint64]


@dataclass
class Operation:
    """One engine operation: local and remote first byte and length, and, when staged,
    the local pieces (local address, offset in the staged run, length) behind it."""

    local: int
    remote: int
    length: int
    pieces: Optional[list[tuple[int, int, int]]] = None
    #: The last copy of its pair whose bytes it moves (when the lowering was asked to
    #: relocate quantized copies, §17.8), else -1.
    upto: int = -1


Changed = Mapping[tuple[str, str], npt.NDArray[np.uint64]]


def ranges_to_wire(ranges: U64) -> str:
    """[start, end) ranges (a (k, 2) array) as a request carries them: base64 of
    little-endian uint64 pairs (a JSON list of k big integers costs several times more to
    write and read)."""
    return base64.b64encode(np.ascontiguousarray(ranges, dtype="<u8").tobytes()).decode("ascii")


def changed_from_wire(entries: Sequence[Any]) -> dict[tuple[str, str], U64]:
    """A request's ``changed`` (``[worker, device, ranges]`` entries, ranges as
    :func:`ranges_to_wire` writes them or as a list of [start, end]) as arrays;
    ``transfer_arguments_invalid`` for anything else."""
    out: dict[tuple[str, str], U64] = {}
    for index, entry in enumerate(entries):
        try:
            worker, device, ranges = entry
            if isinstance(ranges, str):
                raw = base64.b64decode(ranges, validate=True)
                if len(raw) % 16:
                    raise ValueError("not whole [start, end) pairs")
                array = np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(-1, 2)
            else:
                array = np.array(ranges, dtype=np.uint64).reshape(-1, 2)
        except (TypeError, ValueError, OverflowError) as error:
            raise _error("transfer_arguments_invalid", f"changed entry {index} is not [worker, device, ranges]: {error}",
                         f"/changed/{index}") from None
        out[(str(worker), str(device))] = array
    return out


def select(source: U64, target: U64, length: U64, device: npt.NDArray[np.uint32],
            devices: list[tuple[str, str]], worker: str, changed: Changed) -> tuple[U64, U64, U64, npt.NDArray[np.uint32]]:
    """The parts of the segments whose source bytes lie in ``changed[(worker, device)]``
    (sorted, disjoint [start, end) source address ranges, shape (k, 2))."""
    keep: list[tuple[U64, U64, U64, npt.NDArray[np.uint32]]] = []
    for index, (source_device, _) in enumerate(devices):
        ranges = changed.get((worker, source_device))
        if ranges is None or len(ranges) == 0:
            continue
        mine = np.flatnonzero(device == index)
        s, t, n = source[mine], target[mine], length[mine]
        first = np.searchsorted(ranges[:, 1], s, side="right")  # first range ending after s
        last = np.searchsorted(ranges[:, 0], s + n, side="left")  # ranges starting before the end
        count = np.maximum(last - first, 0)
        which = np.repeat(np.arange(len(mine)), count)
        k = np.repeat(first, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
        a = np.maximum(s[which], ranges[k, 0])
        b = np.minimum(s[which] + n[which], ranges[k, 1])
        keep.append((a, t[which] + (a - s[which]), b - a, np.full(len(a), index, dtype=np.uint32)))
    if not keep:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty, empty, np.zeros(0, dtype=np.uint32)
    return (np.concatenate([k[0] for k in keep]), np.concatenate([k[1] for k in keep]),
            np.concatenate([k[2] for k in keep]), np.concatenate([k[3] for k in keep]))


@dataclass
class Packing:
    """One pair's packed pieces (source and target addresses, lengths, offsets in the
    packed area) and the selected pieces that move directly (with their device index)."""

    source: U64
    target: U64
    length: U64
    offset: U64
    direct: tuple[U64, U64, U64, npt.NDArray[np.uint32]]

    @property
    def nbytes(self) -> int:
        return int(self.length.sum())


def packing(pair: CopyGroup, changed: Changed, stage_below: int, max_segments: int) -> Packing:
    """The pair's delta split into packed pieces (shorter than ``stage_below``) and direct
    ones; both sides of the pair compute it, so it must depend on nothing else."""
    lowered = pair.segments(max_segments)
    source, target, length, device = select(lowered.source, lowered.target, lowered.length, lowered.device,
                                            lowered.devices, pair.source_worker_id, changed)
    small = length < np.uint64(stage_below)
    n = length[small]
    offset = np.cumsum(n, dtype=np.uint64) - n
    big = ~small
    return Packing(source[small], target[small], n, offset, (source[big], target[big], length[big], device[big]))


#: A pushing source's local addresses of a pair's transformed copies (§17.8): per copy of
#: the pair, the address its source offsets are relative to (its quantized form), or None
#: when the pair has no transformed copy.
Relocate = Callable[[CopyGroup], Optional[U64]]


def pair_operations(group: CopyGroup, push: bool, stage_below: int, max_segments: int,
                    changed: Optional[Changed] = None, read_gaps: bool = False,
                    landing: Optional[int] = None,
                    relocate: Optional[Relocate] = None) -> tuple[list[Operation], int]:
    """The pair's operations and its merged run count. Runs contiguous on the remote side
    become one staged operation when their mean length is below ``stage_below``. With
    ``read_gaps`` (pull only: a backend whose remote side reads any span between two runs
    of one session, as a Store object does), runs separated by a forward gap no longer
    than the run after it join too, and the span is read whole (at most half of it is
    gap). With ``changed``, only the changed source bytes are moved (a delta update); with
    ``landing`` too (the pair's packed area on its passive side, :mod:`.delta`), the
    pieces shorter than ``stage_below`` move packed, as one staged operation. With
    ``relocate`` (push, no delta), a transformed copy's source offsets become addresses in
    its quantized form (§17.8), and each operation records the last copy it reads
    (``upto``)."""
    ops: list[Operation] = []
    packed = 0
    bases: Optional[U64] = None
    copy_of: Optional[npt.NDArray[np.uint32]] = None
    if changed is not None and landing is not None:
        k = packing(group, changed, stage_below, max_segments)
        source, target, length, device = k.direct
        if len(k.length):
            mine = k.source if push else k.target
            ops.append(Operation(0, landing, k.nbytes, list(zip(mine.tolist(), k.offset.tolist(), k.length.tolist()))))
            packed = len(k.length)
    else:
        lowered = group.segments(max_segments)
        source, target, length, device = lowered.source, lowered.target, lowered.length, lowered.device
        bases = relocate(group) if relocate is not None and changed is None else None
        if bases is not None:
            copy_of = lowered.copy
            source = source + bases[copy_of]
        if changed is not None:
            source, target, length, device = select(source, target, length, device, lowered.devices,
                                                    group.source_worker_id, changed)
    n = len(length)
    local: U64 = source if push else target
    remote: U64 = target if push else source
    if n == 0:
        return ops, packed
    # Group boundaries: where the remote side (or the device pair) is not contiguous.
    starts = np.ones(n, dtype=bool)
    if n > 1:
        ends = remote[:-1] + length[:-1]
        if read_gaps and not push:
            forward = remote[1:] >= ends
            gap = np.where(forward, remote[1:] - np.minimum(ends, remote[1:]), 0)
            starts[1:] = ~forward | (gap > length[1:]) | (device[:-1] != device[1:])
        else:
            starts[1:] = (ends != remote[1:]) | (device[:-1] != device[1:])
    bounds = np.append(np.flatnonzero(starts), n)
    loc, rem, lens = local.tolist(), remote.tolist(), length.tolist()
    upto = copy_of.tolist() if copy_of is not None else [-1] * n
    for g in range(len(bounds) - 1):
        a, b = int(bounds[g]), int(bounds[g + 1])
        if b - a == 1 or sum(lens[a:b]) >= stage_below * (b - a):
            ops.extend(Operation(loc[i], rem[i], lens[i], upto=upto[i]) for i in range(a, b))
            continue
        pieces = [(loc[i], rem[i] - rem[a], lens[i]) for i in range(a, b)]
        ops.append(Operation(0, rem[a], rem[b - 1] + lens[b - 1] - rem[a], pieces, max(upto[a:b])))
    return ops, n + packed


def written_ranges(bound: BoundPlan, target_worker: str, changed: Optional[Changed] = None,
                   max_segments: int = DEFAULT_MAX_SEGMENTS) -> U64:
    """The sorted, merged [start, end) target address ranges that ``bound`` writes on
    ``target_worker`` (with ``changed``, only those of a delta over it): what a target
    keeps the old bytes of before a delta lands (its undo log)."""
    spans: list[tuple[int, int]] = []
    for pair in bound.pairs:
        if pair.target_worker_id != target_worker:
            continue
        lowered = pair.segments(max_segments)
        source, target, length = lowered.source, lowered.target, lowered.length
        if changed is not None:
            source, target, length, _ = select(source, target, length, lowered.device, lowered.devices,
                                                pair.source_worker_id, changed)
        spans.extend(zip(target.tolist(), (target + length).tolist()))
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        elif b > a:
            merged.append([a, b])
    return np.array(merged, dtype=np.uint64).reshape(-1, 2)


def region_of(group: CopyGroup, op: Operation, push: bool) -> str:
    """The copy (tensor, fragments) a failed operation belongs to, for the message."""
    target_address = op.remote if push else (op.pieces[0][0] if op.pieces else op.local)
    for copy in group.copies:
        start = int(copy["target"]["address"])
        span = int(copy["run_bytes"]) + sum((int(l["count"]) - 1) * int(l["target_stride"]) for l in copy["loops"])
        if start <= target_address < start + span:
            return (
                f"tensor {copy['tensor_id']} ({copy['source_fragment_id']} -> "
                f"{copy['target_fragment_id']})"
            )
    return "an unknown region"


class Staging:
    """A registered local buffer in two halves that staged operations are packed into:
    while one half's round is on the wire, the other's is gathered (push) or scattered
    (pull). A worker keeps one for all its updates (:class:`weight_manifest_runtime.group.Member`
    registers it with its tensors); :func:`execute` makes one per call otherwise."""

    def __init__(self, backend: Backend, capacity: int) -> None:
        self.half = capacity // 2
        # Touched once here, so no round pays the page faults of fresh memory.
        self.buffer = np.zeros(max(capacity, 1), dtype=np.uint8)
        self.buffer.fill(1)
        self.address = int(self.buffer.ctypes.data)
        self.backend = backend
        backend.register(self.address, max(capacity, 1))

    def base(self, round_index: int) -> int:
        """The first byte of the half that round ``round_index`` uses."""
        return self.address + (round_index % 2) * self.half

    def close(self) -> None:
        self.backend.unregister(self.address)


def _piece_span(op: Operation, pieces: list[tuple[int, int, int]]) -> Operation:
    """The staged operation reading ``pieces`` (offsets into ``op``) of ``op``."""
    first = pieces[0][1]
    end = pieces[-1][1] + pieces[-1][2]
    return Operation(0, op.remote + first, end - first, [(a, o - first, n) for a, o, n in pieces], op.upto)


def _fit(op: Operation, capacity: int) -> Iterator[Operation]:
    """A staged operation cut at piece boundaries into operations of at most
    ``capacity`` staged bytes; a piece larger than that goes out unstaged."""
    if op.pieces is None or op.length <= capacity:
        yield op
        return
    chunk: list[tuple[int, int, int]] = []
    for address, offset, n in op.pieces:
        if n > capacity:
            if chunk:
                yield _piece_span(op, chunk)
                chunk = []
            yield Operation(address, op.remote + offset, n, upto=op.upto)
            continue
        if chunk and offset + n - chunk[0][1] > capacity:
            yield _piece_span(op, chunk)
            chunk = []
        chunk.append((address, offset, n))
    if chunk:
        yield _piece_span(op, chunk)


def staging_rounds(ops: list[Operation], capacity: int) -> Iterator[list[Operation]]:
    """The operations in rounds whose staged bytes fit one staging half (in order)."""
    batch: list[Operation] = []
    used = 0
    for whole in ops:
        for op in _fit(whole, capacity):
            if op.pieces is not None:
                if used + op.length > capacity:
                    yield batch
                    batch, used = [], 0
                used += op.length
            batch.append(op)
    if batch:
        yield batch
