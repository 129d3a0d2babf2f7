#!/usr/bin/env python3
"""Planning the DeepSeek-V3-like reshard (TP8/EP8/PP4/DP2 -> TP4/EP16/PP8/DP2) from Mooncake
JSON inputs: this project's `weight-manifest plan --replica-choice mooncake` against upstream's
`plan_placement_transfer` on the same two files, side by side in one run, and the regions
compared one to one.

    python scripts/bench-mooncake.py BIN DIR

BIN is a release `weight-manifest`; DIR holds `deepseek-v3.tp8-ep8-pp4-dp2.json` and
`deepseek-v3.tp4-ep16-pp8-dp2.json` (this project's placements, written by
`PLAN_BENCH_DIR=DIR RUSTFLAGS="--cfg wm_tools" cargo test --release --test plan_deepseek
write_reshard_workload`). Needs the wheel `mooncake-transfer-engine-non-cuda==0.3.13.post1`.
Upstream rejects this plan at its default limits (14.09 M segments > 10 M), so its limits
are raised. Takes about three minutes, almost all of it upstream's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from mooncake.reshard import weight as mw


def main() -> int:
    binary, d = sys.argv[1], Path(sys.argv[2])
    src, tgt = d / "source.mooncake.json", d / "target.mooncake.json"
    subprocess.run([binary, "mooncake", "export", str(d / "deepseek-v3.tp8-ep8-pp4-dp2.json"), "-o", str(src)], check=True)
    subprocess.run([binary, "mooncake", "export", str(d / "deepseek-v3.tp4-ep16-pp8-dp2.json"), "-o", str(tgt)], check=True)
    plan_file = d / "plan.mooncake-choice.json"
    runs = []
    for _ in range(3):
        started = time.monotonic()
        subprocess.run([binary, "-q", "plan", str(src), str(tgt), "--replica-choice", "mooncake", "-o", str(plan_file)], check=True)
        runs.append(time.monotonic() - started)
    ours = sorted(runs)[1]
    print(f"weight-manifest plan (read both Mooncake files, validate by Mooncake's rules, import, plan, write): "
          f"{ours:.2f} s (median of 3: {', '.join(f'{r:.2f}' for r in runs)})")

    started = time.monotonic()
    source = mw.weight_placement_from_json(src.read_text(encoding="utf-8"))
    target = mw.weight_placement_from_json(tgt.read_text(encoding="utf-8"))
    read = time.monotonic() - started
    limits = mw.PlanningLimits(max_transfer_regions=10**8, max_segments_per_region=10**8, max_total_lowered_segments=10**9)
    started = time.monotonic()
    plan = mw.plan_placement_transfer(source, target, planning_limits=limits)
    planned = time.monotonic() - started
    print(f"upstream weight_placement_from_json x2: {read:.1f} s; plan_placement_transfer: {planned:.1f} s; "
          f"total {read + planned:.1f} s")
    print(f"speed-up: {planned / ours:.0f}x on planning alone, {(read + planned) / ours:.0f}x end to end")

    theirs = sorted(
        (r.tensor_id, r.target.placement_fragment_id, r.source.placement_fragment_id, tuple(r.overlap_offset),
         tuple(r.overlap_shape), r.source_base_offset, r.target_base_offset, r.inner_bytes,
         tuple(r.outer_loop_counts), tuple(r.source_strides), tuple(r.target_strides))
        for r in plan.operations)
    doc = json.loads(plan_file.read_text(encoding="utf-8"))
    mine = sorted(
        (r["tensor_id"], r["target_fragment_id"], r["source_fragment_id"], tuple(r["global_offset"]),
         tuple(r["shape"]), r["source_offset"], r["target_offset"], r["run_bytes"],
         tuple(l["count"] for l in r["loops"]), tuple(l["source_stride"] for l in r["loops"]),
         tuple(l["target_stride"] for l in r["loops"]))
        for r in doc["regions"])
    same = sum(1 for a, b in zip(mine, theirs) if a == b)
    print(f"regions: ours {len(mine)}, upstream {len(theirs)}, equal one to one: {same}")
    return 0 if mine == theirs else 1


if __name__ == "__main__":
    sys.exit(main())
