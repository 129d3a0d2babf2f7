"""``make rl-loop``: an RL loop on a cluster's shape (needs root: network namespaces). A
trainer of ``--ranks`` (4) ranks trains a small Llama-like model with AdamW; after each
step its weights go to ``--engines`` (2) ``vllm serve`` engines of tensor parallelism
``--tp`` (2) through vLLM's own weight-sync API with the backend ``weight_manifest``,
verified and committed at once; each engine's greedy tokens must be HF transformers' on
the trainer's gathered weights. The peers (the disk route, a chain broadcast as vLLM's
nccl backend does it, gloo's broadcast; DTensor ``redistribute`` beside the trainer's own
reshard) run on the same weights and links, each with its floor.

**A link per GPU**: every trainer rank on an emulated host of its own, every engine worker
moved into a host of its own after its server started (links.py), a storage host; each
host's one link shaped to ``--gbit`` in both directions (tc tbf). Hosts (``WM_HOSTS_PREFIX``
``wmrl``, ``WM_HOSTS_NET`` 198.18.150): the ranks 0..R-1, the storage R, then per engine its
server and its TP workers. Everything is torn down, also on failure.

The last line is one JSON object (the README next to this file lists its fields)."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = ROOT / "scripts" / "hosts.sh"
PORT, GLOO_PORT, STORAGE_PORT = 8000, 29541, 8100

# The helpers the vLLM examples share live with the vllm-api example.
sys.path.insert(0, str(ROOT / "examples" / "vllm-api"))
from serving import stop  # noqa: E402


def progress(message: str) -> None:
    print(f"[rl-loop] {message}", file=sys.stderr, flush=True)


def write_model(args: argparse.Namespace, folder: Path) -> None:
    """The step-0 checkpoint: a random init, saved as HF saves it."""
    import torch
    import transformers

    config = transformers.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                                      intermediate_size=3 * args.hidden, num_hidden_layers=args.layers,
                                      num_attention_heads=args.hidden // 64,
                                      num_key_value_heads=max(1, args.hidden // 256), head_dim=64,
                                      initializer_range=0.2, tie_word_embeddings=False)
    torch.manual_seed(args.seed)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)


class Layout:
    """Which emulated host is what."""

    def __init__(self, ranks: int, engines: int, tp: int) -> None:
        self.ranks, self.engines, self.tp = ranks, engines, tp
        self.storage = ranks
        self.count = ranks + 1 + engines * (1 + tp)

    def server(self, engine: int) -> int:
        return self.ranks + 1 + engine * (1 + self.tp)

    def workers(self, engine: int) -> list[int]:
        return [self.server(engine) + 1 + t for t in range(self.tp)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--full-steps", type=int, default=2, help="the first steps train every tensor: full updates")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--engines", type=int, default=2)
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=0,
                        help="elements per content block, a delta's granularity (default: the largest divisor of 256 "
                        "that divides every point where the engines split a tensor, so a worker's digests carry no "
                        "partial blocks' bytes)")
    parser.add_argument("--gbit", type=float, default=0.2, help="every link's rate in Gbit/s (0: unshaped)")
    parser.add_argument("--chunk-mb", type=float, default=4.0, help="the chain's chunk")
    parser.add_argument("--peers", default="disk,chain,broadcast,reshard")
    parser.add_argument("--transfer-mode", default="push", choices=("push", "pull"),
                        help="ours: each trainer rank writes (push) or each engine worker reads (pull)")
    parser.add_argument("--concurrent-pairs", type=int, default=4, help="ours: the pairs a rank runs at once")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("error: make rl-loop makes network namespaces: run it as root", file=sys.stderr)
        return 2
    prefix = os.environ.setdefault("WM_HOSTS_PREFIX", "wmrl")
    net = os.environ.setdefault("WM_HOSTS_NET", "198.18.150")
    env = {**os.environ, "WM_PYTHON": sys.executable}
    layout = Layout(args.ranks, args.engines, args.tp)
    # o_proj's and down_proj's columns are split between TP ranks at hidden/TP and 3*hidden/TP.
    args.block = args.block or math.gcd(256, args.hidden // args.tp, 3 * args.hidden // args.tp)
    # A stop (SIGTERM, a test's timeout) still tears everything down: the finally below.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    def address(host: int) -> str:
        return f"{net}.{host + 1}"

    def hosts(*command: str) -> None:
        subprocess.run([str(SCRIPT), *command], env=env, check=True, capture_output=True, text=True)

    def start(host: int, command: list[str], log: Path, extra: dict[str, str]) -> subprocess.Popen[bytes]:
        own = {**env, "MC_TCP_BIND_ADDRESS": address(host), "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
               "NO_PROXY": "*", "no_proxy": "*", "PYTHONPATH": str(HERE), **extra}
        return subprocess.Popen([str(SCRIPT), "exec", str(host), *command], env=own, stdout=subprocess.PIPE,
                                stderr=log.open("wb"), start_new_session=True)

    work = Path(tempfile.mkdtemp(prefix="wm-rl-loop-"))
    processes: list[subprocess.Popen[bytes]] = []
    result: Optional[dict[str, Any]] = None
    started = time.monotonic()
    try:
        write_model(args, work / "step-0")
        hosts("down")
        hosts("net", str(layout.count))
        if args.gbit:
            hosts("shape", f"{args.gbit * 1000:g}mbit")
        progress(f"{layout.count} hosts (prefix {prefix}, {net}.0/24), each link "
                 + (f"{args.gbit:g} Gbit/s" if args.gbit else "unshaped"))
        processes.append(start(layout.storage, [sys.executable, str(HERE / "storage.py"), "--host",
                                                address(layout.storage), "--port", str(STORAGE_PORT), "--dir",
                                                str(work / "storage")], work / "storage.log", {}))
        servers = []
        for e in range(args.engines):
            host = layout.server(e)
            command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(work / "step-0"),
                       "--skip-tokenizer-init", "--enforce-eager", "--dtype", "float32", "--max-model-len", "256",
                       "--max-num-seqs", "8", "--kv-cache-memory-bytes", str(64 << 20), "--host", address(host), "--port", str(PORT), "--seed", "0",
                       "--tensor-parallel-size", str(args.tp), "--distributed-executor-backend", "mp",
                       "--worker-extension-cls", "links.WorkerLinks",
                       "--weight-transfer-config", json.dumps({"backend": "weight_manifest"}),
                       "--additional-config", json.dumps({"weight_manifest_plain_linears": True})]
            processes.append(start(host, command, work / f"server-{e}.log",
                                   {"VLLM_SERVER_DEV_MODE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}))
            servers.append({"url": f"http://{address(host)}:{PORT}",
                            "namespaces": [f"{prefix}{w}" for w in layout.workers(e)],
                            "addresses": [address(w) for w in layout.workers(e)],
                            "folder": str(work / f"engine-{e}-disk")})
        progress(f"{args.engines} servers of TP {args.tp} starting; {args.ranks} trainer ranks")
        ranks = []
        for rank in range(args.ranks):
            command = [sys.executable, str(HERE / "trainer_rank.py"), "--rank", str(rank), "--world", str(args.ranks),
                       "--master", address(0), "--port", str(GLOO_PORT), "--model", str(work / "step-0"),
                       "--servers", json.dumps(servers), "--storage", f"http://{address(layout.storage)}:{STORAGE_PORT}",
                       "--switch", f"{prefix}sw", "--gbit", str(args.gbit), "--steps", str(args.steps),
                       "--full-steps", str(args.full_steps), "--lr", str(args.lr), "--seed", str(args.seed),
                       "--block", str(args.block), "--chunk-elements", str(int(args.chunk_mb * (1 << 20)) // 4),
                       "--peers", args.peers, "--transfer-mode", args.transfer_mode,
                       "--concurrent-pairs", str(args.concurrent_pairs)]
            ranks.append(start(rank, command, work / f"rank-{rank}.log", {}))
        processes += ranks
        assert ranks[0].stdout is not None
        for line in ranks[0].stdout:
            text = line.decode().strip()
            if text.startswith('{"progress"'):
                progress(json.dumps(json.loads(text)["progress"]))
            elif text.startswith("{"):
                result = json.loads(text)
        code = ranks[0].wait(timeout=600)
        if code != 0 or result is None:
            raise RuntimeError(f"trainer rank 0 exited {code}: {(work / 'rank-0.log').read_text()[-3000:]}")
    except Exception as error:  # noqa: BLE001 - reported, then everything is torn down
        print(f"error: {error}; logs in {work}", file=sys.stderr)
    finally:
        stop(processes)
        clock = time.monotonic()
        subprocess.run([str(SCRIPT), "down"], env=env, capture_output=True)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        leftovers = [n for n in left if n.startswith(prefix)]
        if result is not None:
            # The checkpoints (the model, the storage's copy, each engine's) and the logs: kept
            # only when something failed, to read.
            shutil.rmtree(work, ignore_errors=True)
        progress(f"down in {time.monotonic() - clock:.1f} s; namespaces left: {leftovers}"
                 + ("" if result is not None else f"; logs in {work}"))
    if result is None:
        return 1
    summary = summarise(result, args, layout)
    summary.update(hosts=layout.count, seconds=round(time.monotonic() - started, 1), leftovers=leftovers)
    print(json.dumps(summary), flush=True)
    return 0 if summary["tokens_equal"] and not leftovers else 1



def summarise(result: dict[str, Any], args: argparse.Namespace, layout: Layout) -> dict[str, Any]:
    """The JSON line: medians over the steps, each path's floor, the formula beside them."""
    runs = result["runs"]
    median = statistics.median
    fulls = [r for r in runs if r["mode"] == "full"]
    deltas = [r for r in runs if r["mode"] == "delta"]

    def med(rows: list[dict[str, Any]], *path: str) -> Optional[float]:
        values = []
        for row in rows:
            value: Any = row
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None:
                values.append(float(value))
        return round(median(values), 4) if values else None

    names = sorted({n for r in runs for n in r["peers"]})
    peers = {n: {"seconds": med(runs, "peers", n, "seconds"), "floor_seconds": med(runs, "peers", n, "floor_seconds"),
                 "busiest_link": runs[-1]["peers"][n]["busiest_link"],
                 "tokens_equal": all(r["peers"][n].get("tokens_equal", True) for r in runs if n in r["peers"])}
             for n in names}
    rate = args.gbit * 1e9 / 8
    model = int(result["model_bytes"])
    pairs = result["full_pairs"]
    planned = max(list(pairs["out"].values()) + list(pairs["in"].values()) + [0])
    engine_routes = [peers[n]["seconds"] for n in ("disk", "chain", "chain_after_gather", "broadcast") if n in peers]
    fastest = min(s for s in engine_routes if s is not None) if engine_routes else None
    full = med(fulls, "ours", "seconds")
    full_floor = med(fulls, "ours", "floor_seconds")
    delta = med(deltas, "ours", "seconds")
    full_bytes = med(fulls, "bytes")
    return {
        "steps": len(runs), "tokens_equal": bool(result["tokens_equal"]), "engine": "vllm",
        "trainer_ranks": args.ranks, "engines": args.engines, "engine_tp": int(result["tp"]),
        "links": args.ranks + args.engines * args.tp + 1 if args.gbit else 0, "link_gbit": args.gbit or None,
        "model_bytes": model,
        "full_update_seconds": full, "full_floor_seconds": full_floor,
        "update_seconds": delta, "delta_floor_seconds": med(deltas, "ours", "floor_seconds"),
        "delta_fraction": round(med(deltas, "bytes") / full_bytes, 4) if deltas and full_bytes else None,
        "peers": peers,
        # The formula, on the bytes of the checkpoint (no headers): ours
        # max(E*M/T, M/TP), the chain's M, each over a link's rate; and ours from the plan.
        "formula": {"ours_seconds": round(max(args.engines * model / args.ranks, model / layout.tp) / rate, 4)
                    if rate else None,
                    "chain_seconds": round(model / rate, 4) if rate else None,
                    "ours_planned_seconds": round(planned / rate, 4) if rate else None},
        "full_vs_fastest_peer": round(full / fastest, 3) if full and fastest else None,
        "full_vs_floor": round(full / full_floor, 3) if full and full_floor else None,
        "delta_speedup_vs_fastest_peer": round(fastest / delta, 2) if fastest and delta else None,
        "reshard": {"seconds": med(runs, "reshard", "seconds"), "floor_seconds": med(runs, "reshard", "floor_seconds"),
                    "bytes": runs[-1].get("reshard", {}).get("detail", {}).get("bytes") if runs else None,
                    "equal_to_redistribute": all(r.get("reshard", {}).get("equal_to_redistribute", False)
                                                 for r in runs) if "reshard" in args.peers else None},
        "init_seconds": result["init_seconds"],
        "runs": runs,
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
