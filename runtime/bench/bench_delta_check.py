"""What a delta's content check hashes (BENCHMARKS.md, issue 51): on the in-process group of
runtime/tests/lifecycle_world.py (8 tensors of 4096 x cols float32, sources TP2, targets
TP1/PP2, the local backend), versioned deltas of three shapes:

- ``tensors``: 2 of the 8 tensors trained whole (an RL step that trains some layers);
- ``rows``: 1 % of the rows of every tensor;
- ``scattered``: 0.1 % of the elements, anywhere (a block of 64 changes with ~6 %).

For each: the bytes the delta moved, the bytes its check hashed on the targets (only the
blocks it wrote: ``hashed_bytes``), the bytes the targets hold (what every check hashed
before, and what the full check ``status(check=True)`` hashes), the verify step's seconds
and the full check's (median of ``--repeat``).

    .venv/bin/python runtime/bench/bench_delta_check.py --mib 256 --repeat 5
"""

from __future__ import annotations

import argparse
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


def model(mib: int) -> Model:
    """8 tensors of 4096 x cols float32, split alternately on rows and columns."""
    cols = max(64, (mib << 20) // (8 * 4096 * 4) // 64 * 64)
    return {f"w{i}": ((4096, cols), i % 2, i % 2) for i in range(8)}


def change(w: World, g: int, shape: str) -> None:
    """Generation g from g-1 (the sources' snapshot taken at g-1), written into the sources."""
    before = w.generations[g - 1]
    w.source.write(before)
    w.coordinator.snapshot()
    now = {n: v.copy() for n, v in before.items()}
    for i, name in enumerate(sorted(now)):
        bits = now[name].view(np.uint32)
        if shape == "tensors":
            if i in (g % 8, (g + 3) % 8):
                bits ^= np.uint32(0x01010101)
        elif shape == "rows":
            bits[w.rng.random(bits.shape[0]) < 0.01] ^= np.uint32(0x01010101)
        else:
            flat = bits.reshape(-1)
            flat[w.rng.random(flat.size) < 0.001] ^= np.uint32(0x01010101)
    w.generations[g] = now
    w.source.write(now)
    w.generations.pop(g - 2, None)


def run(shape: str, mib: int, repeat: int, folder: Path) -> dict[str, Any]:
    w = World(np.random.default_rng(3), folder / shape, source=(2, 1), target=(1, 2), model=model(mib), delta=0.0)
    held = sum(t.nbytes for h in w.target.workers.values() for t in h.values())
    w.update().run(w.bound(), 2, mode="delta")  # the first update hashes g = 1 whole (no record yet)
    moved, hashed, verify, full = [], [], [], []
    for g in range(3, 3 + repeat):
        change(w, g, shape)
        result = w.update().run(w.bound(), g, mode="delta")
        assert all(w.held(t) == g for t in w.versions)
        moved.append(result["bytes"])
        hashed.append(result["hashed_bytes"])
        verify.append(result["verify_seconds"])
        clock = time.perf_counter()
        assert all(v.status(check=True)["consistent"] for v in w.versions.values())
        full.append(time.perf_counter() - clock)
    w.close()
    return {f"{shape}_moved_bytes": int(statistics.median(moved)), f"{shape}_hashed_bytes": int(statistics.median(hashed)),
            f"{shape}_held_bytes": held, f"{shape}_verify_seconds": statistics.median(verify),
            f"{shape}_full_check_seconds": statistics.median(full)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    figures: dict[str, Any] = {"mib": args.mib}
    with tempfile.TemporaryDirectory(prefix="wm-bench-delta-check-") as root:
        for shape in ("tensors", "rows", "scattered"):
            figures.update(run(shape, args.mib, args.repeat, Path(root)))
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
