"""``make vllm-api``: vLLM's own weight-sync API with the backend ``weight_manifest`` on
emulated hosts (needs root: network namespaces). Each server and each trainer rank on a
host of its own (``scripts/hosts.sh net 4``, prefix ``wmv``, 198.18.220.0/24 unless
``WM_HOSTS_PREFIX`` / ``WM_HOSTS_NET`` say otherwise):

- hosts 2 and 3: a real ``vllm serve`` each (vLLM's OpenAI server, its multiprocess
  engine, ``--weight-transfer-config '{"backend": "weight_manifest"}'``; host 2's takes
  updates staged through vLLM's layer-wise reload, host 3's direct into plain linears);
- hosts 0 and 1: the trainer's 2 ranks (trainer_rank.py: gloo, DTensors ``Shard(0)``),
  rank 0 driving both servers through vLLM's own ``HTTPVLLMWeightSyncClient``.

The updates (``--steps``, default 2 full and 3 deltas), each checked: every server's
completions, greedy, against HF transformers on the trainer's gathered tensors; then
vLLM's own reload from a checkpoint on disk on the same weights, timed beside them; then a
source byte corrupted after the bytes moved, which must fail the update on both servers
and leave both on the old version with the old tokens. Everything is torn down, also on
failure (the servers by PID, then ``hosts.sh down``). The last line is one JSON object:
``api``, ``servers``, ``trainer_ranks``, ``updates``, ``delta_updates``, ``tokens_equal``,
``fault_rolled_back``, ``update_seconds`` (median), the full and delta medians, the bytes,
and ``vllm_reload`` (the disk route on the same weights: the gather to rank 0, the save, each
server's reload, medians; whether its tokens were HF's)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from serving import stop

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = ROOT / "scripts" / "hosts.sh"
PORT, GLOO_PORT = 8000, 29531


def progress(message: str) -> None:
    print(f"[vllm-api] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="full,full,delta,delta,delta")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=2048)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("make vllm-api makes network namespaces: run it as root")
    prefix = os.environ.setdefault("WM_HOSTS_PREFIX", "wmv")
    net = os.environ.setdefault("WM_HOSTS_NET", "198.18.220")
    env = {**os.environ, "WM_PYTHON": sys.executable}

    def address(host: int) -> str:
        return f"{net}.{host + 1}"

    def hosts(*argv: str) -> None:
        subprocess.run([str(SCRIPT), *argv], env=env, check=True, capture_output=True, text=True)

    def start(host: int, argv: list[str], log: Path, extra: dict[str, str]) -> subprocess.Popen[bytes]:
        own = {**env, "MC_TCP_BIND_ADDRESS": address(host), "GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1",
               "NO_PROXY": "*", "no_proxy": "*", **extra}
        return subprocess.Popen([str(SCRIPT), "exec", str(host), *argv], env=own, stdout=subprocess.PIPE,
                                stderr=log.open("wb"), start_new_session=True)

    work = Path(tempfile.mkdtemp(prefix="wm-vllm-api-"))
    processes: list[subprocess.Popen[bytes]] = []
    finished = False
    try:
        import torch
        import transformers

        config = transformers.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                                          intermediate_size=3 * args.hidden, num_hidden_layers=args.layers,
                                          num_attention_heads=args.hidden // 64,
                                          num_key_value_heads=max(1, args.hidden // 256), head_dim=64,
                                          initializer_range=0.2, tie_word_embeddings=False)
        torch.manual_seed(0)
        transformers.LlamaForCausalLM(config).save_pretrained(work / "model")
        progress(f"hosts: scripts/hosts.sh net 4 (prefix {prefix}, {net}.0/24)")
        hosts("down")
        hosts("net", "4")
        urls = []
        for i, host in enumerate((2, 3)):
            argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(work / "model"),
                    "--skip-tokenizer-init", "--enforce-eager", "--dtype", "float32", "--max-model-len", "256",
                    "--max-num-seqs", "8", "--host", address(host), "--port", str(PORT),
                    "--weight-transfer-config", json.dumps({"backend": "weight_manifest"})]
            if i == 1:
                argv += ["--additional-config", json.dumps({"weight_manifest_plain_linears": True})]
            processes.append(start(host, argv, work / f"server-{host}.log",
                                   {"VLLM_SERVER_DEV_MODE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
                                    "VLLM_CPU_OMP_THREADS_BIND": "nobind"}))
            urls.append(f"http://{address(host)}:{PORT}")
        progress(f"servers starting on hosts 2 and 3: {urls}")
        ranks = []
        for rank in (0, 1):
            argv = [sys.executable, str(HERE / "trainer_rank.py"), "--rank", str(rank), "--world", "2",
                    "--master", address(0), "--port", str(GLOO_PORT), "--model", str(work / "model"),
                    "--servers", ",".join(urls), "--steps", args.steps, "--wait-servers", "300",
                    "--reload-dir", str(work / "reload")]
            ranks.append(start(rank, argv, work / f"rank-{rank}.log", {}))
        processes += ranks
        progress("trainer ranks on hosts 0 and 1")
        stdout, _ = ranks[0].communicate(timeout=1800)
        ranks[1].wait(timeout=120)
        lines = stdout.decode().strip().splitlines()
        if ranks[0].returncode != 0 or not lines:
            raise RuntimeError(f"trainer rank 0 exited {ranks[0].returncode}: "
                               f"{(work / 'rank-0.log').read_text()[-4000:]}")
        result = json.loads(lines[-1])
        finished = True
    finally:
        stop(processes)
        started = time.monotonic()
        subprocess.run([str(SCRIPT), "down"], env=env, capture_output=True)
        if finished:
            # The model and the logs: kept only when the run did not finish, to read.
            shutil.rmtree(work, ignore_errors=True)
        progress(f"down in {time.monotonic() - started:.1f} s" + ("" if finished else f"; logs in {work}"))
    print(json.dumps(summary(result, urls)), flush=True)


def summary(result: dict[str, Any], urls: list[str]) -> dict[str, Any]:
    records = result["records"]
    tokens_equal = all(r["servers"][u]["tokens"] == r["hf"] and r["servers"][u]["weight_version"] == r["label"][-1]
                       for r in records for u in urls)
    fault, last = result["fault"], records[-1]
    rolled_back = (fault.get("raised") == "transfer_verify_failed"
                   and all(fault["servers"][u] == {"tokens": last["hf"], "weight_version": last["label"][-1]}
                           for u in urls))
    seconds = {m: [r["result"]["seconds"] for r in records if r["result"]["mode"] == m] for m in ("full", "delta")}
    return {
        "api": "vllm.weight_transfer", "servers": len(urls), "trainer_ranks": 2, "updates": len(records),
        "delta_updates": len(seconds["delta"]), "tokens_equal": tokens_equal, "fault_rolled_back": rolled_back,
        "update_seconds": round(statistics.median(r["result"]["seconds"] for r in records), 3),
        "full_update_seconds": round(statistics.median(seconds["full"]), 3) if seconds["full"] else None,
        "delta_update_seconds": round(statistics.median(seconds["delta"]), 3) if seconds["delta"] else None,
        "bytes": {r["label"]: r["result"]["bytes"] for r in records},
        # Where a full update's time goes (medians): the lifecycle's steps.
        "full_steps_seconds": {k: round(statistics.median(r["result"].get(k, 0.0) for r in records
                                                          if r["result"]["mode"] == "full"), 3)
                               for k in ("prepare_seconds", "transfer_seconds", "verify_seconds", "commit_seconds",
                                         "save_seconds")} if seconds["full"] else None,
        "init_seconds": round(result["init_seconds"], 3),
        "vllm_reload": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in result["reload"].items()},
    }


if __name__ == "__main__":
    main()
