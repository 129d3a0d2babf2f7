"""One rank of the trainer of test_vllm_serve.py (and of ``make vllm-api``): a gloo group
of ``--world`` ranks, the model's tensors as DTensors sharded ``Shard(0)`` over a 1-D mesh,
joined to vLLM servers through vLLM's own ``HTTPVLLMWeightSyncClient`` (one per server,
driven as one by ``Servers``) with the ``weight_manifest`` backend.

Every rank runs the same steps; after each update rank 0 gathers the trainer's tensors
(``full_tensor``, every rank takes part) and records HF transformers' greedy tokens on them,
each server's completions (token ids, greedy) and its ``/weight_info``. Steps: a full update
(the trainer's own init), a full update after every shard changed in place, a delta after
two tensors changed, then a fault: a source byte corrupted on rank 0 after the bytes moved,
which must fail the update everywhere. Rank 0 prints one JSON line last."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

PROMPTS = [[1, 2, 3, 4], [17, 300, 5], [500, 7, 7, 9, 11, 13]]
NEW_TOKENS = 12
DELTA_TENSORS = ("model.norm.weight", "model.layers.1.self_attn.o_proj.weight")


def greedy(config: Any, state: dict[str, Any]) -> list[list[int]]:
    """HF transformers' greedy continuation of each prompt on ``state`` (the oracle)."""
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    model.load_state_dict(state, strict=True)
    out = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = torch.tensor([prompt])
            for _ in range(NEW_TOKENS):
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            out.append(ids[0, len(prompt):].tolist())
    return out


def served(url: str, model: str) -> dict[str, Any]:
    """A server's greedy tokens of each prompt (its own completions endpoint) and its
    weight version."""
    import requests

    tokens = []
    for prompt in PROMPTS:
        reply = requests.post(f"{url}/v1/completions", timeout=120, json={
            "model": model, "prompt": prompt, "max_tokens": NEW_TOKENS, "temperature": 0, "ignore_eos": True,
            "return_token_ids": True})
        reply.raise_for_status()
        tokens.append(list(reply.json()["choices"][0]["token_ids"]))
    version = requests.get(f"{url}/weight_info", timeout=30).json()["weight_version"]
    return {"tokens": tokens, "weight_version": version}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--master", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1", help="where rank 0's control channel listens")
    parser.add_argument("--model", required=True, help="the checkpoint folder the servers started from")
    parser.add_argument("--servers", required=True, help="comma-separated base URLs")
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    import transformers
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    from vllm.distributed.weight_transfer import HTTPVLLMWeightSyncClient, WeightTransferTrainerFactory

    from vllm.plugins import load_general_plugins

    from weight_manifest import ManifestError
    from weight_manifest.weight_transfer.trainer import Servers, TrainerInfo

    torch.set_num_threads(1)
    load_general_plugins()  # not a vLLM process: the plugin's entry point registers the name here
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}:{args.port}", rank=args.rank,
                            world_size=args.world)
    rank = args.rank
    mesh = init_device_mesh("cpu", (args.world,), mesh_dim_names=("fsdp",))
    config = transformers.AutoConfig.from_pretrained(args.model)
    torch.manual_seed(1)
    start = transformers.AutoModelForCausalLM.from_config(config).state_dict()
    params = {n: distribute_tensor(t.detach().clone().contiguous(), mesh, [Shard(0)]) for n, t in start.items()}
    urls = args.servers.split(",")
    client = Servers([HTTPVLLMWeightSyncClient(u) for u in urls])
    records: list[dict[str, Any]] = []

    def observe(label: str, result: Any) -> None:
        gathered = {n: p.full_tensor() for n, p in params.items()}  # a collective: every rank
        if rank == 0:
            records.append({"label": label, "result": result, "hf": greedy(config, gathered),
                            "servers": {u: served(u, args.model) for u in urls}})

    started = time.perf_counter()
    trainer = WeightTransferTrainerFactory.trainer_init(
        TrainerInfo(rank=rank, state_dict=params, model_id="tiny", generation=0, host=args.host,
                    block_elements=1024, timeout=120.0),
        client=client)
    init_seconds = time.perf_counter() - started
    fault: dict[str, Any] = {}
    try:
        observe("full-1", trainer.send_weights(mode="full"))
        with torch.no_grad():  # a step that changes every shard in place
            for p in params.values():
                p.to_local().mul_(0.9).add_(0.01)
        observe("full-2", trainer.send_weights(mode="full"))
        with torch.no_grad():  # a step that changes two tensors only
            params[DELTA_TENSORS[0]].to_local().mul_(-1.5)
            params[DELTA_TENSORS[1]].to_local().add_(0.25)
        observe("delta-3", trainer.send_weights(mode="delta"))

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
        if rank == 0:
            fault["servers"] = {u: served(u, args.model) for u in urls}
    finally:
        trainer.shutdown()
        dist.destroy_process_group()
    if rank == 0:
        shapes = {n: [list(t.shape), t.element_size()] for n, t in start.items()}
        print(json.dumps({"records": records, "fault": fault, "init_seconds": init_seconds, "shapes": shapes,
                          "delta_tensors": list(DELTA_TENSORS)}), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")
    main()
    sys.exit(0)
