"""One rank of the RL loop's trainer (rl_loop.py starts one per emulated host, each with its
own shaped link). Every rank runs the same steps; rank 0 also drives the servers and
prints one JSON line last.

Per step: train (training.py), **ours**: ``send_weights`` of vLLM's weight-sync API with
the backend ``weight_manifest`` (``full`` while every tensor is trained, then ``delta``):
each rank writes its own shards straight into every engine worker over its own link
(``--transfer-mode pull``: each worker reads its slice from every rank),
content digests of every landed byte, one commit for both servers; **the oracle**: HF
transformers' greedy tokens on the gathered tensors against each server's completions;
then **the peers** on the same weights and links (peers.py: the disk route, the chain, gloo's
broadcast; the trainer's reshard ``Shard(0)`` -> ``Shard(1)`` with DTensor ``redistribute``
beside ours), the servers' tokens checked again after each engine route."""

from __future__ import annotations

import argparse
import faulthandler
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import links
import peers
from training import ShardedTrainer

# The helpers the vLLM examples share live with the vllm-api example.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vllm-api"))
from serving import hf_greedy, served, wait_healthy  # noqa: E402

MODEL_ID = "rl-tiny-llama"


class Reshard:
    """Ours beside DTensor ``redistribute``: a weight-update group of the trainer's ranks,
    each a source (its training shards, ``Shard(0)``) and a target (buffers laid out
    ``Shard(1)``, as ``redistribute`` lays them out); rank 0 coordinates."""

    def __init__(self, trainer: ShardedTrainer, rank: int, world: int, host: str) -> None:
        import secrets

        import torch
        import torch.distributed as dist
        from torch.distributed.tensor import Shard
        from torch.distributed.tensor import empty as dtensor_empty

        from weight_manifest_runtime import dtensor
        from weight_manifest_runtime.group import Coordinator, Member
        from weight_manifest_runtime.group.ray import engine_backend
        from weight_manifest_runtime.weight_transfer import channel

        self.trainer, self.rank = trainer, rank
        self.buffers = {n: dtensor_empty(tuple(p.shape), device_mesh=trainer.mesh, dtype=torch.float32,
                                         placements=[Shard(1 if p.dim() > 1 else 0)])
                        for n, p in trainer.params.items()}
        self.group = channel.ChannelGroup(host, secrets.token_hex(32), timeout=300) if rank == 0 else None
        box = [(self.group.address, self.group.key) if self.group else None]
        dist.broadcast_object_list(box, src=0)
        address, key = box[0]
        engine: dict[str, Any] = {}
        layouts = {"source": (trainer.state(), "trainer"), "target": (self.buffers, "trainer-resharded")}
        self.memberships = []
        for side, (state, instance) in layouts.items():
            shards = dtensor.local_shards(state, trainer.mesh, model_id=MODEL_ID, revision="rl")

            def make(ordinal: int, local: str, shards: Any = shards, instance: str = instance) -> Member:
                if not engine:
                    engine["backend"], engine["session"] = engine_backend(local)
                return Member(shards.tensors, backend=engine["backend"], session=engine["session"],
                              worker_id=f"{instance}-{rank}", endpoint=engine["session"], instance_id=instance,
                              generation=1, lease_id=f"{instance}-lease", **shards.where())

            self.memberships.append(channel.join(address, key, side, f"{instance}-{rank}", make, timeout=300))
        self.bound: Any = None
        if self.group is not None:
            self.group.wait_members("source", world, 300)
            self.group.wait_members("target", world, 300)
            self.coordinator = Coordinator(self.group)
            self.bound = self.coordinator.bind(self.coordinator.plan())

    def run(self) -> dict[str, Any]:
        """Rank 0: the update (the others' members answer it). The bytes moved."""
        return {"bytes": int(self.coordinator.update(self.bound)["bytes"])} if self.group is not None else {}

    def equal_to_redistribute(self) -> bool:
        """Whether this rank's buffers equal torch's own ``redistribute`` of its shards."""
        import torch
        from torch.distributed.tensor import Shard

        return all(torch.equal(p.detach().redistribute(self.trainer.mesh, [Shard(1 if p.dim() > 1 else 0)]).to_local(),
                               self.buffers[n].to_local()) for n, p in self.trainer.params.items())

    def close(self) -> None:
        if self.group is not None:
            self.group.close()
        for membership in self.memberships:
            membership.leave()


def watch_transfers(coordinator: Any, seen: list[dict[str, Any]]) -> None:
    """Keep what each executing worker reported of the last transfer (where its time went)."""
    execute = coordinator.execute

    def watched(*args: Any, **kwargs: Any) -> Any:
        reports = execute(*args, **kwargs)
        seen.clear()
        for worker, report in sorted(reports.items()):
            seen.append({"worker": worker, "seconds": round(float(report.get("seconds", 0.0)), 3),
                         "pairs": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in pair.items()
                                    if k in ("source_worker_id", "target_worker_id", "bytes", "wire_bytes", "segments", "batches",
                                             "seconds", "wait_seconds", "staging_seconds")}
                                   for pair in report.get("pairs", [])]})
        return reports

    coordinator.execute = watched


def time_calls(group: Any, spent: dict[str, float]) -> None:
    """Seconds in the group's calls, by operation (where an update's time goes)."""
    call_all = group.call_all

    def timed(calls: Any, *args: Any, **kwargs: Any) -> Any:
        clock = time.perf_counter()
        try:
            return call_all(calls, *args, **kwargs)
        finally:
            op = "+".join(sorted({str(c[0]) for c in calls.values()})) or "none"
            spent[op] = spent.get(op, 0.0) + time.perf_counter() - clock

    group.call_all = timed


def time_client(client: Any, spent: dict[str, float]) -> None:
    """Seconds in vLLM's weight-sync calls on the servers (HTTP, engine core, workers)."""
    for name in ("start_weight_update", "update_weights", "finish_weight_update"):
        method = getattr(client, name)

        def timed(*args: Any, _method: Any = method, _name: str = name) -> Any:
            clock = time.perf_counter()
            try:
                return _method(*args)
            finally:
                spent[f"http {_name}"] = spent.get(f"http {_name}", 0.0) + time.perf_counter() - clock

        setattr(client, name, timed)


def redistribute(trainer: ShardedTrainer) -> dict[str, Any]:
    """Peer (c): every tensor ``Shard(0)`` -> ``Shard(1)`` with DTensor ``redistribute``."""
    import torch.distributed as dist
    from torch.distributed.tensor import Shard

    dist.barrier()
    for param in trainer.params.values():
        param.detach().redistribute(trainer.mesh, [Shard(1 if param.dim() > 1 else 0)])
    dist.barrier()
    return {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="rank 0's address")
    parser.add_argument("--port", type=int, required=True, help="gloo's port on rank 0 (the peers' is +1)")
    parser.add_argument("--model", required=True, help="the checkpoint the servers started from")
    parser.add_argument("--servers", required=True, help="JSON: each server's url, its workers' namespaces and "
                        "addresses, its folder for the disk route")
    parser.add_argument("--storage", required=True, help="the storage host's URL")
    parser.add_argument("--switch", required=True, help="the switch namespace (its ports count each link's bytes)")
    parser.add_argument("--gbit", type=float, default=0.0, help="each link's rate (0: unshaped)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--full-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--block", type=int, default=16384)
    parser.add_argument("--chunk-elements", type=int, default=1 << 20)
    parser.add_argument("--peers", default="disk,chain,broadcast,reshard")
    parser.add_argument("--transfer-mode", default="push")
    parser.add_argument("--concurrent-pairs", type=int, default=4)
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    import transformers
    from vllm.distributed.weight_transfer import HTTPVLLMWeightSyncClient, WeightTransferTrainerFactory
    from vllm.plugins import load_general_plugins

    from weight_manifest_runtime.transfer import ExecuteOptions
    from weight_manifest_runtime.weight_transfer.trainer import Servers, TrainerInfo

    torch.set_num_threads(1)
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 PID`: every thread's stack in the rank's log
    load_general_plugins()
    rank, world = args.rank, args.world
    servers = json.loads(args.servers)
    urls = [s["url"] for s in servers]
    tp = len(servers[0]["namespaces"])
    rate = args.gbit * 1e9 / 8
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}:{args.port}", rank=rank, world_size=world)
    config = transformers.AutoConfig.from_pretrained(args.model)
    top = config.num_hidden_layers - 1
    trainable = [n for n in _names(args.model) if n.startswith(f"model.layers.{top}.") or n == "model.norm.weight"]
    trainer = ShardedTrainer(rank, world, args.model, trainable, args.full_steps, args.lr, args.seed)
    names = trainer.names
    wanted = set(args.peers.split(",")) - {""}

    def timed(run: Callable[[], Any]) -> Optional[dict[str, Any]]:
        if rank == 0:
            return peers.measured(args.switch, rate, run)
        run()
        return None

    group = None
    if rank == 0:
        wait_healthy(urls, 900)
        for server in servers:  # each worker onto its own link, before it makes a socket
            peers.rpc_all([server["url"]], "wm_enter_link", [server["namespaces"], server["addresses"]])
        if wanted & {"chain", "broadcast"}:
            joining = peers.start_rpc(urls, "wm_peer_join",
                                      lambda i: [args.master, args.port + 1, 1 + len(urls) * tp, 1 + i * tp])
            group = links.peer_group(args.master, args.port + 1, 0, 1 + len(urls) * tp)
            [f.result() for f in joining]
    dist.barrier()
    clock = time.perf_counter()
    wt = WeightTransferTrainerFactory.trainer_init(
        TrainerInfo(rank=rank, state_dict=trainer.state(), model_id=MODEL_ID, generation=1, host=args.master,
                    mode="direct", transfer_mode=args.transfer_mode, block_elements=args.block, timeout=600.0,
                    options=ExecuteOptions(concurrent_pairs=args.concurrent_pairs)),
        client=Servers([HTTPVLLMWeightSyncClient(u) for u in urls]))
    init_seconds = time.perf_counter() - clock
    transfers: list[dict[str, Any]] = []
    calls: dict[str, float] = {}
    if rank == 0:
        watch_transfers(wt.coordinator, transfers)
        time_calls(wt.group, calls)
        time_client(wt.client, calls)
    reshard = Reshard(trainer, rank, world, args.master) if "reshard" in wanted else None
    whole = peers.gather(trainer.params, names, rank, world)  # a collective: every rank
    expected = hf_greedy(config, whole) if rank == 0 else None
    first = [served(u, args.model) for u in urls] if rank == 0 else []
    tokens_equal = all(f["tokens"] == expected for f in first)
    runs: list[dict[str, Any]] = []
    try:
        for step in range(1, args.steps + 1):
            trained = trainer.train_step()
            mode = "full" if trained["full"] else "delta"
            results: dict[str, Any] = {}
            calls.clear()
            ours = timed(lambda: results.setdefault("r", wt.send_weights(mode=mode)))
            whole = peers.gather(trainer.params, names, rank, world)
            record: dict[str, Any] = {}
            if rank == 0:
                assert ours is not None
                expected = hf_greedy(config, whole)
                now = [served(u, args.model) for u in urls]
                equal = [s["tokens"] == expected and s["weight_version"] == str(step + 1) for s in now]
                tokens_equal = tokens_equal and all(equal)
                result = results["r"]
                record = {"step": step, "mode": mode, "loss": round(trained["loss"], 4), "tokens_equal": equal,
                          "hf": expected,
                          "ours": {k: v for k, v in ours.items() if k != "detail"},
                          "bytes": int(result["bytes"]), "transfer": list(transfers),
                          "calls": {op: round(v, 4) for op, v in sorted(calls.items())},
                          "phases": {k: round(float(result[k]), 4) for k in (
                              "prepare_seconds", "transfer_seconds", "verify_seconds", "commit_seconds")
                                     if k in result},
                          "peers": {}}
            del whole
            for name in ("disk", "chain", "chain_after_gather", "broadcast"):
                if name.split("_after")[0] not in wanted:
                    continue
                if name == "disk":
                    run = lambda: peers.disk(trainer.params, names, rank, world, args.storage, urls,  # noqa: E731
                                             [s["folder"] for s in servers], str(Path(args.model) / "config.json"))
                elif name.startswith("chain"):
                    run = lambda: peers.chain(trainer.params, names, rank, world, group, urls,  # noqa: E731
                                              args.chunk_elements, overlap=name == "chain")
                else:
                    run = lambda: peers.broadcast(trainer.params, names, rank, world, group, urls)  # noqa: E731
                figure = timed(run)
                if rank == 0:
                    assert figure is not None
                    figure["tokens_equal"] = all(served(u, args.model)["tokens"] == expected for u in urls)
                    record["peers"][name] = figure
            if reshard is not None:
                figure = timed(lambda: redistribute(trainer))
                mine = timed(reshard.run)
                dist.barrier()
                flag = torch.tensor([1 if reshard.equal_to_redistribute() else 0])
                dist.all_reduce(flag, op=dist.ReduceOp.MIN)
                if rank == 0:
                    record["peers"]["redistribute"] = figure
                    record["reshard"] = {**(mine or {}), "equal_to_redistribute": bool(flag.item())}
            if rank == 0:
                runs.append(record)
                print(json.dumps({"progress": record}), flush=True)
            dist.barrier()
    finally:
        if reshard is not None:
            reshard.close()
        wt.shutdown()
        dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({"runs": runs, "tokens_equal": tokens_equal and len(runs) == args.steps,
                          "init_seconds": round(init_seconds, 3), "tp": tp,
                          "model_bytes": sum(4 * p.numel() for p in trainer.params.values()),
                          "full_pairs": _pair_bytes(wt)}), flush=True)


def _names(model: str) -> list[str]:
    from safetensors import safe_open

    with safe_open(str(Path(model) / "model.safetensors"), framework="pt") as f:
        return sorted(f.keys())


def _pair_bytes(wt: Any) -> dict[str, dict[str, int]]:
    """A full update's bytes out of each trainer rank and into each engine worker (the
    bound plan's pairs)."""
    out: dict[str, int] = {}
    into: dict[str, int] = {}
    for pair in wt.bound.pairs if wt.bound is not None else []:
        out[pair.source_worker_id] = out.get(pair.source_worker_id, 0) + int(pair.bytes)
        into[pair.target_worker_id] = into.get(pair.target_worker_id, 0) + int(pair.bytes)
    return {"out": out, "in": into}


if __name__ == "__main__":
    main()
