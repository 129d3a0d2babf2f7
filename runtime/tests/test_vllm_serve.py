"""Two real ``vllm serve`` processes (vLLM's OpenAI server, its multiprocess engine, each
with ``--weight-transfer-config '{"backend": "weight_manifest"}'``: the plugin found through
the installed entry point) and a trainer of 2 ranks (gloo, DTensors ``Shard(0)``) driving
both through vLLM's own ``HTTPVLLMWeightSyncClient`` (examples/vllm-api/trainer_rank.py, which
``make vllm-api`` runs on emulated hosts). One server
takes updates staged (vLLM's default CPU engine: its layer-wise reload), the other direct
(linears kept plain).

The oracle: after each of 3 updates (2 full, 1 delta) each server's own completions
endpoint, greedy, must give the tokens HF transformers gives on the trainer's gathered
tensors; a delta moves exactly the bytes of the two tensors the trainer changed (counted
here from their shapes). A source byte corrupted after the bytes moved: the update fails
with ``transfer_verify_failed`` everywhere, each server's ``finish_weight_update`` answers
with that code, and every server still reports the old version at ``/weight_info`` and
gives the old tokens. Rank 1 takes each training step 1.5 s after rank 0: ``send_weights``
waits for it (else its shards would be read half-stepped). Then the second server is killed once the bytes of another update
moved: the update fails with ``transfer_worker_lost`` naming its worker, and the first
server still reports and serves the old version (asked again here, after the trainer is
gone). Several servers, one decision: none moved.

About 60-80 s on 2 cores (both servers start in parallel, about 22 s each alone)."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import ROOT, scratch_tmpdir
from no_skip import require

RANK = ROOT / "examples" / "vllm-api" / "trainer_rank.py"
sys.path.insert(0, str(RANK.parent))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env() -> dict[str, str]:
    # A TMPDIR of the session's: the rendezvous file (vllm_dist_*) a stopped server leaves there goes with it.
    return {**os.environ, "VLLM_SERVER_DEV_MODE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": "nobind", "VLLM_ENABLE_V1_MULTIPROCESSING": "1",
            "MC_TCP_BIND_ADDRESS": "127.0.0.1", "OMP_NUM_THREADS": "1", **scratch_tmpdir("vllm-serve")}


def start_server(model: Path, port: int, direct: bool, log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
            "--skip-tokenizer-init", "--enforce-eager", "--dtype", "float32", "--max-model-len", "256",
            "--max-num-seqs", "8", "--host", "127.0.0.1", "--port", str(port),
            "--weight-transfer-config", json.dumps({"backend": "weight_manifest"})]
    if direct:
        argv += ["--additional-config", json.dumps({"weight_manifest_plain_linears": True})]
    # Its own session: the server, its engine core and its worker are stopped as one group.
    return subprocess.Popen(argv, env=server_env(), stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server (its process group, by its PID) or a trainer rank."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 240.0) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server at {url} ended ({process.returncode}): {log.read_text()[-3000:]}")
        try:
            if requests.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    pytest.fail(f"the server at {url} was not healthy in {timeout:g} s: {log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require("vllm")
    transformers, torch = require("transformers"), require("torch")
    from vllm_engines import COMMON

    root = tmp_path_factory.mktemp("vllm-serve")
    model = root / "a"
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(transformers.LlamaConfig(**COMMON)).save_pretrained(model)
    ports = [free_port(), free_port()]
    logs = [root / f"server-{i}.log" for i in range(2)]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for i, port in enumerate(ports):
            processes.append(start_server(model, port, direct=i == 1, log=logs[i]))
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        for url, process, log in zip(urls, processes, logs):
            wait_healthy(url, process, log)
        yield {"model": model, "urls": urls, "logs": logs, "processes": processes}
    finally:
        for process in processes:
            stop(process)


def test_two_servers_take_three_updates_as_one_and_a_fault_moves_neither(servers: dict[str, Any]) -> None:
    from trainer_rank import served

    urls = servers["urls"]
    port = free_port()
    env = {**os.environ, "MC_TCP_BIND_ADDRESS": "127.0.0.1", "OMP_NUM_THREADS": "1", **scratch_tmpdir("trainer")}
    ranks = [subprocess.Popen([sys.executable, str(RANK), "--rank", str(r), "--world", "2",
                               "--port", str(port), "--model", str(servers["model"]), "--servers", ",".join(urls),
                               "--kill-during-update", str(servers["processes"][1].pid),
                               "--late-rank-seconds", "1.5"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
             for r in range(2)]
    try:
        outputs = [r.communicate(timeout=600) for r in ranks]
    finally:
        for rank in ranks:
            if rank.poll() is None:
                rank.kill()
                rank.wait(timeout=30)
    stdout, stderr = outputs[0]
    lines = stdout.decode().strip().splitlines()
    assert ranks[0].returncode == 0 and lines and lines[-1].startswith("{"), \
        stderr.decode()[-4000:] + outputs[1][1].decode()[-2000:] + servers["logs"][0].read_text()[-2000:]
    assert ranks[1].returncode == 0, outputs[1][1].decode()[-4000:]
    result = json.loads(lines[-1])
    records = {r["label"]: r for r in result["records"]}
    assert list(records) == ["full-1", "full-2", "delta-3"]
    for label, record in records.items():
        assert record["result"]["generation"] == int(label[-1])
        for url in urls:
            assert record["servers"][url]["tokens"] == record["hf"], (label, url)
            assert record["servers"][url]["weight_version"] == label[-1]
    # Each update changed the tokens (an update that never landed would not pass).
    assert records["full-1"]["hf"] != records["full-2"]["hf"] != records["delta-3"]["hf"]
    # The delta moved exactly the bytes of the two tensors changed, to each server.
    shapes = result["shapes"]
    changed = 0
    for name in result["delta_tensors"]:
        shape, itemsize = shapes[name]
        count = 1
        for extent in shape:
            count *= extent
        changed += count * itemsize
    total = sum(itemsize * math.prod(shape) for shape, itemsize in shapes.values())
    assert records["delta-3"]["result"]["bytes"] == 2 * changed
    assert records["full-1"]["result"]["bytes"] == records["full-2"]["result"]["bytes"] == 2 * total

    fault = result["fault"]
    assert fault["raised"] == "transfer_verify_failed", fault
    assert "model.embed_tokens.weight" in fault["message"]
    # Each server's finish_weight_update answered with the code (HTTP 500, the code in its body).
    assert len(fault["finish_errors"]) == 1
    for url in urls:
        assert f"{url}: finish_weight_update failed: " in fault["finish_errors"][0]
    assert fault["finish_errors"][0].count("transfer_verify_failed") >= 2
    for url in urls:
        assert fault["servers"][url]["weight_version"] == "3"
        assert fault["servers"][url]["tokens"] == records["delta-3"]["hf"]

    # The second server dies once the bytes of the next update moved: the update fails,
    # naming the lost worker, and the first server never activates it.
    death = result["death"]
    assert death["raised"] == "transfer_worker_lost", death
    assert "rollout-dp1-tp0" in death["message"]
    assert death["servers"][urls[1]] == {"unreachable": "ConnectionError"}
    assert death["servers"][urls[0]] == {"tokens": records["delta-3"]["hf"], "weight_version": "3"}
    assert servers["processes"][1].wait(timeout=30) is not None
    # Asked here, after the trainer is gone: still generation 3, HF's tokens of it.
    assert served(urls[0], str(servers["model"])) == {"tokens": records["delta-3"]["hf"], "weight_version": "3"}
