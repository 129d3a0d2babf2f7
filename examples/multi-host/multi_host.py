"""A weight update and a Store round trip across 4 emulated hosts with shaped links
(`make multi-host`), every byte checked.

Brings up 4 hosts (scripts/hosts.sh: network namespaces on a bridge, Ray with token
authentication, a Mooncake master and store holder on host 0), shapes each host's link to
``--gbit`` both ways, and runs the driver in host 0: a synthetic model (default 1 GiB, the
model of examples/reshard-te/model.py) held as TP4/PP2 by 8 Ray actors on hosts 0-1
(stage 0 on host 0, stage 1 on host 1) updates TP2/PP4 targets on hosts 2-3 (stages 0-1 on
host 2, 2-3 on host 3) over each host's Transfer Engine, checked by content digests and by
every target against the model's defining function; then the sources save to the Store
and the targets, cleared, restore from it (content digests and every byte checked again).
The last line is one JSON object: ``verified``, ``hosts``, ``bytes``, ``link_gbit``,
``seconds`` (the update's transfer), ``floor_seconds`` (the busiest host link's bytes over
its rate), ``restore_seconds``, ``restore_floor_seconds`` (the same for the restore),
medians of ``--repeat`` runs, and the cluster's up and down times. Everything it started
is torn down, also on failure.

    python multi_host.py                      # 4 hosts, 1 GiB, 2 Gbit/s per host
    python multi_host.py --size-mib 256 --gbit 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples" / "reshard-te"))
sys.path.insert(0, str(HERE))


def progress(message: str) -> None:
    print(f"[multi-host] {message}", file=sys.stderr, flush=True)


def link_floor(pairs: list[dict[str, Any]], host_of: dict[str, str], rate: float) -> float:
    """The busiest host link's bytes (each host's egress and ingress counted apart) over
    ``rate`` bytes per second; bytes within one host cross no link."""
    load: dict[tuple[str, str], int] = defaultdict(int)
    for pair in pairs:
        source, target = host_of[pair["source_worker_id"]], host_of[pair["target_worker_id"]]
        if source != target:
            load[(source, "out")] += int(pair["wire_bytes"])
            load[(target, "in")] += int(pair["wire_bytes"])
    return max(load.values(), default=0) / rate


def drive(args: argparse.Namespace) -> dict[str, Any]:
    """In host 0: the actors, the update, the save and the restore."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    import model
    from ranks import Rank
    from weight_manifest_runtime import store
    from weight_manifest_runtime.group import Coordinator
    from weight_manifest_runtime.group.ray import RayGroup, new_key

    net = os.environ["WM_HOSTS_NET"]
    master = os.environ["WM_STORE_MASTER"]
    ray.init(address=os.environ["WM_RAY_ADDRESS"], logging_level="ERROR", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": f"{ROOT / 'examples' / 'reshard-te'}:{HERE}"}})
    nodes = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}
    key, name = new_key(), "multi-host"
    group = RayGroup(name, key, timeout=600)
    remote = ray.remote(num_cpus=0, max_restarts=0)(Rank)
    size = args.size_mib << 20
    actors = []
    layouts = {"source": (model.Layout(tp=4, pp=2), lambda r: r.pp), "target": (model.Layout(tp=2, pp=4),
                                                                                lambda r: 2 + r.pp // 2)}
    if args.replicas:
        # Two source replicas, one per host; one target replica, its stages on hosts 2-3.
        layouts = {"source": (model.Layout(tp=2, pp=2, dp=2), lambda r: r.dp),
                   "target": (model.Layout(tp=2, pp=2), lambda r: 2 + r.pp)}
    for side, (layout, host) in layouts.items():
        for rank in layout.ranks():
            node = nodes[f"{net}.{host(rank) + 1}"]
            actors.append(remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                name, key, side, "trainer" if side == "source" else "rollout", layout.__dict__,
                {"dp": rank.dp, "tp": rank.tp, "pp": rank.pp, "ep": rank.ep}, side == "source", size, master))
    group.wait_for(len(actors))
    coordinator = Coordinator(group)
    host_of = {w: m.host for w, m in coordinator.peers.items()}
    sources, targets = coordinator.workers("source"), coordinator.workers("target")
    progress(f"{len(sources)} sources on {sorted({host_of[w] for w in sources})}, {len(targets)} targets on "
             f"{sorted({host_of[w] for w in targets})}")
    rate = args.gbit * 1e9 / 8
    if args.replicas:
        source_layout, source_host = layouts["source"]
        source_hosts = {(r.dp, r.tp, r.pp, r.ep): f"{net}.{source_host(r) + 1}" for r in source_layout.ranks()}
        result = replica_choices(coordinator, host_of, source_hosts, rate, args)
        ray.shutdown()
        return result
    bound = coordinator.bind(coordinator.plan())
    updates, restores = [], []
    saved = None
    tensors = len(coordinator.side("source").placement.tensors)
    verified = True
    for repetition in range(args.repeat):
        if repetition:
            coordinator.request_all(targets, {"op": "clear"})
        result = coordinator.update(bound, mode=args.mode, verify="verify")
        # What the checks covered: every tensor's digest, every byte each target holds.
        verified = (verified and result["verified_tensors"] == tensors
                    and sum(c["verified"] for c in result["target_checks"].values()) == result["bytes"])
        updates.append(result["seconds"])
        floor = link_floor(result["pairs"], host_of, rate)
        progress(f"update {repetition + 1}: {result['bytes']} bytes in {result['seconds']:.2f} s "
                 f"(floor {floor:.2f} s), every byte verified")
        if saved is None:
            saved = store.save(coordinator, group_client(master, net), store.SaveOptions("multi-host", 1))
            progress(f"saved {saved.bytes} bytes as {saved.objects} objects in {saved.seconds:.2f} s")
        coordinator.request_all(targets, {"op": "clear"})
        restored = store.restore(coordinator, group_client(master, net), saved.manifest_key,
                                 manifest_digest=saved.manifest_digest, backend="store")
        checks = coordinator.request_all(targets, {"op": "verify"})
        verified = (verified and restored.verified_tensors == tensors
                    and sum(c["verified"] for c in checks.values()) == restored.bytes)
        store_host = f"{net}.1"
        restore_floor = link_floor([{**p, "source_worker_id": "store"} for p in restored.pairs],
                                   {**host_of, "store": store_host}, rate)
        restores.append(restored.seconds)
        progress(f"restore {repetition + 1}: {restored.bytes} bytes in {restored.seconds:.2f} s "
                 f"(floor {restore_floor:.2f} s), every byte verified")
    ray.shutdown()
    return {"verified": verified, "bytes": result["bytes"], "link_gbit": args.gbit,
            "seconds": round(statistics.median(updates), 3), "floor_seconds": round(floor, 3),
            "restore_seconds": round(statistics.median(restores), 3),
            "restore_floor_seconds": round(restore_floor, 3), "restore_bytes": restored.bytes,
            "update_runs": [round(s, 3) for s in updates], "restore_runs": [round(s, 3) for s in restores]}


def replica_choices(coordinator: Any, host_of: dict[str, str], source_hosts: dict[tuple[int, int, int, int], str],
                    rate: float, args: argparse.Namespace) -> dict[str, Any]:
    """The same update planned with each replica choice: ``balanced`` (each target reads
    its own DP replica) and ``spread`` (any replica, the busiest source host first), each
    timed and every byte verified, with each one's floor."""
    targets = coordinator.workers("target")
    tensors = len(coordinator.side("source").placement.tensors)
    out: dict[str, Any] = {"verified": True, "replicas": True, "link_gbit": args.gbit}
    for choice in ("balanced", "spread"):
        hosts = source_hosts if choice == "spread" else None
        reshard = coordinator.plan(replica_choice=choice, source_hosts=hosts)
        bound = coordinator.bind(reshard)
        seconds = []
        for _ in range(args.repeat):
            coordinator.request_all(targets, {"op": "clear"})
            result = coordinator.update(bound, mode=args.mode, verify="verify")
            out["verified"] = (out["verified"] and result["verified_tensors"] == tensors
                               and sum(c["verified"] for c in result["target_checks"].values()) == result["bytes"])
            seconds.append(result["seconds"])
        floor = link_floor(result["pairs"], host_of, rate)
        progress(f"{choice}: {result['bytes']} bytes in {statistics.median(seconds):.2f} s (floor {floor:.2f} s)")
        out.update({"bytes": result["bytes"], f"{choice}_seconds": round(statistics.median(seconds), 3),
                    f"{choice}_floor_seconds": round(floor, 3), f"{choice}_runs": [round(s, 3) for s in seconds]})
    out["spread_speedup"] = round(out["balanced_seconds"] / out["spread_seconds"], 2)
    return out


_CLIENTS: dict[str, Any] = {}


def group_client(master: str, net: str) -> Any:
    """The driver's own Store client (no memory of its own)."""
    if master not in _CLIENTS:
        from mooncake.store import MooncakeDistributedStore

        client = MooncakeDistributedStore()
        if client.setup(f"{net}.1", "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", master) != 0:
            raise SystemExit(f"error: the driver's Store client did not connect to {master}")
        _CLIENTS[master] = client
    return _CLIENTS[master]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--gbit", type=float, default=2.0, help="each host's link rate, both ways (Gbit/s)")
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--mode", choices=("push", "pull"), default="pull",
                        help="who drives the engine: the sources (push) or the targets (pull, default)")
    parser.add_argument("--replicas", action="store_true",
                        help="two source DP replicas (hosts 0 and 1) into one target replica (hosts 2-3), "
                             "planned with each replica choice: balanced and spread")
    parser.add_argument("drive", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive == "drive":
        print(json.dumps(drive(args)))
        return 0
    from weight_manifest_runtime.hosts import Cluster

    cluster = Cluster(args.hosts, script=ROOT / "scripts" / "hosts.sh", python=sys.executable,
                      store_bytes=(args.size_mib << 20) * 2 + (256 << 20))
    try:
        cluster.up()
        progress(f"{args.hosts} hosts up in {cluster.up_seconds:.1f} s")
        cluster.hosts("shape", f"{args.gbit * 1000:g}mbit")
        result = cluster.run_json(0, [sys.executable, __file__, "drive", "--size-mib", str(args.size_mib),
                                      "--gbit", str(args.gbit), "--repeat", str(args.repeat), "--mode", args.mode]
                                  + (["--replicas"] if args.replicas else []), timeout=1800)
    except Exception as error:  # noqa: BLE001 - reported, then everything is torn down
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        cluster.down()
        progress(f"down in {cluster.down_seconds:.1f} s; namespaces left: {cluster.leftovers()}")
    result.update(hosts=args.hosts, up_seconds=round(cluster.up_seconds, 1), down_seconds=round(cluster.down_seconds, 1))
    print(json.dumps(result))
    return 0 if result["verified"] and not cluster.leftovers() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
