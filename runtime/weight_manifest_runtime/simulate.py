"""Predict a weight update's time before renting the cluster: the executor's own schedule
(:mod:`weight_manifest_runtime.transfer.schedule`) run on a modelled network (docs/simulate.md).

A model (:class:`Model`, from ``simulate_presets.json`` or a JSON file of the same form)
says how many GPUs a host has, its NICs and their rate, the intra-host rate, and the
engine's constants. :func:`simulate` takes a bound plan, asks the schedule which
operations each executing worker issues (pairs one after another, rounds, batches, the
in-flight bound), and runs a fluid simulation: each executing worker's current pair is a
flow over its links (the source GPU's NIC out and the target GPU's NIC in, or both GPUs'
intra-host links), the links shared max-min fairly, each flow capped by what its engine
can issue (its operations and batches at the engine's cost) and a pair starting only
after its start latency. The answer: time per phase (plan and bind as measured here,
transfer, verify, commit), the busiest links with their bytes, the floor (the busiest
link's bytes over its rate) and the ratio to it; optionally a picture of link
utilisation over time (:func:`svg`). A quantized plan's sources (contract §17.8) quantize the
blocks a pair sends before sending it, at the model's ``quantize_gib_per_s``.

    python -m weight_manifest_runtime.simulate --bound bound.json --model h100-8x400g
    python -m weight_manifest_runtime.simulate --plan plan.json --source-binding s.json --target-binding t.json --delta 0.02
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from weight_manifest import BoundPlan
from .transfer.defaults import (
    DEFAULT_BATCH_SEGMENTS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_SEGMENTS,
    DEFAULT_STAGE_BELOW,
    DEFAULT_STAGING_BYTES,
)
from .transfer.lowering import Changed
from .transfer.options import ExecuteOptions
from .transfer.schedule import PairSchedule, Schedule, batches, schedule

__all__ = ["Engine", "Model", "Prediction", "delta_changed", "host_map", "load_model", "main", "presets",
           "quantize_bytes", "simulate", "svg"]

PRESETS = Path(__file__).with_name("simulate_presets.json")
GBIT = 1e9 / 8


@dataclass(frozen=True)
class Engine:
    """The transfer engine's costs on one worker."""

    op_seconds: float = 2e-6
    batch_seconds: float = 2e-5
    pair_seconds: float = 2e-4
    stream_gbit: float = 400.0
    staging_gib_per_s: float = 200.0
    #: CPU seconds per byte moved, counted against the machine's cores (emulated hosts).
    byte_seconds: float = 0.0


@dataclass(frozen=True)
class Model:
    """Hosts, links and engine (the fields of a preset, docs/simulate.md)."""

    gpus_per_host: int = 8
    nics_per_host: int = 8
    nic_gbit: float = 400.0
    intra_host_gbit: float = 3600.0
    #: Cores shared by every worker's engine (one emulating machine), None: each worker
    #: has its own.
    machine_cores: Optional[float] = None
    engine: Engine = field(default_factory=Engine)
    hash_gib_per_s: float = 20.0
    rpc_seconds: float = 0.005
    #: bfloat16 bytes one source GPU quantizes into block FP8 per second (§17.8), in GiB/s;
    #: None: a quantized plan's sources quantize in no time.
    quantize_gib_per_s: Optional[float] = None
    name: str = "custom"
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("name", "gpus_per_host", "nics_per_host", "nic_gbit", "intra_host_gbit",
                                             "machine_cores", "hash_gib_per_s", "rpc_seconds", "quantize_gib_per_s")}
        out["engine"] = dict(self.engine.__dict__)
        return out


def presets(path: Union[str, Path, None] = None) -> dict[str, Model]:
    """The models of a presets file (default: the bundled ``simulate_presets.json``)."""
    document = json.loads(Path(path or PRESETS).read_text())
    return {name: _model(name, entry) for name, entry in document["presets"].items()}


def _model(name: str, entry: Mapping[str, Any]) -> Model:
    engine = Engine(**{k: float(v) for k, v in entry.get("engine", {}).items()})
    known = {"gpus_per_host", "nics_per_host", "nic_gbit", "intra_host_gbit", "machine_cores", "hash_gib_per_s",
             "rpc_seconds", "quantize_gib_per_s", "description"}
    unknown = set(entry) - known - {"engine"}
    if unknown:
        raise ValueError(f"model {name}: unknown member {sorted(unknown)[0]!r}")
    values: dict[str, Any] = {k: entry[k] for k in known if k in entry}
    for k in ("gpus_per_host", "nics_per_host"):
        if k in values:
            values[k] = int(values[k])
            if values[k] < 1:
                raise ValueError(f"model {name}: {k} must be at least 1")
    return Model(name=name, engine=engine, **values)


def load_model(spec: str, **overrides: Any) -> Model:
    """A preset's name, or a JSON file holding one model (a preset's members) or a presets
    file (``name`` picks one: ``file.json:name``); ``overrides`` replace members (engine
    members by their own names)."""
    path, pick = spec, ""
    if ".json:" in spec:
        path, _, pick = spec.rpartition(":")
    if Path(path).is_file():
        document = json.loads(Path(path).read_text())
        if "presets" in document:
            models = {n: _model(n, e) for n, e in document["presets"].items()}
            model = models[pick] if pick else next(iter(models.values()))
        else:
            model = _model(Path(path).stem, document)
    else:
        known = presets()
        if spec not in known:
            raise ValueError(f"no preset {spec!r} (presets: {', '.join(sorted(known))})")
        model = known[spec]
    engine_fields = set(Engine.__dataclass_fields__)
    engine = replace(model.engine, **{k: v for k, v in overrides.items() if k in engine_fields and v is not None})
    rest = {k: v for k, v in overrides.items() if k not in engine_fields and v is not None}
    return replace(model, engine=engine, **rest)


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


#: Each side's worker -> (host, GPU index): source and target worker ids are names within
#: their own side (a trainer's ``worker-0`` is not an inference engine's ``worker-0``).
Placed = dict[str, dict[str, tuple[str, int]]]

#: What a caller gives for hosts: worker -> host name (GPU indices in natural order of the
#: host's workers) or [host, GPU], for both sides, or {"source": ..., "target": ...}.
HostsInput = Mapping[str, Any]


def host_map(bound: BoundPlan, model: Model) -> Placed:
    """Each worker's (host, GPU index) when none is given: each side's workers in natural
    order of their ids, ``gpus_per_host`` to a host (sources on hosts s0, s1, ..., targets
    on t0, t1, ...)."""
    out: Placed = {}
    for side, key in (("source", "source_worker_id"), ("target", "target_worker_id")):
        workers = sorted({getattr(p, key) for p in bound.pairs}, key=_natural)
        out[side] = {w: (f"{side[0]}{i // model.gpus_per_host}", i % model.gpus_per_host)
                     for i, w in enumerate(workers)}
    return out


def delta_changed(bound: BoundPlan, fraction: float, block_bytes: int = 64 << 10, seed: int = 0,
                  max_segments: int = DEFAULT_MAX_SEGMENTS) -> Changed:
    """A delta of ``fraction`` of each source device's read bytes, in blocks of
    ``block_bytes`` chosen at random (seeded): the ``changed`` ranges the executor takes."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for pair in bound.pairs:
        seg = pair.segments(max_segments)
        for index, (device, _) in enumerate(seg.devices):
            mine = seg.device == index
            starts, lengths = seg.source[mine], seg.length[mine]
            spans.setdefault((pair.source_worker_id, device), []).extend(zip(starts.tolist(), (starts + lengths).tolist()))
    rng = np.random.default_rng(seed)
    changed: dict[tuple[str, str], Any] = {}
    for key, ranges in sorted(spans.items()):
        merged: list[list[int]] = []
        for a, b in sorted(ranges):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        blocks: list[np.ndarray] = []
        for a, b in merged:
            count = -(-(b - a) // block_bytes)
            pick = np.flatnonzero(rng.random(count) < fraction).astype(np.uint64)
            starts = np.uint64(a) + pick * np.uint64(block_bytes)
            blocks.append(np.stack([starts, np.minimum(starts + np.uint64(block_bytes), np.uint64(b))], axis=1))
        out = np.concatenate(blocks) if blocks else np.zeros((0, 2), dtype=np.uint64)
        changed[key] = out.astype(np.uint64).reshape(-1, 2)
    return changed


@dataclass
class Flow:
    """One pair on the wire in the simulation."""

    pair: PairSchedule
    links: tuple[Any, ...]
    remaining: float
    cap: float
    start: float
    rate: float = 0.0
    #: What a byte/s of the flow uses of each link (1 for a link's bandwidth; CPU
    #: seconds per byte for the machine's cores); empty: 1 each.
    weights: tuple[float, ...] = ()


@dataclass
class Prediction:
    """What :func:`simulate` predicts."""

    mode: str
    bytes: int
    wire_bytes: int
    operations: int
    batches: int
    pairs: int
    phases: dict[str, Optional[float]]
    transfer_seconds: float
    floor_seconds: float
    links: list[dict[str, Any]]
    #: (start, end, {link: rate in bytes/s}) intervals, for :func:`svg`.
    timeline: list[tuple[float, float, dict[str, float]]] = field(repr=False, default_factory=list)
    capacity: dict[str, float] = field(repr=False, default_factory=dict)
    #: bfloat16 bytes the sources quantize (§17.8), and the largest one source spends on it.
    quantized_bytes: int = 0
    quantize_seconds: float = 0.0

    @property
    def ratio(self) -> float:
        return self.transfer_seconds / self.floor_seconds if self.floor_seconds > 0 else math.inf

    def to_dict(self, top: int = 5) -> dict[str, Any]:
        return {"mode": self.mode, "bytes": self.bytes, "wire_bytes": self.wire_bytes, "operations": self.operations,
                "batches": self.batches, "pairs": self.pairs,
                "phases": {k: None if v is None else round(v, 6) for k, v in self.phases.items()},
                "transfer_seconds": round(self.transfer_seconds, 6), "floor_seconds": round(self.floor_seconds, 6),
                "ratio": round(self.ratio, 4) if self.floor_seconds > 0 else None, "busiest_links": self.links[:top],
                "quantized_bytes": self.quantized_bytes, "quantize_seconds": round(self.quantize_seconds, 6)}


def _link_name(link: tuple[Any, ...]) -> str:
    return ":".join(str(x) for x in link)


def _pair_links(p: PairSchedule, hosts: Placed, model: Model) -> tuple[tuple[Any, ...], ...]:
    (sh, sg), (th, tg) = hosts["source"][p.pair.source_worker_id], hosts["target"][p.pair.target_worker_id]
    links: list[tuple[Any, ...]] = []
    if sh == th:
        if (sh, sg) != (th, tg):
            links += [("gpu-out", sh, sg), ("gpu-in", th, tg)]
    else:
        links += [("nic-out", sh, sg * model.nics_per_host // model.gpus_per_host),
                  ("nic-in", th, tg * model.nics_per_host // model.gpus_per_host)]
    if model.machine_cores:
        links.append(("cpu",))
    return tuple(links)


def _capacity(link: tuple[Any, ...], model: Model) -> float:
    if link[0].startswith("nic"):
        return model.nic_gbit * GBIT
    if link[0].startswith("gpu"):
        return model.intra_host_gbit * GBIT
    return float(model.machine_cores or 0)


def _engine_seconds(p: PairSchedule, sched: Schedule, engine: Engine) -> tuple[float, int, int]:
    """The engine's own time for a pair's operations (issue cost, batch round trips spread
    over the in-flight depth, staging copies), its operation and batch counts."""
    ops, count = sched.counts(p)
    depth = max(1, min(sched.options.max_in_flight, count))
    seconds = (ops * engine.op_seconds + count * engine.batch_seconds / depth
               + p.staged_bytes / (engine.staging_gib_per_s * (1 << 30)))
    return seconds, ops, count


def quantize_bytes(sched: Schedule) -> dict[int, tuple[int, int]]:
    """The bfloat16 bytes each scheduled pair's source quantizes for it (by ``id`` of the
    :class:`PairSchedule`), in all and for its first quantizing copy: two per FP8 byte of
    its values copies (a region is whole on the blocks, so its blocks hold exactly its
    elements), a box already quantized for an earlier pair of the same source worker (the
    same fragment, offset and loops) not again; scales come with their blocks' values."""
    done: set[tuple[Any, ...]] = set()
    out: dict[int, tuple[int, int]] = {}
    for worker, pairs in sched.workers().items():
        for p in pairs:
            if not p.pair.transformed:
                continue
            total = first = 0
            for copy in p.pair.copies:
                if copy.get("transform") != "fp8_e4m3_block_values":
                    continue
                key = (p.pair.source_worker_id, copy["source_fragment_id"], copy["source"]["address"],
                       copy["run_bytes"], tuple((l["count"], l["source_stride"]) for l in copy["loops"]))
                if key not in done:
                    done.add(key)
                    total += 2 * int(copy["nbytes"])
                    first = first or 2 * int(copy["nbytes"])
            out[id(p)] = (total, first)
    return out


def _fair(flows: Sequence[Flow], capacity: Mapping[Any, float]) -> None:
    """Max-min fair rates with per-flow caps (progressive filling; a flow uses
    ``weights[i]`` of link i per unit of its rate)."""
    left = dict(capacity)
    active = list(flows)
    for f in active:
        f.rate = 0.0
    while active:
        users: dict[Any, float] = {}
        for f in active:
            for i, link in enumerate(f.links):
                users[link] = users.get(link, 0.0) + (f.weights[i] if f.weights else 1.0)
        share = min((left[l] / n for l, n in users.items() if n > 0), default=math.inf)
        step = min(share, min(f.cap - f.rate for f in active))
        for f in active:
            f.rate += step
            for i, link in enumerate(f.links):
                left[link] -= step * (f.weights[i] if f.weights else 1.0)
        saturated = {l for l, n in users.items() if n > 0 and left[l] <= 1e-9 * max(capacity[l], 1e-9)}
        active = [f for f in active if f.cap - f.rate > 1e-9 * f.cap and not saturated.intersection(f.links)]


def simulate(bound: BoundPlan, model: Model, *, mode: str = "pull",
             hosts: Optional[HostsInput] = None, options: ExecuteOptions = ExecuteOptions(),
             changed: Optional[Changed] = None, coalesce: bool = True,
             plan_seconds: Optional[float] = None, bind_seconds: Optional[float] = None,
             verify: bool = True, timeline: bool = False, sched: Optional[Schedule] = None) -> Prediction:
    """The predicted update of ``bound`` on ``model`` under the executor's ``options``, each
    worker holding its own staging buffer of ``options.staging_bytes`` (as a
    :class:`weight_manifest_runtime.group.Member` does). ``hosts``: worker -> host (GPU indices in natural order
    of the host's workers) or [host, GPU], for both sides or per side (``{"source": ...,
    "target": ...}``); default :func:`host_map`. ``changed``: a delta
    (:func:`delta_changed`), packed when ``coalesce``. ``sched``: the schedule of these
    options, already made (a calibration reuses it over many models). A plan with
    transformed copies (§17.8) runs in push mode only (its sources compute the bytes); a
    source quantizes a pair's blocks copy by copy (:func:`quantize_bytes` at
    ``model.quantize_gib_per_s``) while sending the copies already quantized: the pair
    starts after its first copy's quantization, and sends no faster than the rest is
    quantized."""
    placed = _placed(bound, model, hosts)
    if mode == "pull" and any(p.transformed for p in bound.pairs):
        raise ValueError("a bound plan with transformed copies runs in push mode only: its sources compute the bytes")
    landing = None
    staging_bytes = options.staging_bytes
    if changed is not None and coalesce and options.stage_below > 0 and staging_bytes >= 2:
        landing = {(p.source_worker_id, p.target_worker_id): 0 for p in bound.pairs}
    if sched is None:
        sched = schedule(bound, mode=mode, options=options, staged=staging_bytes >= 2,
                         half=staging_bytes // 2 if staging_bytes >= 2 else 0, changed=changed, landing=landing)
    engine = model.engine
    queues: dict[str, list[PairSchedule]] = {w: list(ps) for w, ps in sched.workers().items()}
    quantizing = quantize_bytes(sched)
    rate = (model.quantize_gib_per_s or math.inf) * (1 << 30)
    quantize_by_source: dict[str, float] = {}
    for p in sched.pairs:
        total, _ = quantizing.get(id(p), (0, 0))
        if total:
            source = p.pair.source_worker_id
            quantize_by_source[source] = quantize_by_source.get(source, 0.0) + total / rate
    capacity: dict[Any, float] = {}
    link_bytes: dict[Any, int] = {}
    per_pair: dict[int, tuple[tuple[Any, ...], float, tuple[float, ...]]] = {}
    operations = batch_total = 0
    for p in sched.pairs:
        links = _pair_links(p, placed, model)
        seconds, ops, count = _engine_seconds(p, sched, engine)
        # CPU seconds per wire byte: the operations and staging, and the bytes themselves.
        cpu = ((ops * engine.op_seconds + p.staged_bytes / (engine.staging_gib_per_s * (1 << 30)))
               / max(p.wire_bytes, 1) + engine.byte_seconds)
        weights = tuple(cpu if link == ("cpu",) else 1.0 for link in links)
        per_pair[id(p)] = (links, seconds, weights)
        operations += ops
        batch_total += count
        for link in links:
            capacity.setdefault(link, _capacity(link, model))
            if link != ("cpu",):
                link_bytes[link] = link_bytes.get(link, 0) + p.wire_bytes
    stream = engine.stream_gbit * GBIT

    def start(worker: str, now: float) -> Optional[Flow]:
        while queues[worker]:
            p = queues[worker].pop(0)
            links, seconds, weights = per_pair[id(p)]
            if p.wire_bytes == 0 and not p.ops:
                continue
            cap = stream if seconds <= 0 else min(stream, p.wire_bytes / seconds)
            # The source quantizes a pair's blocks copy by copy while it sends the copies
            # already quantized: the first copy's before the pair starts, the rest as a
            # cap on its rate (what the quantizer yields per second).
            total, first = quantizing.get(id(p), (0, 0))
            begin = now + engine.pair_seconds + first / rate
            if total > first and rate < math.inf:
                cap = min(cap, p.wire_bytes * rate / (total - first))
            return Flow(p, links, float(p.wire_bytes), max(cap, 1.0), begin, weights=weights)
        return None

    now = 0.0
    flows: dict[str, Flow] = {}
    for w in queues:
        f = start(w, 0.0)
        if f is not None:
            flows[w] = f
    intervals: list[tuple[float, float, dict[str, float]]] = []
    finished = 0.0
    while flows:
        running = [f for f in flows.values() if f.start <= now + 1e-12]
        _fair(running, capacity)
        horizon = math.inf
        for f in flows.values():
            if f.start > now + 1e-12:
                horizon = min(horizon, f.start - now)
            elif f.rate > 0:
                horizon = min(horizon, f.remaining / f.rate)
        if horizon == math.inf:
            raise RuntimeError("the simulation stalled (a flow with no rate)")
        if timeline and running:
            usage: dict[str, float] = {}
            for f in running:
                for i, link in enumerate(f.links):
                    use = f.rate * (f.weights[i] if f.weights else 1.0)
                    usage[_link_name(link)] = usage.get(_link_name(link), 0.0) + use
            intervals.append((now, now + horizon, usage))
        now += horizon
        for w in list(flows):
            f = flows[w]
            if f.start <= now - horizon + 1e-12:
                f.remaining -= f.rate * horizon
            if f.start <= now + 1e-12 and f.remaining <= 1e-6 * max(1.0, f.pair.wire_bytes):
                finished = now
                nxt = start(w, now)
                if nxt is None:
                    del flows[w]
                else:
                    flows[w] = nxt
    transfer_seconds = finished
    floor = max((b / capacity[l] for l, b in link_bytes.items() if capacity[l] > 0), default=0.0)
    ranked = sorted(link_bytes.items(), key=lambda item: (-item[1] / capacity[item[0]], _link_name(item[0])))
    links_out = [{"link": _link_name(l), "bytes": b, "gbit": capacity[l] / GBIT, "seconds": round(b / capacity[l], 6)}
                 for l, b in ranked]
    held: dict[str, int] = {}
    for pair in bound.pairs:
        # A delta's targets too hash every byte they hold, after it (Coordinator.update).
        held[pair.target_worker_id] = held.get(pair.target_worker_id, 0) + pair.bytes
    verify_seconds = None
    if verify:
        # Every target hashes what it holds (docs/simulate.md), in parallel.
        verify_seconds = model.rpc_seconds + max(held.values(), default=0) / (model.hash_gib_per_s * (1 << 30))
    phases: dict[str, Optional[float]] = {
        "plan": plan_seconds, "bind": bind_seconds,
        # The fences checked on every participant before the first byte, then the pairs.
        "transfer": model.rpc_seconds + transfer_seconds,
        "verify": verify_seconds,
        "commit": model.rpc_seconds,
    }
    return Prediction(mode, sum(p.bytes for p in sched.pairs), sum(p.wire_bytes for p in sched.pairs), operations,
                      batch_total, len(sched.pairs), phases, transfer_seconds, floor, links_out, intervals,
                      {_link_name(l): c for l, c in capacity.items()}, sum(t for t, _ in quantizing.values()),
                      max(quantize_by_source.values(), default=0.0))


def _placed(bound: BoundPlan, model: Model, hosts: Optional[HostsInput]) -> Placed:
    if hosts is None:
        return host_map(bound, model)
    sides = hosts if set(hosts) == {"source", "target"} else {"source": hosts, "target": hosts}
    out: Placed = {}
    for side, key in (("source", "source_worker_id"), ("target", "target_worker_id")):
        placed: dict[str, tuple[str, int]] = {}
        by_host: dict[str, list[str]] = {}
        for w, h in sides[side].items():
            if isinstance(h, (tuple, list)):
                placed[w] = (str(h[0]), int(h[1]))
            else:
                by_host.setdefault(str(h), []).append(w)
        for h, ws in by_host.items():
            for i, w in enumerate(sorted(ws, key=_natural)):
                placed[w] = (h, i % model.gpus_per_host)
        missing = sorted({getattr(p, key) for p in bound.pairs} - set(placed), key=_natural)
        if missing:
            raise ValueError(f"the host map has no host for {side} worker {missing[0]}")
        out[side] = placed
    return out


def svg(prediction: Prediction, path: Union[str, Path], top: int = 8, width: int = 900) -> None:
    """A picture of the busiest links' utilisation over time (one lane per link, shaded by
    the fraction of its rate in use)."""
    names = [l["link"] for l in prediction.links[:top]]
    end = max((b for _, b, _ in prediction.timeline), default=0.0) or 1.0
    lane, left, top_margin = 26, 170, 40
    height = top_margin + lane * len(names) + 40
    plot = width - left - 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12">',
             f'<text x="10" y="20">link utilisation over time ({prediction.mode}, {prediction.bytes / 1e9:.2f} GB, '
             f'{prediction.transfer_seconds:.3f} s, floor {prediction.floor_seconds:.3f} s)</text>']
    for i, name in enumerate(names):
        y = top_margin + i * lane
        parts.append(f'<text x="10" y="{y + 16}">{name}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{plot}" height="{lane - 4}" fill="#eee"/>')
        # Adjacent intervals of the same utilisation (to 1 %) drawn as one.
        spans: list[list[float]] = []
        for a, b, usage in prediction.timeline:
            u = round(min(usage.get(name, 0.0) / prediction.capacity.get(name, 1.0), 1.0), 2)
            if spans and spans[-1][2] == u and abs(spans[-1][1] - a) <= 1e-12 * max(end, 1.0):
                spans[-1][1] = b
            else:
                spans.append([a, b, u])
        for a, b, u in spans:
            if u <= 0:
                continue
            x, w = left + plot * a / end, max(plot * (b - a) / end, 0.5)
            parts.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{lane - 4}" fill="#1f77b4" '
                         f'fill-opacity="{u:.2f}"/>')
    axis = top_margin + lane * len(names) + 16
    for k in range(6):
        t = end * k / 5
        parts.append(f'<text x="{left + plot * k / 5 - 10:.1f}" y="{axis}">{t:.2f} s</text>')
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")


def table(prediction: Prediction, top: int = 5) -> str:
    """A readable summary."""
    d = prediction.to_dict(top)
    lines = [f"update ({d['mode']}): {d['bytes'] / 1e9:.3f} GB, {d['pairs']} pairs, {d['operations']} operations "
             f"in {d['batches']} batches", "", "phase      seconds"]
    for name, value in d["phases"].items():
        lines.append(f"{name:<10} {'-' if value is None else f'{value:.4f}'}")
    lines += ["", f"transfer {d['transfer_seconds']:.4f} s, floor {d['floor_seconds']:.4f} s, ratio "
                  f"{'-' if d['ratio'] is None else d['ratio']}", ""]
    width = max([len("busiest links")] + [len(l["link"]) for l in d["busiest_links"]])
    lines.append(f"{'busiest links':<{width}}       GB   Gbit/s  floor s")
    for l in d["busiest_links"]:
        lines.append(f"{l['link']:<{width}} {l['bytes'] / 1e9:8.3f} {l['gbit']:8.1f} {l['seconds']:8.4f}")
    return "\n".join(lines)


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m weight_manifest_runtime.simulate``: see docs/simulate.md."""
    from weight_manifest import bind_plan, plan
    from weight_manifest import PlacementManifest, RuntimeBindingManifest
    from weight_manifest import Plan

    parser = argparse.ArgumentParser(prog="python -m weight_manifest_runtime.simulate",
                                     description="Predict a weight update's time on a modelled cluster.")
    parser.add_argument("--bound", help="a bound plan JSON file")
    parser.add_argument("--plan", help="a plan JSON file (bound here to --source-binding / --target-binding)")
    parser.add_argument("--source-placement", help="placements to plan from here (with --target-placement)")
    parser.add_argument("--target-placement")
    parser.add_argument("--source-binding")
    parser.add_argument("--target-binding")
    parser.add_argument("--model", default="h100-8x400g", help="a preset name or a JSON file (docs/simulate.md)")
    parser.add_argument("--hosts", help="a JSON file: worker id -> host name, or [host, gpu]")
    parser.add_argument("--mode", choices=("push", "pull"), default="pull")
    parser.add_argument("--delta", type=float, help="also a delta of this changed fraction (0..1)")
    parser.add_argument("--delta-block-bytes", type=int, default=64 << 10)
    parser.add_argument("--nic-gbit", type=float)
    parser.add_argument("--batch-segments", type=int, default=DEFAULT_BATCH_SEGMENTS)
    parser.add_argument("--max-in-flight", type=int, default=DEFAULT_MAX_IN_FLIGHT)
    parser.add_argument("--stage-below", type=int, default=DEFAULT_STAGE_BELOW)
    parser.add_argument("--staging-bytes", type=int, default=DEFAULT_STAGING_BYTES)
    parser.add_argument("--svg", help="write the link utilisation over time to this SVG file")
    parser.add_argument("--format", choices=("json", "text"), default="text")
    args = parser.parse_args(argv)
    try:
        model = load_model(args.model, nic_gbit=args.nic_gbit)
        plan_seconds = bind_seconds = None
        if args.bound:
            bound = BoundPlan.from_json(_read(args.bound))
        else:
            if not (args.source_binding and args.target_binding):
                parser.error("give --bound, or --plan (or both placements) with both bindings")
            if args.plan:
                reshard = Plan.from_json(_read(args.plan))
            elif args.source_placement and args.target_placement:
                source_p = PlacementManifest.from_json(_read(args.source_placement))
                target_p = PlacementManifest.from_json(_read(args.target_placement))
                clock = time.perf_counter()
                reshard = plan(source_p, target_p)
                plan_seconds = time.perf_counter() - clock
            else:
                parser.error("give --plan or both placements")
            source_b = RuntimeBindingManifest.from_json(_read(args.source_binding))
            target_b = RuntimeBindingManifest.from_json(_read(args.target_binding))
            clock = time.perf_counter()
            bound = bind_plan(reshard, source_b, target_b)
            bind_seconds = time.perf_counter() - clock
        hosts = json.loads(Path(args.hosts).read_text()) if args.hosts else None
        options = ExecuteOptions(batch_segments=args.batch_segments, max_in_flight=args.max_in_flight,
                                 stage_below=args.stage_below, staging_bytes=args.staging_bytes)
        full = simulate(bound, model, mode=args.mode, hosts=hosts, options=options, plan_seconds=plan_seconds,
                        bind_seconds=bind_seconds, timeline=bool(args.svg))
        out: dict[str, Any] = {"model": model.to_dict(), "update": full.to_dict()}
        delta = None
        if args.delta is not None:
            changed = delta_changed(bound, args.delta, args.delta_block_bytes)
            delta = simulate(bound, model, mode=args.mode, hosts=hosts, options=options, changed=changed)
            out["delta"] = {"fraction": args.delta, "block_bytes": args.delta_block_bytes, **delta.to_dict()}
        if args.svg:
            svg(full, args.svg)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(out))
    else:
        print(table(full))
        if delta is not None:
            print(f"\ndelta of {args.delta:g}:")
            print(table(delta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
