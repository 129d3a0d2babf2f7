"""The frontier scenario (`make simulate-frontier`): a Kimi-K2-like model (61 layers, 384
experts, BF16 throughout) from 256 trainer GPUs (32 hosts of 8) to 128 inference GPUs
(16 hosts of 8) at 400 Gb/s per GPU, planned and bound for real here, then simulated; then
the published scenario, BF16 trainers into block-FP8 engines (contract §17.8), for Kimi-K2
and for a 2.8-trillion-parameter model of its family (1,056 experts) at the same scale.

1. The calibration (examples/simulate/calibrate.py, root: emulated hosts) unless
   ``--calibration FILE`` gives its JSON.
2. The project's generator (hidden ``bench-data`` command, ``--bf16-experts``): the
   sources TP8/EP8/PP4 with 8 replicas (256 GPUs), the targets TP8/EP8/PP4 with 4
   replicas (128 GPUs: each replica of 32 GPUs gets the whole model), placements and
   runtime inventories; each side's runtime binding projected from its inventory.
3. ``weight-manifest plan`` and ``plan-bind`` (release CLI), timed, with peak memory.
4. The bound plan loaded here, and :func:`weight_manifest_runtime.simulate.simulate` on the
   ``h100-8x400g`` preset (workers packed 8 to a host in order of their ids): the full
   update in both modes and a delta of ``--delta`` of 64 KiB blocks.
5. BF16 -> FP8 (``--fp8``, default on): the sources BF16 throughout with the MLA down
   projections whole on each rank (``--mla-replicated``), the targets the checkpoint's
   block FP8 (``--block-fp8``: every decoder linear FP8 with its 128x128 float32 scales),
   planned with the quantization spec (``--kind quantization``), bound, and simulated in
   push mode (the sources quantize: ``quantize_gib_per_s`` of the preset, or
   ``--quantize-gib-per-s``). Kimi-K2, then the 2.8T model (``--fp8-models``).

The last line is one JSON object: ``calibration_max_error``, ``calibration_runs``,
``frontier_predicted_seconds`` (the transfer, best mode), ``frontier_floor_seconds``,
``ratio``, ``frontier_plan_bind_seconds`` (plan + plan-bind, measured here),
``delta_predicted_seconds``, ``fp8_predicted_seconds``, ``fp8_floor_seconds``,
``fp8_ratio`` (Kimi-K2 BF16 -> FP8), the same three prefixed ``fp8_2p8t_`` for the 2.8T model,
and the details. ``--calibration none`` skips the calibration (its members are then null).

    python examples/simulate/frontier.py --calibration target/calibration.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def progress(message: str) -> None:
    print(f"[frontier] {message}", file=sys.stderr, flush=True)


def timed(argv: list[str]) -> dict[str, float]:
    """``argv`` under /usr/bin/time: wall seconds and peak resident MiB."""
    log = Path(tempfile.gettempdir()) / f"wm-frontier-time-{time.monotonic_ns()}"
    try:
        subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", str(log), *argv], check=True, stdout=subprocess.DEVNULL)
        wall, kib = log.read_text().split()[-2:]
    finally:  # also when the command fails
        log.unlink(missing_ok=True)
    return {"seconds": float(wall), "peak_mib": round(int(kib) / 1024, 1)}


def bf16_frontier(cli: str, work: Path, model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Kimi-K2 BF16 -> BF16 (steps 2-4 of the module's description)."""
    from weight_manifest import BoundPlan
    from weight_manifest_runtime import simulate

    steps: dict[str, Any] = {}
    for side, dp in (("source", 8), ("target", 4)):
        for kind in ("placement", "runtime-inventory"):
            path = work / f"{side}.{kind}.json"
            if not path.is_file():
                subprocess.run([cli, "-q", "bench-data", "--model", "kimi-k2", "--kind", kind, "--dp", str(dp),
                                "--bf16-experts", "-o", str(path)], check=True)
        steps[f"{side}_binding"] = timed([cli, "-q", "project", "binding", str(work / f"{side}.runtime-inventory.json"),
                                          "-o", str(work / f"{side}.binding.json")])
    progress(f"bindings projected: {steps['source_binding']}, {steps['target_binding']}")
    steps["plan"] = timed([cli, "-q", "plan", str(work / "source.placement.json"), str(work / "target.placement.json"),
                           "-o", str(work / "plan.json")])
    progress(f"plan: {steps['plan']}")
    steps["plan_bind"] = timed([cli, "-q", "plan-bind", str(work / "plan.json"), str(work / "source.binding.json"),
                                str(work / "target.binding.json"), "-o", str(work / "bound.json")])
    progress(f"plan-bind: {steps['plan_bind']}")

    clock = time.perf_counter()
    bound = BoundPlan.from_json((work / "bound.json").read_bytes())
    load_seconds = time.perf_counter() - clock
    plan_s, bind_s = steps["plan"]["seconds"], steps["plan_bind"]["seconds"]
    predictions = {}
    for mode in ("pull", "push"):
        clock = time.perf_counter()
        predictions[mode] = simulate.simulate(bound, model, mode=mode, plan_seconds=plan_s, bind_seconds=bind_s,
                                              timeline=True)
        progress(f"{mode}: {predictions[mode].transfer_seconds:.3f} s predicted, floor "
                 f"{predictions[mode].floor_seconds:.3f} s ({time.perf_counter() - clock:.1f} s to simulate)")
    mode = min(predictions, key=lambda m: predictions[m].transfer_seconds)
    full = predictions[mode]
    simulate.svg(full, work / "frontier.svg")
    clock = time.perf_counter()
    changed = simulate.delta_changed(bound, args.delta, args.delta_block_bytes)
    delta = simulate.simulate(bound, model, mode=mode, changed=changed)
    progress(f"delta of {args.delta:g}: {delta.transfer_seconds:.3f} s predicted ({time.perf_counter() - clock:.1f} s)")
    return {
        "frontier_predicted_seconds": round(full.phases["transfer"] or 0.0, 4),
        "frontier_floor_seconds": round(full.floor_seconds, 4),
        "ratio": round((full.phases["transfer"] or 0.0) / full.floor_seconds, 4),
        "frontier_plan_bind_seconds": round(plan_s + bind_s, 2),
        "delta_predicted_seconds": round(delta.phases["transfer"] or 0.0, 4),
        "mode": mode,
        "bytes": full.bytes,
        "verify_seconds": round(full.phases["verify"] or 0.0, 4),
        "other_mode_seconds": {m: round(p.phases["transfer"] or 0.0, 4) for m, p in predictions.items()},
        "delta_fraction": args.delta, "delta_bytes": delta.bytes,
        "busiest_links": full.links[:3],
        "steps": steps,
        "bound_plan_load_seconds": round(load_seconds, 2),
    }


def fp8_frontier(cli: str, work: Path, model: Any, name: str) -> dict[str, Any]:
    """BF16 trainers (TP8/EP8/PP4 x DP8, 256 GPUs) into block-FP8 engines (TP8/EP8/PP4 x
    DP4, 128 GPUs) of model ``name``, planned with its quantization spec, bound, and
    simulated in push mode (the sources quantize the blocks each pair sends)."""
    from weight_manifest import BoundPlan
    from weight_manifest_runtime import simulate

    steps: dict[str, Any] = {}
    files = {"source": (8, ["--bf16-experts", "--mla-replicated"]), "target": (4, ["--block-fp8"])}
    for side, (dp, flags) in files.items():
        for kind in ("placement", "runtime-inventory"):
            path = work / f"{name}-fp8.{side}.{kind}.json"
            if not path.is_file():
                subprocess.run([cli, "-q", "bench-data", "--model", name, "--kind", kind, "--dp", str(dp), *flags,
                                "-o", str(path)], check=True)
        steps[f"{side}_binding"] = timed([cli, "-q", "project", "binding",
                                          str(work / f"{name}-fp8.{side}.runtime-inventory.json"),
                                          "-o", str(work / f"{name}-fp8.{side}.binding.json")])
    spec = work / f"{name}-fp8.quantization.json"
    subprocess.run([cli, "-q", "bench-data", "--model", name, "--kind", "quantization", "--block-fp8", "-o", str(spec)],
                   check=True)
    steps["plan"] = timed([cli, "-q", "plan", str(work / f"{name}-fp8.source.placement.json"),
                           str(work / f"{name}-fp8.target.placement.json"), "--quantization", str(spec),
                           "--max-regions", str(1 << 22),
                           "-o", str(work / f"{name}-fp8.plan.json")])
    steps["plan_bind"] = timed([cli, "-q", "plan-bind", str(work / f"{name}-fp8.plan.json"),
                                str(work / f"{name}-fp8.source.binding.json"),
                                str(work / f"{name}-fp8.target.binding.json"), "-o", str(work / f"{name}-fp8.bound.json")])
    progress(f"{name} BF16 -> FP8: plan {steps['plan']}, plan-bind {steps['plan_bind']}")
    bound = BoundPlan.from_json((work / f"{name}-fp8.bound.json").read_bytes())
    clock = time.perf_counter()
    full = simulate.simulate(bound, model, mode="push", timeline=True)
    progress(f"{name} BF16 -> FP8: {full.transfer_seconds:.3f} s predicted, floor {full.floor_seconds:.3f} s "
             f"({time.perf_counter() - clock:.1f} s to simulate)")
    simulate.svg(full, work / f"{name}-fp8.svg")
    transfer = full.phases["transfer"] or 0.0
    return {
        "predicted_seconds": round(transfer, 4),
        "floor_seconds": round(full.floor_seconds, 4),
        "ratio": round(transfer / full.floor_seconds, 4),
        "bytes": full.bytes,
        "quantized_bytes": full.quantized_bytes,
        "quantize_seconds": round(full.quantize_seconds, 4),
        "busiest_links": full.links[:3],
        "plan_bind_seconds": round(steps["plan"]["seconds"] + steps["plan_bind"]["seconds"], 2),
        "steps": steps,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=str(ROOT / "target" / "simulate-frontier"))
    parser.add_argument("--cli", default=str(ROOT / "target" / "release" / "weight-manifest"))
    parser.add_argument("--calibration", help="a calibrate.py JSON (default: run it now)")
    parser.add_argument("--model", default="h100-8x400g")
    parser.add_argument("--delta", type=float, default=0.02)
    parser.add_argument("--delta-block-bytes", type=int, default=64 << 10)
    parser.add_argument("--fp8-models", default="kimi-k2,kimi2p8t",
                        help="the models of the BF16 -> FP8 scenario (comma-separated; empty: none)")
    parser.add_argument("--quantize-gib-per-s", type=float, help="override the preset's quantize_gib_per_s")
    parser.add_argument("--skip-bf16", action="store_true", help="only the BF16 -> FP8 scenarios")
    args = parser.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.calibration == "none":
        calibration = {"calibration_max_error": None, "calibration_runs": None}
    elif args.calibration and Path(args.calibration).is_file():
        calibration = json.loads(Path(args.calibration).read_text())
    else:
        progress("calibrating on emulated hosts")
        done = subprocess.run([sys.executable, str(HERE / "calibrate.py"), "--save", str(work / "calibration.json"),
                               "--measurements", str(work / "measurements.json")],
                              check=True, stdout=subprocess.PIPE, text=True)
        calibration = json.loads(done.stdout.strip().splitlines()[-1])
    progress(f"calibration: max error {calibration['calibration_max_error']} over {calibration['calibration_runs']} runs")

    cli = args.cli
    from weight_manifest_runtime import simulate

    model = simulate.load_model(args.model, quantize_gib_per_s=args.quantize_gib_per_s)
    out: dict[str, Any] = {
        "calibration_max_error": calibration["calibration_max_error"],
        "calibration_runs": calibration["calibration_runs"],
    }
    if not args.skip_bf16:
        out.update(bf16_frontier(cli, work, model, args))
    for name in [m for m in args.fp8_models.split(",") if m]:
        prefix = "fp8" if name == "kimi-k2" else f"fp8_{name.replace('kimi', '')}"
        out.update({f"{prefix}_{k}": v for k, v in fp8_frontier(cli, work, model, name).items()})
    out["calibration_constants"] = calibration.get("constants")
    out["model"] = model.to_dict()
    out["driver_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
