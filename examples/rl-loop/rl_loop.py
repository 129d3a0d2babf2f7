"""An RL-shaped loop on emulated hosts (`make rl-loop`): a trainer of 2 ranks trains a small
Llama-like model with AdamW; after each step its new weights go to 2 vLLM engines (DP2) as
a delta, verified and committed atomically; each engine then generates greedily, and its
tokens must be HF transformers' on the trainer's gathered weights of that step.

Brings up 3 hosts (scripts/hosts.sh: network namespaces on a bridge, Ray with token
authentication) and runs the driver in host 0. Ray actors (members.py): the 2 trainer
ranks on host 0 (gloo between them, the checkpoint's tensors as DTensors sharded
``Shard(0)``), engine i on host i+1 (vLLM in the actor's process, written in place:
``weight_manifest_runtime.vllm`` ``direct``). Per step:

1. both ranks train one step (synthetic tokens; the first ``--full-steps`` train every
   tensor, later ones only ``--train`` the top decoder layer and the final norm);
2. **ours**: a versioned update (``weight_manifest_runtime.lifecycle``, ``mode="delta"``): the
   sources' changed blocks since the last commit (content digests against their snapshot),
   moved trainer -> engines on each host's Mooncake Transfer Engine, every target's
   content digests checked against the sources', committed at the barrier;
3. each engine generates greedily from fixed prompts;
4. **the oracle**: the trainer gathers its tensors to rank 0, which saves them as
   safetensors; HF transformers (not vLLM, not this project) generates from them here;
5. **the peers**, on the same weights: (a) vLLM's reload from that checkpoint on disk
   (the gather and the save counted), (b) a gather to rank 0 and a gloo broadcast to the
   engines, which load with the model's ``load_weights``, (c) the trainer's own reshard
   ``Shard(0)`` -> ``Shard(1)`` with DTensor ``redistribute``; the engines' tokens are
   checked again after (a) and (b).

The last line is one JSON object (see the README next to this file). Everything it
started is torn down, also on failure.

    python rl_loop.py                  # 8 steps (3 full, 5 delta), 2 engines
    python rl_loop.py --steps 2 --engines 1 --full-steps 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

PROMPTS = [[1, 2, 3, 4], [17, 300, 5], [500, 7, 7, 9, 11, 13]]
NEW_TOKENS = 12
GLOO_PORT, BROADCAST_PORT = 29511, 29512


def progress(message: str) -> None:
    print(f"[rl-loop] {message}", file=sys.stderr, flush=True)


def model_config(args: argparse.Namespace) -> Any:
    import transformers

    return transformers.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=3 * args.hidden,
                                    num_hidden_layers=args.layers, num_attention_heads=args.hidden // 64,
                                    num_key_value_heads=max(1, args.hidden // 256), head_dim=64,
                                    initializer_range=0.2, tie_word_embeddings=False)


def write_model(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The step-0 checkpoint: a random init, saved as HF saves it."""
    import torch
    import transformers

    torch.manual_seed(args.seed)
    model = transformers.LlamaForCausalLM(model_config(args))
    model.save_pretrained(folder)
    return {n: tuple(t.shape) for n, t in model.state_dict().items()}


def hf_greedy(folder: Path) -> list[list[int]]:
    """HF transformers' greedy continuation of each prompt: the independent oracle."""
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = torch.tensor([prompt])
            for _ in range(NEW_TOKENS):
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            out.append(ids[0, len(prompt):].tolist())
    return out


def changed_bytes(changed: list[Any]) -> int:
    """The bytes of a delta's changed source ranges (``[worker, device, ranges]`` as a
    request carries them: :func:`weight_manifest_runtime.transfer.changed_from_wire`)."""
    from weight_manifest_runtime import transfer

    return sum(int((r[:, 1] - r[:, 0]).sum()) for r in transfer.changed_from_wire(changed).values())


def time_calls(coordinator: Any) -> dict[str, float]:
    """Seconds spent in the group's calls, by op (where an update's time goes), from now:
    its transport's rounds are timed (every view of the coordinator shares it)."""
    spent: dict[str, float] = {}
    transport = coordinator.transport
    call = transport.call_all

    def timed(calls: Any, *rest: Any, **options: Any) -> Any:
        clock = time.perf_counter()
        try:
            return call(calls, *rest, **options)
        finally:
            op = "+".join(sorted({str(c[0]) for c in calls.values()})) or "none"
            spent[op] = spent.get(op, 0.0) + time.perf_counter() - clock

    transport.call_all = timed
    return spent


def drive(args: argparse.Namespace) -> dict[str, Any]:
    """In host 0: the actors, the steps, the oracle, the peers."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    import members
    from weight_manifest_runtime.group import Coordinator
    from weight_manifest_runtime.group.ray import RayGroup, new_key
    from weight_manifest_runtime.lifecycle import DecisionLog, VersionedUpdate

    net = os.environ["WM_HOSTS_NET"]
    work = Path(args.workdir)
    step0 = work / "step-0"
    shapes = write_model(args, step0)
    names = sorted(shapes)
    layer = args.layers - 1
    trainable = [n for n in names if n.startswith(f"model.layers.{layer}.") or n == "model.norm.weight"]
    ray.init(address=os.environ["WM_RAY_ADDRESS"], logging_level="ERROR", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(HERE), "GLOO_SOCKET_IFNAME": "eth0",
                                       "OMP_NUM_THREADS": "1"}})
    nodes = {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}

    def on(host: int) -> Any:
        return NodeAffinitySchedulingStrategy(nodes[f"{net}.{host + 1}"], soft=False)

    key, name = new_key(), "rl-loop"
    group = RayGroup(name, key, timeout=600)
    trainer_cls = ray.remote(num_cpus=0, max_restarts=0)(members.Trainer)
    engine_cls = ray.remote(num_cpus=0, max_restarts=0)(members.Engine)
    master = f"{net}.1"
    clock = time.perf_counter()
    trainers = [trainer_cls.options(scheduling_strategy=on(0)).remote(
        name, key, r, args.ranks, master, GLOO_PORT, str(step0), trainable, args.full_steps, args.lr, args.seed)
        for r in range(args.ranks)]
    engines = [engine_cls.options(scheduling_strategy=on(1 + i)).remote(name, key, i, str(step0))
               for i in range(args.engines)]
    group.wait_for(args.ranks + args.engines)
    ray.get([t.pid.remote() for t in trainers] + [e.pid.remote() for e in engines])
    progress(f"{args.ranks} trainer ranks on host 0, {args.engines} vLLM engines on hosts 1-{args.engines} "
             f"up in {time.perf_counter() - clock:.1f} s")
    coordinator = Coordinator(group)
    calls = time_calls(coordinator)
    bound = coordinator.bind(coordinator.plan())
    log = DecisionLog(str(work / "decisions"), name)
    total = sum(r["nbytes"] for r in coordinator.side("source").inventory["tensors"])
    trained_bytes = sum(4 * math.prod(shapes[n]) for n in trainable)

    # Ours beside peer (c): the trainer's own reshard Shard(0) -> Shard(1) in a group of
    # its own (each rank a source and a target member), on the same Transfer Engines.
    reshard_key = new_key()
    reshard_group = RayGroup(f"{name}-reshard", reshard_key, timeout=600)
    ray.get([t.reshard_join.remote(f"{name}-reshard", reshard_key) for t in trainers])
    reshard_group.wait_for(2 * args.ranks)
    resharder = Coordinator(reshard_group)
    reshard_bound = resharder.bind(resharder.plan())

    # The broadcast peer's group: trainer rank 0 and the engines.
    ray.get([trainers[0].peer_broadcast_join.remote(master, BROADCAST_PORT, args.engines)]
            + [e.peer_broadcast_join.remote(master, BROADCAST_PORT, args.engines) for e in engines])
    order = [(n, list(shapes[n])) for n in names]

    # Before any step: the engines serve generation 1, the checkpoint on disk.
    expected = hf_greedy(step0)
    first = ray.get([e.generate.remote(PROMPTS, NEW_TOKENS) for e in engines])
    tokens_equal = all(f["tokens"] == expected for f in first)
    oracle = [expected]
    steps: list[dict[str, Any]] = []
    coordinator.snapshot(args.block)
    for step in range(1, args.steps + 1):
        trained = ray.get([t.train_step.remote() for t in trainers])
        calls.clear()
        clock = time.perf_counter()
        update = VersionedUpdate(coordinator, log, block_elements=args.block)
        result = update.run(bound, step + 1, mode="delta")
        seconds = time.perf_counter() - clock
        clock = time.perf_counter()
        # The next delta's base: what the engines now hold (the bytes this delta's change
        # detection looked at, taken over without hashing again).
        coordinator.snapshot(args.block, advance=True)
        snapshot_seconds = time.perf_counter() - clock
        delta = changed_bytes(update.changed or [])
        served = ray.get([e.generate.remote(PROMPTS, NEW_TOKENS) for e in engines])

        # The oracle: the trainer's own tensors, gathered and saved; HF generates from them.
        folder = work / f"step-{step}"
        clock = time.perf_counter()
        ray.get([t.peer_save.remote(str(folder)) for t in trainers])
        save_seconds = time.perf_counter() - clock
        shutil.copy(step0 / "config.json", folder / "config.json")
        expected = hf_greedy(folder)
        oracle.append(expected)
        equal = [s["tokens"] == expected and s["generation"] == step + 1 for s in served]
        tokens_equal = tokens_equal and all(equal)

        # Peer (a): vLLM's reload from disk (after the gather and save above).
        reload_seconds = max(ray.get([e.peer_reload.remote(str(folder)) for e in engines]))
        after_a = ray.get([e.generate.remote(PROMPTS, NEW_TOKENS) for e in engines])
        # Peer (b): gather to rank 0, gloo broadcast, load_weights.
        clock = time.perf_counter()
        ray.get([t.peer_broadcast.remote() for t in trainers] + [e.peer_broadcast.remote(order) for e in engines])
        broadcast_seconds = time.perf_counter() - clock
        after_b = ray.get([e.generate.remote(PROMPTS, NEW_TOKENS) for e in engines])
        peers_equal = all(a["tokens"] == expected for a in after_a + after_b)
        # Peer (c): the trainer's reshard with DTensor redistribute.
        redistributed = ray.get([t.peer_redistribute.remote() for t in trainers])
        clock = time.perf_counter()
        resharded = resharder.update(reshard_bound)
        reshard_seconds = time.perf_counter() - clock
        reshard_equal = all(ray.get([t.reshard_check.remote() for t in trainers]))
        record = {
            "step": step, "full": trained[0]["full"], "loss": round(statistics.mean(t["loss"] for t in trained), 4),
            "tokens_equal": equal, "peers_tokens_equal": peers_equal, "delta_bytes": delta,
            "delta_fraction": round(delta / total, 4), "update_seconds": round(seconds, 4),
            "snapshot_seconds": round(snapshot_seconds, 4),
            "phases": {k: round(float(result.get(k, 0.0)), 4) for k in (
                "prepare_seconds", "transfer_seconds", "verify_seconds", "commit_seconds")},
            "undo_bytes": int(result.get("undo_bytes", 0)),
            "calls": {op: round(v, 4) for op, v in calls.items()},
            "disk_seconds": round(save_seconds + reload_seconds, 4), "disk_save_seconds": round(save_seconds, 4),
            "disk_reload_seconds": round(reload_seconds, 4), "broadcast_seconds": round(broadcast_seconds, 4),
            "redistribute_seconds": round(max(r["seconds"] for r in redistributed), 4),
            "reshard_seconds": round(reshard_seconds, 4), "reshard_bytes": int(resharded["bytes"]),
            "reshard_equal": reshard_equal,
        }
        steps.append(record)
        progress(json.dumps(record))
    ray.shutdown()
    deltas = [s for s in steps if not s["full"]]
    fulls = [s for s in steps if s["full"]]
    median = statistics.median

    def med(rows: list[dict[str, Any]], key: str) -> float:
        return round(median(r[key] for r in rows), 4) if rows else 0.0

    peers = {"disk_seconds": med(steps, "disk_seconds"), "broadcast_seconds": med(steps, "broadcast_seconds"),
             "redistribute_seconds": med(steps, "redistribute_seconds")}
    reshard = {"seconds": med(steps, "reshard_seconds"), "redistribute_seconds": peers["redistribute_seconds"],
               "bytes": steps[-1]["reshard_bytes"] if steps else 0,
               "equal_to_redistribute": all(s["reshard_equal"] for s in steps)}
    fastest = min(peers["disk_seconds"], peers["broadcast_seconds"])
    return {
        "steps": len(steps), "tokens_equal": tokens_equal and len(steps) == args.steps, "engine": "vllm",
        "trainer_ranks": args.ranks, "engines": args.engines, "bytes": total,
        "delta_fraction": med(deltas, "delta_fraction"), "trained_fraction": round(trained_bytes / total, 4),
        "update_seconds": med(deltas, "update_seconds"), "full_update_seconds": med(fulls, "update_seconds"),
        "peers": peers, "reshard": reshard, "peers_tokens_equal": all(s["peers_tokens_equal"] for s in steps),
        "full_vs_fastest_peer": round(med(fulls, "update_seconds") / fastest, 3) if fulls else None,
        "delta_speedup_vs_fastest_peer": round(fastest / med(deltas, "update_seconds"), 2) if deltas else None,
        # Steps after which HF's tokens differ from the step before's: an update that did
        # not land would show there.
        "steps_that_changed_tokens": sum(a != b for a, b in zip(oracle, oracle[1:])),
        "runs": steps,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--full-steps", type=int, default=3,
                        help="the first steps train every tensor (the first update also opens the engines' connections)")
    parser.add_argument("--engines", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=16384,
                        help="elements per content block (the delta's granularity and the digests')")
    parser.add_argument("--gbit", type=float, default=0.0, help="shape each host's link (Gbit/s; 0: unshaped)")
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("drive", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive == "drive":
        print(json.dumps(drive(args)))
        return 0
    from weight_manifest_runtime.hosts import Cluster

    prefix = os.environ.get("WM_HOSTS_PREFIX", "wmrl")
    net = os.environ.get("WM_HOSTS_NET", "198.18.150")
    cluster = Cluster(1 + args.engines, script=ROOT / "scripts" / "hosts.sh", python=sys.executable, prefix=prefix,
                      net=net)
    # Inside the cluster's state dir: removed with the hosts, and with stale ones of the
    # prefix when the next run starts.
    work = Path(cluster.env.get("WM_HOSTS_DIR", f"/tmp/{cluster.prefix}-hosts")) / "rl-loop"
    result: dict[str, Any] = {}
    try:
        cluster.up()
        work.mkdir(parents=True)
        progress(f"{1 + args.engines} hosts up in {cluster.up_seconds:.1f} s")
        if args.gbit:
            cluster.hosts("shape", f"{args.gbit * 1000:g}mbit")
        passed = [a for a in argv if a != "drive"]
        # The driver's progress goes to this standard error as it runs; its last line is the JSON.
        done = subprocess.run([str(cluster.script), "exec", "0", sys.executable, __file__, "drive", "--workdir",
                               str(work), *passed], env=cluster.env, stdout=subprocess.PIPE, text=True, timeout=3600)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"the driver exited {done.returncode}")
        result = json.loads(lines[-1])
    except Exception as error:  # noqa: BLE001 - reported, then everything is torn down
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        cluster.down()
        shutil.rmtree(work, ignore_errors=True)
        progress(f"down in {cluster.down_seconds:.1f} s; namespaces left: {cluster.leftovers()}")
    result.update(hosts=1 + args.engines, link_gbit=args.gbit or None, up_seconds=round(cluster.up_seconds, 1),
                  down_seconds=round(cluster.down_seconds, 1))
    print(json.dumps(result))
    ok = result["tokens_equal"] and result["steps"] >= 1 and not cluster.leftovers()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
