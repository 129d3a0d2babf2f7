"""One rank of a trainer that updates vLLM servers through vLLM's own weight-sync API with
the backend ``weight_manifest`` (``make vllm-api``; runtime/tests/test_vllm_serve.py
runs it on this host): a gloo group of ``--world`` ranks, the model's tensors as DTensors
sharded ``Shard(0)`` over a 1-D mesh, and vLLM's own ``HTTPVLLMWeightSyncClient`` for each
server (driven as one by ``Servers``).

Every rank runs the same steps (``--steps``, e.g. ``full,full,delta``: before each update
but the first, a "training step" changes the shards in place: every shard for a full one,
two tensors for a delta). After each update rank 0 gathers the trainer's tensors
(``full_tensor``: every rank takes part) and records HF transformers' greedy tokens on them
(the oracle), each server's completions (token ids, greedy) and its ``/weight_info``.
Then, with ``--reload-dir``, vLLM's own reload from a checkpoint on disk on the same
weights (rank 0 saves the gathered tensors, each server's ``reload_weights`` through its
``/collective_rpc``), timed; and a fault: a source byte of rank 0's shard corrupted after
the bytes moved, which must fail the update on every server and move none. Rank 0 prints
one JSON line last."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from serving import hf_greedy, served, wait_healthy

DELTA_TENSORS = ("model.norm.weight", "model.layers.1.self_attn.o_proj.weight")


def reload_from_disk(urls: list[str], folder: Path, model: str, gathered: dict[str, Any], config: Any) -> dict[str, Any]:
    """vLLM's own route on the same weights: the gathered tensors saved as safetensors
    (with the model's config), then each server's ``reload_weights`` from that folder."""
    import requests
    from safetensors.torch import save_file

    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    save_file({n: t.contiguous() for n, t in gathered.items()}, str(folder / "model.safetensors"))
    shutil.copy(Path(model) / "config.json", folder / "config.json")
    save_seconds = time.perf_counter() - started
    reloads = []
    for url in urls:
        clock = time.perf_counter()
        reply = requests.post(f"{url}/collective_rpc", timeout=300, json={
            "method": "reload_weights", "kwargs": {"weights_path": str(folder)}})
        reply.raise_for_status()
        reloads.append(time.perf_counter() - clock)
    expected = hf_greedy(config, gathered)
    return {"save_seconds": save_seconds, "reload_seconds": statistics.median(reloads),
            "tokens_equal": all(served(u, model)["tokens"] == expected for u in urls)}


def dead_server(trainer: Any, group: int, rank: int, urls: list[str], model: str) -> dict[str, Any]:
    """An update during which a server dies (its process group killed once the bytes moved):
    it must fail, and every server still up must serve what it served."""
    import os
    import signal

    from weight_manifest import ManifestError

    def kill(step: str, worker: Any) -> None:
        if step == "transferred":
            os.killpg(group, signal.SIGKILL)

    trainer.on_step = kill if rank == 0 else None
    try:
        trainer.send_weights(mode="full")
        death: dict[str, Any] = {"raised": None}
    except ManifestError as error:
        death = {"raised": error.code, "message": str(error), "finish_errors": trainer.finish_errors}
    trainer.on_step = None
    if rank == 0:
        death["servers"] = {}
        for url in urls:
            try:
                death["servers"][url] = served(url, model)
            except Exception as error:  # the dead one
                death["servers"][url] = {"unreachable": type(error).__name__}
    return death


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--master", default="127.0.0.1", help="rank 0's address (gloo, the control channel)")
    parser.add_argument("--port", type=int, required=True, help="gloo's port on the master")
    parser.add_argument("--model", required=True, help="the checkpoint folder the servers started from")
    parser.add_argument("--servers", required=True, help="comma-separated base URLs")
    parser.add_argument("--steps", default="full,full,delta", help="the updates, in order: full or delta each")
    parser.add_argument("--wait-servers", type=float, default=0.0, help="seconds to wait for the servers' /health")
    parser.add_argument("--reload-dir", default=None, help="time vLLM's reload from disk of the last weights here")
    parser.add_argument("--late-rank-seconds", type=float, default=0.0,
                        help="rank 1 takes each training step this much later than rank 0 (a slower rank: "
                             "send_weights waits for it)")
    parser.add_argument("--kill-during-update", type=int, default=None,
                        help="last, an update during which this process group (a server's) is killed")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    from vllm.distributed.weight_transfer import HTTPVLLMWeightSyncClient, WeightTransferTrainerFactory
    from vllm.plugins import load_general_plugins

    from weight_manifest import ManifestError
    from weight_manifest_runtime.weight_transfer.trainer import Servers, TrainerInfo

    torch.set_num_threads(1)
    load_general_plugins()  # not a vLLM process: the plugin's entry point registers the name here
    urls = args.servers.split(",")
    if args.rank == 0 and args.wait_servers > 0:
        wait_healthy(urls, args.wait_servers)
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}:{args.port}", rank=args.rank,
                            world_size=args.world)
    rank = args.rank
    mesh = init_device_mesh("cpu", (args.world,), mesh_dim_names=("fsdp",))
    config = transformers.AutoConfig.from_pretrained(args.model)
    torch.manual_seed(1)
    start = transformers.AutoModelForCausalLM.from_config(config).state_dict()
    params = {n: distribute_tensor(t.detach().clone().contiguous(), mesh, [Shard(0)]) for n, t in start.items()}
    records: list[dict[str, Any]] = []

    def gather() -> dict[str, Any]:
        return {n: p.full_tensor() for n, p in params.items()}  # a collective: every rank

    def observe(label: str, result: Any) -> None:
        gathered = gather()
        if rank == 0:
            records.append({"label": label, "result": result, "hf": hf_greedy(config, gathered),
                            "servers": {u: served(u, args.model) for u in urls}})

    started = time.perf_counter()
    trainer = WeightTransferTrainerFactory.trainer_init(
        TrainerInfo(rank=rank, state_dict=params, model_id="tiny", generation=0, host=args.master,
                    block_elements=1024, timeout=120.0),
        client=Servers([HTTPVLLMWeightSyncClient(u) for u in urls]))
    init_seconds = time.perf_counter() - started
    fault: dict[str, Any] = {}
    reload: dict[str, Any] = {}
    death: dict[str, Any] = {}
    try:
        for index, mode in enumerate(args.steps.split(",")):
            if index:
                if rank == 1:
                    time.sleep(args.late_rank_seconds)
                with torch.no_grad():  # a "training step", in place (the shards' memory stays)
                    if mode == "full":
                        for p in params.values():
                            p.to_local().mul_(0.9).add_(0.01)
                    else:
                        params[DELTA_TENSORS[0]].to_local().mul_(-1.5 if index % 2 else -0.5)
                        params[DELTA_TENSORS[1]].to_local().add_(0.25)
            observe(f"{mode}-{index + 1}", trainer.send_weights(mode=mode))
        if args.reload_dir:
            clock = time.perf_counter()
            gathered = gather()  # the disk route's first step: every tensor to rank 0
            if rank == 0:
                reload = {"gather_seconds": time.perf_counter() - clock,
                          **reload_from_disk(urls, Path(args.reload_dir), args.model, gathered, config)}
            dist.barrier()

        # The fault: a real change that must not land, and a byte of rank 0's shard of the
        # embedding flipped after the bytes moved (before the content check).
        with torch.no_grad():
            params["model.layers.0.mlp.down_proj.weight"].to_local().mul_(0.5)
        victim = params["model.embed_tokens.weight"].to_local()

        def corrupt(step: str, worker: Any) -> None:
            if step == "transferred":
                victim.view(torch.uint8)[5] ^= 0x20

        trainer.on_step = corrupt if rank == 0 else None
        try:
            trainer.send_weights(mode="full")
            fault = {"raised": None}
        except ManifestError as error:
            fault = {"raised": error.code, "message": str(error), "finish_errors": trainer.finish_errors}
        if rank == 0:
            victim.view(torch.uint8)[5] ^= 0x20
            fault["servers"] = {u: served(u, args.model) for u in urls}
        if args.kill_during_update is not None:
            death = dead_server(trainer, args.kill_during_update, rank, urls, args.model)
    finally:
        trainer.shutdown()
        dist.destroy_process_group()
    if rank == 0:
        shapes = {n: [list(t.shape), t.element_size()] for n, t in start.items()}
        print(json.dumps({"records": records, "fault": fault, "reload": reload, "death": death,
                          "init_seconds": init_seconds,
                          "shapes": shapes, "delta_tensors": list(DELTA_TENSORS)}), flush=True)


if __name__ == "__main__":
    main()
