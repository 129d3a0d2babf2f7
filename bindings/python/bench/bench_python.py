"""Benchmarks of the Python binding (BENCHMARKS.md, "Python binding (issue 18)").

Every figure is a ratio to a baseline measured in the same run, interleaved with it:
CPython's ``json.loads`` of the same placement file for the construction rows, the
release CLI's ``weight-manifest plan SRC TGT -o FILE`` for the plan row. Each measurement
runs in a fresh interpreter (``--measure KIND``), so no cache, interned string or GC state
carries over from one to the next; the medians of ``--runs`` measurements are reported.

    python bench_python.py --placement P.json --source S.json --target T.json --cli BIN

Rows (each timed from what the row says is given, in the measuring process):

- ``objects``: from the ``json.loads`` dict, ``TensorDescriptor``, ``ParallelRank`` and
  ``PlacementFragment`` objects with keyword arguments, then ``PlacementManifest(...)``,
  ``.placement_id`` and ``.digest``;
- ``bulk``: ``PlacementManifest.from_records(...)`` from the dict's lists + id + digest, and
  how far its peak resident set rises above the resident set at its start (the loaded
  dict), as a multiple of the file size;
- ``from_json``: ``PlacementManifest.from_json(bytes)`` + id + digest;
- ``plan``: ``wm.plan(src, tgt)`` and writing its ``to_json()`` to a file, against the CLI's
  wall time for the same plan (a subprocess, started and waited for by this process).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

TARGETS = {"objects": 1.2, "bulk": 0.5, "from_json": 0.4, "plan": 1.3}
BULK_MEMORY_TARGET = 4.0


def _maxrss_bytes() -> int:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _status_bytes(field: str) -> Optional[int]:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _peak_above_now(work: Callable[[], Any]) -> tuple[float, int]:
    """The seconds of ``work`` and how far its peak resident set rose above the resident
    set at its start. On Linux the peak is reset first (``/proc/self/clear_refs``, 5), so
    it is the peak of ``work`` itself; elsewhere it is the process's peak (``ru_maxrss``),
    which counts only what rises above every earlier peak."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
        start = _status_bytes("VmRSS")
    except OSError:
        start = None
    if start is None:
        before = _maxrss_bytes()
        seconds = _timed(work)
        return seconds, _maxrss_bytes() - before
    seconds = _timed(work)
    return seconds, (_status_bytes("VmHWM") or start) - start


def _timed(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _objects(document: dict[str, Any]) -> None:
    import weight_manifest as wm

    tensors = [
        wm.TensorDescriptor(
            tensor_id=t["tensor_id"],
            global_shape=tuple(t["global_shape"]),
            dtype=t["dtype"],
            itemsize=t["itemsize"],
            partition_dim=t["partition_dim"],
            layout_fingerprint=t["layout_fingerprint"],
            layer_id=t["layer_id"],
            expert_id=t["expert_id"],
            shard_dims=None if t.get("shard_dims") is None else tuple(t["shard_dims"]),
        )
        for t in document["tensors"]
    ]
    fragments = [
        wm.PlacementFragment(
            placement_fragment_id=f["placement_fragment_id"],
            tensor_id=f["tensor_id"],
            global_offset=tuple(f["global_offset"]),
            local_shape=tuple(f["local_shape"]),
            nbytes=f["nbytes"],
            rank=wm.ParallelRank(**f["rank"]),
            aliases=tuple(f["aliases"]),
        )
        for f in document["fragments"]
    ]
    manifest = wm.PlacementManifest(
        model_id=document["model_id"],
        revision=document["revision"],
        tensors=tuple(tensors),
        fragments=tuple(fragments),
    )
    manifest.placement_id, manifest.digest


def _plain_objects(document: dict[str, Any]) -> None:
    """The floor of the ``objects`` row: the same objects as plain frozen dataclasses of
    the same fields, with no validation and no manifest."""

    @dataclass(frozen=True)
    class Rank:
        dp: int = 0
        tp: int = 0
        pp: int = 0
        ep: int = 0

    @dataclass(frozen=True)
    class Descriptor:
        tensor_id: str
        global_shape: tuple[int, ...]
        dtype: str
        itemsize: int
        partition_dim: Optional[int]
        layout_fingerprint: str
        layer_id: Optional[int] = None
        expert_id: Optional[int] = None
        shard_dims: Optional[tuple[int, ...]] = None

    @dataclass(frozen=True)
    class Fragment:
        placement_fragment_id: str
        tensor_id: str
        global_offset: tuple[int, ...]
        local_shape: tuple[int, ...]
        nbytes: int
        rank: Rank
        aliases: tuple[str, ...] = ()

    tensors = [
        Descriptor(
            tensor_id=t["tensor_id"],
            global_shape=tuple(t["global_shape"]),
            dtype=t["dtype"],
            itemsize=t["itemsize"],
            partition_dim=t["partition_dim"],
            layout_fingerprint=t["layout_fingerprint"],
            layer_id=t["layer_id"],
            expert_id=t["expert_id"],
            shard_dims=None if t.get("shard_dims") is None else tuple(t["shard_dims"]),
        )
        for t in document["tensors"]
    ]
    fragments = [
        Fragment(
            placement_fragment_id=f["placement_fragment_id"],
            tensor_id=f["tensor_id"],
            global_offset=tuple(f["global_offset"]),
            local_shape=tuple(f["local_shape"]),
            nbytes=f["nbytes"],
            rank=Rank(**f["rank"]),
            aliases=tuple(f["aliases"]),
        )
        for f in document["fragments"]
    ]
    del tensors, fragments


def measure(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One measurement of ``kind`` in this (fresh) process."""
    if kind == "plan_cli":
        with tempfile.TemporaryDirectory() as folder:
            command = [args.cli, "-q", "plan", args.source, args.target, "-o", os.path.join(folder, "plan.json")]
            start = time.perf_counter()
            subprocess.run(command, check=True)
            return {"seconds": time.perf_counter() - start}

    import weight_manifest as wm

    if kind == "plan":
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "plan.json"

            def plan() -> None:
                out.write_text(wm.plan(Path(args.source), Path(args.target)).to_json(), encoding="utf-8")

            return {"seconds": _timed(plan)}

    data = Path(args.placement).read_bytes()
    if kind == "json_loads":
        return {"seconds": _timed(lambda: json.loads(data))}
    if kind == "from_json":

        def from_json() -> None:
            manifest = wm.PlacementManifest.from_json(data)
            manifest.placement_id, manifest.digest

        return {"seconds": _timed(from_json)}
    document = json.loads(data)
    del data
    if kind == "objects":
        return {"seconds": _timed(lambda: _objects(document))}
    if kind == "plain_objects":
        return {"seconds": _timed(lambda: _plain_objects(document))}
    if kind == "bulk":
        from_records = getattr(wm.PlacementManifest, "from_records", None)
        if from_records is None:
            return {"missing": "PlacementManifest.from_records does not exist"}

        def bulk() -> None:
            manifest = from_records(
                model_id=document["model_id"],
                revision=document["revision"],
                tensors=document["tensors"],
                fragments=document["fragments"],
            )
            manifest.placement_id, manifest.digest

        seconds, increase = _peak_above_now(bulk)
        return {"seconds": seconds, "rss_increase": increase}
    raise SystemExit(f"unknown measurement {kind}")


def _fresh(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--measure", kind, "--placement", args.placement]
    command += ["--source", args.source, "--target", args.target, "--cli", args.cli]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--placement", required=True, help="the DeepSeek-V3 placement file")
    parser.add_argument("--source", required=True, help="the reshard pair's source placement")
    parser.add_argument("--target", required=True, help="the reshard pair's target placement")
    parser.add_argument("--cli", required=True, help="the release weight-manifest binary")
    parser.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "5")))
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args)))
        return

    kinds = ["json_loads", "objects", "plain_objects", "bulk", "from_json", "plan", "plan_cli"]
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for _ in range(args.runs):
        for kind in kinds:  # interleaved: each row and its baseline see the same machine
            results[kind].append(_fresh(kind, args))

    def median(kind: str, key: str = "seconds") -> float:
        return statistics.median(r[key] for r in results[kind])

    size = os.path.getsize(args.placement)
    base, cli = median("json_loads"), median("plan_cli")
    print(f"runs: {args.runs}; placement {size / 1e6:.1f} MB; json.loads {base:.3f} s; CLI plan {cli:.3f} s")
    print(f"{'row':<10} {'median s':>9} {'baseline s':>11} {'ratio':>7} {'target':>7}")
    for row, baseline in (("objects", base), ("bulk", base), ("from_json", base), ("plan", cli)):
        if any("missing" in r for r in results[row]):
            print(f"{row:<10} {'missing':>9} {baseline:>11.3f} {'-':>7} {TARGETS[row]:>7.2f}  ({results[row][0]['missing']})")
            continue
        seconds = median(row)
        print(f"{row:<10} {seconds:>9.3f} {baseline:>11.3f} {seconds / baseline:>7.2f} {TARGETS[row]:>7.2f}")
    floor = median("plain_objects")
    print(
        f"{'(floor)':<10} {floor:>9.3f} {base:>11.3f} {floor / base:>7.2f}       -  "
        "plain frozen dataclasses of the same objects, no validation, no manifest"
    )
    if not any("missing" in r for r in results["bulk"]):
        increase = median("bulk", "rss_increase")
        print(
            f"bulk peak RSS above its start {increase / 2**20:.1f} MiB = {increase / size:.2f}x the file "
            f"(target <= {BULK_MEMORY_TARGET:.0f}x)"
        )


if __name__ == "__main__":
    main()
