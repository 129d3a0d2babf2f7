"""The cost of atomic weight versions (BENCHMARKS.md), as ratios to a baseline of the same
run, on the in-process group of runtime/tests/lifecycle_world.py (LocalBackend:
the transfer is a memcpy, the fastest there is, so the lifecycle's own work weighs the
most):

- ``own_overhead``: what prepare and commit add to a full update (the lifecycle's own
  steps, timed inside the run: the prepare with its durable record, the fences after the
  transfer, telling the targets they verified, the decision and the activations;
  ``own_seconds``) over the plain verified update of the same bytes (``Coordinator.update``:
  fences, transfer, content check). Target: <= 0.05. ``full_overhead`` is the end-to-end
  difference of the two runs (noisier: two separate runs of a second each).
  The save of the new revision after the commit (off the barrier: the targets serve
  already) is reported apart (``save_seconds``).
- ``rollback_ratio``: rolling back a 1 % delta (its undo log written back, every target
  checked against g's digests, activated at g) over the plain verified delta update of
  the same changes. Target: <= 2.

    .venv/bin/python runtime/bench/bench_lifecycle.py --mib 1024 --repeat 9

Each figure is the fastest of ``--repeat`` runs (the least disturbed on a shared machine;
the ratios of medians are printed too), baseline and lifecycle interleaved; the last line
is the JSON of the figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from lifecycle_world import Model, World  # noqa: E402
from weight_manifest_runtime.lifecycle import VersionedUpdate  # noqa: E402


def model(mib: int) -> Model:
    """8 tensors of 4096 x cols float32, split alternately on rows and columns."""
    cols = max(16, (mib << 20) // (8 * 4096 * 4) // 16 * 16)
    return {f"w{i}": ((4096, cols), i % 2, i % 2) for i in range(8)}


def full(mib: int, repeat: int, folder: Path) -> dict[str, Any]:
    w = World(np.random.default_rng(1), folder, source=(2, 1), target=(1, 2), model=model(mib))
    plain, versioned, saves, own = [], [], [], []
    g = 1
    bound = w.bound()
    # A first update hashes the targets' generation 1 (no record says its digests yet):
    # not what a steady loop of updates pays.
    w.next_generation(2)
    w.update().run(bound, 2, mode="full")
    w.generations.pop(1)
    g = 2
    for r in range(repeat):
        for which in (("plain", "versioned") if r % 2 == 0 else ("versioned", "plain")):
            w.next_generation(g + 1)
            if which == "plain":
                gc.collect()
                clock = time.perf_counter()
                w.coordinator.update(bound)
                plain.append(time.perf_counter() - clock)
                w.target.write(w.generations[g])  # back to what the targets serve
                w.generations.pop(g + 1)
                continue
            gc.collect()
            clock = time.perf_counter()
            result = w.update(save_revisions=False).run(bound, g + 1, mode="full")
            versioned.append(time.perf_counter() - clock)
            own.append(result["own_seconds"])
            clock = time.perf_counter()
            w.revisions.save(w.coordinator, g + 1, "target")
            saves.append(time.perf_counter() - clock)
            w.generations.pop(g - 1, None)  # memory: only g and g+1 are needed from here
            g += 1
    bytes_ = sum(t.nbytes for held in w.target.workers.values() for t in held.values())
    w.close()
    return {"bytes": bytes_, "plain_seconds": min(plain), "versioned_seconds": min(versioned),
            "save_seconds": min(saves), "own_seconds": statistics.median(own),
            "own_overhead": statistics.median(own) / min(plain), "full_overhead": min(versioned) / min(plain) - 1,
            "full_overhead_median": statistics.median(versioned) / statistics.median(plain) - 1}


def rollback(mib: int, repeat: int, folder: Path) -> dict[str, Any]:
    w = World(np.random.default_rng(2), folder, source=(2, 1), target=(1, 2), model=model(mib), delta=0.01,
              delta_rows=True)
    bound = w.bound()
    plain, back, undo = [], [], []
    for r in range(repeat):
        for which in (("plain", "rollback") if r % 2 == 0 else ("rollback", "plain")):
            w.next_generation(2)
            if which == "plain":
                clock = time.perf_counter()
                w.coordinator.update(bound, delta=True)
                plain.append(time.perf_counter() - clock)
                w.target.write(w.generations[1])
                continue
            # No revisions: the delta keeps its undo log (with revision g kept it keeps
            # none, and its rollback restores g whole, as a full update's does).
            update = VersionedUpdate(w.coordinator, w.log, revisions=None, save_revisions=False)
            update.prepare(bound, 2, mode="delta")
            update.transfer()
            update.abort()
            result = update.rollback()
            back.append(result["rollback_seconds"])
            undo.append(result["undo_bytes"])
            assert all(w.held(t) == 1 for t in w.versions)
    w.close()
    return {"delta_seconds": min(plain), "rollback_seconds": min(back), "undo_bytes": int(statistics.median(undo)),
            "rollback_ratio": min(back) / min(plain),
            "rollback_ratio_median": statistics.median(back) / statistics.median(plain)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wm-bench-lifecycle-", dir=Path(__file__).resolve().parents[2] / "target") \
            as root:
        figures = {**full(args.mib, args.repeat, Path(root) / "full"),
                   **rollback(args.mib, args.repeat, Path(root) / "delta")}
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
