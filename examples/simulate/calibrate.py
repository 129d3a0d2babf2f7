"""Calibrate the simulator against measured updates on emulated hosts (root: it makes
network namespaces), then report the predicted/measured error per run.

Brings up 4 hosts (``scripts/hosts.sh net 4``: network namespaces on a bridge, no Ray),
and for each layout starts one process per rank in its host (a Member of the synthetic
model of examples/reshard-te/model.py on its own Mooncake Transfer Engine over TCP, driven
over pipes by a Coordinator here), then for each link rate and mode of the layout shapes
every host's link (tbf, both ways) and measures ``Coordinator.update`` (the transfer; the
content check is off, so the figure is the transfer alone; the fastest of ``--repeat``). Then it fits the emulated
preset's engine constants (op_seconds, batch_seconds, pair_seconds, rpc_seconds; the
network constants are the shaped rates, not fitted) to minimise the largest relative
error of :func:`weight_manifest_runtime.simulate.simulate` over the runs, and prints one JSON
line: the runs (layout, rate, mode, bytes, measured, predicted, error), the fitted
constants, ``calibration_max_error`` and ``calibration_runs``.

    python examples/simulate/calibrate.py                  # every run (a few minutes)
    python examples/simulate/calibrate.py --size-mib 32 --quick
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples" / "reshard-te"))

# (name, source layout, target layout, source host of a rank, target host of a rank, runs)
# Ranks are placed by pipeline stage (or TP rank) on the hosts; runs: (Mbit/s, mode).
LAYOUTS: list[dict[str, Any]] = [
    {"name": "tp4->tp2", "source": "tp4", "target": "tp2", "shost": "0", "thost": "1",
     "runs": [(400, "pull"), (800, "push")]},
    {"name": "tp2,pp2->tp4", "source": "tp2,pp2", "target": "tp4", "shost": "pp", "thost": "2+tp//2",
     "runs": [(400, "pull"), (1000, "push")]},
    {"name": "tp2->tp1,dp2", "source": "tp2", "target": "tp1,dp2", "shost": "0", "thost": "1+dp",
     "runs": [(600, "pull"), (300, "push")]},
    {"name": "tp4,pp2->tp2,pp4", "source": "tp4,pp2", "target": "tp2,pp4", "shost": "pp", "thost": "2+pp//2",
     "runs": [(400, "pull"), (800, "push")]},
]


def progress(message: str) -> None:
    print(f"[calibrate] {message}", file=sys.stderr, flush=True)


def worker_id(side: str, rank: Any) -> str:
    return f"{side}-dp{rank.dp}.pp{rank.pp}.tp{rank.tp}.ep{rank.ep}"


def host_of(rule: str, rank: Any) -> int:
    return int(eval(rule, {}, {"tp": rank.tp, "pp": rank.pp, "dp": rank.dp, "ep": rank.ep}))  # noqa: S307 - our table


def run_worker(config: dict[str, Any]) -> None:
    """In a host's namespace: one rank's tensors on its own engine, served over the pipe."""
    import model
    import weight_manifest as wm
    from mooncake.engine import TransferEngine
    from weight_manifest_runtime import transfer
    from weight_manifest_runtime.group import Member, serve_pipe

    side, address = config["side"], config["address"]
    layout = model.Layout.parse(config[side])
    rank = wm.ParallelRank(**config["rank"])
    specs = model.synthetic_tensors(config["size_mib"] << 20)
    shard = model.synthetic_shard(specs, layout, rank, side == "source")
    where = dict(shard["where"], rank=rank, instance_id=f"{side}-instance", lease_id=f"{side}-lease", generation=1)
    engine = TransferEngine()
    if engine.initialize(address, "P2PHANDSHAKE", "tcp", "") != 0:
        raise SystemExit("error: the transfer engine did not initialise")
    session = f"{address}:{engine.get_rpc_port()}"
    member = Member(shard["tensors"], backend=transfer.EngineBackend(engine), session=session,
                    worker_id=worker_id(side, rank), endpoint=session, **where)
    serve_pipe(member, side=side, host=address)


class Hosts:
    """scripts/hosts.sh with our own prefix and /24 (namespaces only)."""

    def __init__(self, n: int, prefix: str, net: str) -> None:
        self.n, self.prefix, self.net = n, prefix, net
        self.env = {**os.environ, "WM_HOSTS_PREFIX": prefix, "WM_HOSTS_NET": net,
                    "WM_HOSTS_DIR": f"/tmp/{prefix}-hosts"}

    def run(self, *args: str) -> None:
        subprocess.run([str(ROOT / "scripts" / "hosts.sh"), *args], env=self.env, check=True,
                       capture_output=True, text=True)

    def address(self, host: int) -> str:
        return f"{self.net}.{host + 1}"


def measure_layout(hosts: Hosts, entry: dict[str, Any], size_mib: int, repeat: int) -> list[dict[str, Any]]:
    import model
    from weight_manifest_runtime.group import Coordinator, PipeGroup

    group = PipeGroup(timeout=120)
    coordinator = Coordinator(group)
    processes = []
    logs = Path(f"/tmp/{hosts.prefix}-logs")
    logs.mkdir(exist_ok=True)
    runs: list[dict[str, Any]] = []
    try:
        for side, rule in (("source", entry["shost"]), ("target", entry["thost"])):
            for rank in model.Layout.parse(entry[side]).ranks():
                h = host_of(rule, rank)
                config = {"side": side, "source": entry["source"], "target": entry["target"], "size_mib": size_mib,
                          "address": hosts.address(h),
                          "rank": {"dp": rank.dp, "tp": rank.tp, "pp": rank.pp, "ep": rank.ep}}
                log = open(logs / f"{worker_id(side, rank)}.log", "wb")
                processes.append(group.spawn(
                    ["ip", "netns", "exec", f"{hosts.prefix}{h}", sys.executable, __file__, "worker", json.dumps(config)],
                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        group.accept()
        bound = coordinator.bind(coordinator.plan())
        peers = coordinator.peers
        where = {side: {w: m.host for w, m in peers.items() if m.side == side} for side in ("source", "target")}
        for mbit, mode in entry["runs"]:
            hosts.run("shape", f"{mbit}mbit")
            # The first update opens the engines' connections; the runs after it count.
            coordinator.update(bound, mode=mode, verify_content=False)
            seconds = [coordinator.update(bound, mode=mode, verify_content=False)["seconds"] for _ in range(repeat)]
            # The fastest run: the one least disturbed by other load on the machine.
            measured = min(seconds)
            progress(f"{entry['name']} at {mbit} Mbit/s ({mode}): {[round(s, 3) for s in seconds]} s")
            runs.append({"layout": entry["name"], "mbit": mbit, "mode": mode, "bound": bound, "hosts": where,
                         "measured": measured, "samples": seconds})
        hosts.run("unshape")
    finally:
        coordinator.stop()
        for p in processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
    return runs


CONSTANTS = ("op_seconds", "batch_seconds", "pair_seconds", "byte_seconds", "rpc_seconds")


def predict(run: dict[str, Any], values: dict[str, float]) -> float:
    from weight_manifest_runtime import simulate
    from weight_manifest_runtime.transfer import DEFAULT_STAGING_BYTES
    from weight_manifest_runtime.transfer.schedule import schedule

    if "schedule" not in run:
        # The schedule does not depend on the engine constants: made once per run.
        run["schedule"] = schedule(run["bound"], mode=run["mode"], half=DEFAULT_STAGING_BYTES // 2)
    model = simulate.load_model("emulated", nic_gbit=run["mbit"] / 1000, **values)
    prediction = simulate.simulate(run["bound"], model, mode=run["mode"], hosts=run["hosts"], verify=False,
                                   sched=run["schedule"])
    transfer = prediction.phases["transfer"]
    assert transfer is not None
    return transfer


def fit(runs: list[dict[str, Any]]) -> tuple[dict[str, float], float]:
    """Coordinate descent on a log grid: the engine constants that minimise the largest
    relative error."""
    from weight_manifest_runtime import simulate

    base = simulate.presets()["emulated"]
    values = {k: float(getattr(base.engine, k)) if hasattr(base.engine, k) else float(getattr(base, k))
              for k in CONSTANTS}

    def worst(v: dict[str, float]) -> float:
        return max(abs(predict(r, v) - r["measured"]) / r["measured"] for r in runs)

    def descend(values: dict[str, float], factors: tuple[float, ...]) -> tuple[dict[str, float], float]:
        best = worst(values)
        for _ in range(6):
            improved = False
            for k in CONSTANTS:
                for factor in factors:
                    trial = {**values, k: values[k] * factor}
                    error = worst(trial)
                    if error < best - 1e-6:
                        best, values, improved = error, trial, True
            if not improved:
                break
        return values, best

    coarse = (0.1, 0.3, 0.5, 0.7, 0.85, 1.2, 1.5, 2, 3, 10)
    # From the preset and from two other corners; the best, then refined.
    starts = [values, {k: v * 0.1 for k, v in values.items()}, {k: v * 3 for k, v in values.items()}]
    values, best = min((descend(start, coarse) for start in starts), key=lambda vb: vb[1])
    values, best = descend(values, (0.8, 0.9, 0.95, 1.05, 1.1, 1.25))
    return values, best


def main(argv: list[str]) -> int:
    if argv[:1] == ["worker"]:
        run_worker(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the first two layouts only")
    parser.add_argument("--prefix", default=os.environ.get("WM_SIM_PREFIX", "wmsim"))
    parser.add_argument("--net", default=os.environ.get("WM_SIM_NET", "198.18.210"))
    parser.add_argument("--save", help="also write the runs and the fit to this JSON file")
    parser.add_argument("--measurements", help="also write the measured runs (bound plans too) to this JSON file")
    parser.add_argument("--refit", help="fit again to the measured runs of this file (no hosts, no root)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    runs: list[dict[str, Any]] = []
    from weight_manifest import BoundPlan

    if args.refit:
        runs = json.loads(Path(args.refit).read_text())["runs"]
        for r in runs:
            r["bound"] = BoundPlan.from_json(r["bound"])
    else:
        if os.geteuid() != 0:
            print("error: calibration needs root (network namespaces)", file=sys.stderr)
            return 1
        hosts = Hosts(4, args.prefix, args.net)
        try:
            hosts.run("net", "4")
            for entry in LAYOUTS[:2] if args.quick else LAYOUTS:
                runs += measure_layout(hosts, entry, args.size_mib, args.repeat)
        finally:
            hosts.run("down")
        if args.measurements:
            Path(args.measurements).write_text(json.dumps({"size_mib": args.size_mib, "runs": [
                {**{k: v for k, v in r.items() if k != "bound"}, "bound": r["bound"].to_json()} for r in runs]}))
    values, worst = fit(runs)
    rows = []
    for r in runs:
        predicted = predict(r, values)
        rows.append({"layout": r["layout"], "mbit": r["mbit"], "mode": r["mode"],
                     "bytes": sum(p.bytes for p in r["bound"].pairs), "measured_seconds": round(r["measured"], 4),
                     "predicted_seconds": round(predicted, 4),
                     "error": round(abs(predicted - r["measured"]) / r["measured"], 4)})
    out = {"calibration_max_error": round(max(row["error"] for row in rows), 4), "calibration_runs": len(rows),
           "constants": {k: float(f"{v:.4g}") for k, v in values.items()}, "size_mib": args.size_mib,
           "seconds": round(time.monotonic() - started, 1), "runs": rows}
    if args.save:
        Path(args.save).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
