"""The two kinds of Ray actors of the RL loop (rl_loop.py), each a member of the weight
update group (:class:`weight_manifest_runtime.group.ray.GroupMember`):

- :class:`Trainer`: one rank of the trainer. The checkpoint's tensors are DTensors sharded
  ``Shard(0)`` over a 1-D gloo mesh (FSDP by hand: each step gathers the trainable
  parameters with autograd, the backward reduce-scatters their gradients, AdamW updates
  the local shards in place, so the member's addresses never move). Its member holds the
  local shards (``weight_manifest_runtime.dtensor.local_shards``).
- :class:`Engine`: one vLLM engine (in this process: ``VLLM_ENABLE_V1_MULTIPROCESSING=0``,
  the ``uni`` executor), described ``direct`` by the worker extension
  (``weight_manifest_runtime.vllm``): its member holds views of the engine's own parameters, and a
  :class:`~weight_manifest_runtime.lifecycle.TargetVersions` beside it says which generation it
  serves; it generates only while it serves one.

Both also carry the peers of the comparison (vLLM's reload from disk, a gloo broadcast
from trainer rank 0, DTensor ``redistribute``), each timed where it runs."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional

from weight_manifest_runtime.group import Member
from weight_manifest_runtime.group.ray import GroupMember, engine_backend

MODEL_ID = "rl-tiny-llama"
#: The trainer's layout's generation and lease (its memory does not move between steps;
#: the weights' version is the targets' generation).
TRAINER_GENERATION = 1


def broadcast_group(address: str, port: int, rank: int, size: int) -> Any:
    """A gloo process group of its own (not torch.distributed's default one, which vLLM's
    engine and the trainers already use): trainer rank 0 (rank 0 here, the store's host)
    and the engines."""
    import torch.distributed as dist

    store = dist.TCPStore(address, port, size, is_master=rank == 0, timeout=timedelta(seconds=120))
    options = dist.ProcessGroupGloo._Options()
    options._timeout = timedelta(seconds=120)
    options._devices = [dist.ProcessGroupGloo.create_device(interface=os.environ.get("GLOO_SOCKET_IFNAME", "eth0"))]
    return dist.ProcessGroupGloo(dist.PrefixStore("broadcast", store), rank, size, options)


class Trainer(GroupMember):
    """Trainer rank ``rank`` of ``world`` (gloo at ``master:port``), starting from the
    checkpoint in ``model_dir``. ``trainable`` names the tensors trained after the first
    ``full_steps`` steps (which train every tensor)."""

    def __init__(self, group: str, key: str, rank: int, world: int, master: str, port: int, model_dir: str,
                 trainable: list[str], full_steps: int, lr: float, seed: int) -> None:
        import torch
        import torch.distributed as dist
        import transformers
        from safetensors.torch import load_file
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_tensor

        from weight_manifest_runtime import dtensor

        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank, world_size=world)
        self.rank, self.world, self.seed = rank, world, seed
        self.mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("fsdp",))
        self.config = transformers.AutoConfig.from_pretrained(model_dir)
        # The module only computes (its parameters are given at each call), from the shards.
        self.model = transformers.AutoModelForCausalLM.from_config(self.config).eval()
        loaded = load_file(str(Path(model_dir) / "model.safetensors"))
        self.names = sorted(loaded)
        self.params = {n: torch.nn.Parameter(distribute_tensor(loaded[n], self.mesh, [Shard(0)])) for n in self.names}
        self.trainable, self.full_steps = set(trainable), full_steps
        self.optimizer = torch.optim.AdamW(self.params.values(), lr=lr)
        self.steps = 0
        self.frozen: dict[str, Any] = {}
        self.addresses = self._addresses()
        state = {n: p.data for n, p in self.params.items()}
        shards = dtensor.local_shards(state, self.mesh, model_id=MODEL_ID, revision="rl")
        backend, session = engine_backend()
        self.member = Member(shards.tensors, backend=backend, session=session, worker_id=f"trainer-{rank}",
                             endpoint=session, instance_id="trainer", generation=TRAINER_GENERATION,
                             lease_id="trainer-lease", **shards.where())
        self.wm_join(group, key, "source", self.member)
        self.bcast: Optional[Any] = None

    def _addresses(self) -> dict[str, int]:
        return {n: int(p.to_local().data_ptr()) for n, p in self.params.items()}

    def _batch(self) -> Any:
        """Synthetic tokens this rank trains on at this step: arithmetic progressions
        modulo the vocabulary (learnable), a different batch per rank and step."""
        import torch

        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.steps * 101 + self.rank)
        start = torch.randint(self.config.vocab_size, (4, 1), generator=generator)
        stride = torch.randint(1, 7, (4, 1), generator=generator)
        return (start + stride * torch.arange(32)) % self.config.vocab_size

    def train_step(self) -> dict[str, Any]:
        """One step of AdamW over the trained tensors; the loss and seconds."""
        import torch
        from torch.distributed.tensor import Partial, Replicate

        started = time.perf_counter()
        self.steps += 1
        full_step = self.steps <= self.full_steps
        tensors = {}
        for name, param in self.params.items():
            trained = full_step or name in self.trainable
            param.requires_grad_(trained)
            if trained:
                # Gathered with autograd: the backward reduce-scatters (sums) the ranks' grads.
                tensors[name] = param.redistribute(self.mesh, [Replicate()]).to_local(grad_placements=[Partial()])
                self.frozen.pop(name, None)
            else:
                if name not in self.frozen:
                    self.frozen[name] = param.detach().full_tensor()
                tensors[name] = self.frozen[name]
        tokens = self._batch()
        logits = torch.func.functional_call(self.model, tensors, args=(tokens,), kwargs={"use_cache": False}).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                                 tokens[:, 1:].reshape(-1)) / self.world
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        if self._addresses() != self.addresses:
            raise RuntimeError("the optimizer moved a shard: the member's inventory no longer says where it is")
        return {"loss": float(loss) * self.world, "seconds": time.perf_counter() - started, "full": full_step}

    def gather(self) -> dict[str, Any]:
        """Every tensor whole (a collective: every rank calls it); rank 0 keeps them."""
        return {n: p.detach().full_tensor() for n, p in self.params.items()}

    # ---- peers ------------------------------------------------------------------------

    def peer_save(self, folder: str) -> float:
        """Peer (a), the trainer's half: gather every tensor to rank 0, which saves the
        checkpoint as safetensors in ``folder``. Seconds."""
        from safetensors.torch import save_file

        started = time.perf_counter()
        full = self.gather()
        if self.rank == 0:
            Path(folder).mkdir(parents=True, exist_ok=True)
            save_file({n: t.contiguous() for n, t in full.items()}, str(Path(folder) / "model.safetensors"))
        return time.perf_counter() - started

    def peer_broadcast_join(self, address: str, port: int, engines: int) -> None:
        if self.rank == 0:
            self.bcast = broadcast_group(address, port, 0, 1 + engines)

    def peer_broadcast(self) -> float:
        """Peer (b), the trainer's half: gather every tensor to rank 0, which broadcasts
        them, packed in one buffer, over gloo to the engines. Seconds."""
        import torch

        started = time.perf_counter()
        full = self.gather()
        if self.rank == 0:
            assert self.bcast is not None
            flat = torch.cat([full[n].reshape(-1) for n in self.names])
            self.bcast.broadcast(flat, 0).wait()
        return time.perf_counter() - started

    def peer_redistribute(self) -> dict[str, Any]:
        """Peer (c): every tensor from ``Shard(0)`` to ``Shard(1)`` (``Shard(0)`` for 1-D
        ones) with DTensor ``redistribute`` over gloo. Seconds and the bytes this rank now
        holds."""
        import torch.distributed as dist
        from torch.distributed.tensor import Shard

        dist.barrier()
        started = time.perf_counter()
        held = 0
        for param in self.params.values():
            moved = param.detach().redistribute(self.mesh, [Shard(1 if param.dim() > 1 else 0)])
            held += moved.to_local().numel() * moved.to_local().element_size()
        dist.barrier()
        return {"seconds": time.perf_counter() - started, "bytes": held}

    def reshard_join(self, group: str, key: str) -> None:
        """Ours beside peer (c): join the reshard group twice, as a source (the training
        shards, ``Shard(0)``, already registered with this rank's engine) and as a target
        (new buffers laid out ``Shard(1)``, as ``redistribute`` lays them out)."""
        import torch
        from torch.distributed.tensor import Shard
        from torch.distributed.tensor import empty as dtensor_empty

        from weight_manifest_runtime import dtensor
        from weight_manifest_runtime.group.ray import GroupRole

        self.resharded = {n: dtensor_empty(tuple(p.shape), device_mesh=self.mesh, dtype=torch.float32,
                                           placements=[Shard(1 if p.dim() > 1 else 0)])
                          for n, p in self.params.items()}
        self.roles: dict[str, GroupRole] = {}
        layouts = {"source": ({n: p.data for n, p in self.params.items()}, "trainer", []),
                   "target": (self.resharded, "trainer-resharded", None)}
        for side, (state, instance, register) in layouts.items():
            shards = dtensor.local_shards(state, self.mesh, model_id=MODEL_ID, revision="rl")
            member = Member(shards.tensors, backend=self.member.backend, session=self.member.session,
                            register=register, worker_id=f"{instance}-{self.rank}", endpoint=self.member.session,
                            instance_id=instance, generation=TRAINER_GENERATION, lease_id=f"{instance}-lease",
                            **shards.where())
            self.roles[side] = GroupRole()
            self.roles[side].join(group, key, side, member, via=("reshard_call", side))

    def reshard_call(self, side: str, key: str, op: str, request: dict[str, Any]) -> dict[str, Any]:
        """The reshard group's calls to this rank's ``side`` member."""
        return self.roles[side].call(key, op, request)

    def reshard_check(self) -> bool:
        """Whether the buffers ours wrote equal torch's own ``redistribute`` of the shards."""
        import torch
        from torch.distributed.tensor import Shard

        return all(torch.equal(p.detach().redistribute(self.mesh, [Shard(1 if p.dim() > 1 else 0)]).to_local(),
                               self.resharded[n].to_local()) for n, p in self.params.items())

    def pid(self) -> int:
        return os.getpid()


class Engine(GroupMember):
    """vLLM engine ``index`` (data-parallel replica ``index`` of instance ``rollout``) on
    the checkpoint in ``model_dir``, serving generation 1 from the start."""

    def __init__(self, group: str, key: str, index: int, model_dir: str) -> None:
        os.environ.update(VLLM_ENABLE_V1_MULTIPROCESSING="0", VLLM_CPU_OMP_THREADS_BIND="nobind",
                          VLLM_CPU_KVCACHE_SPACE="1")
        import torch
        import vllm

        from weight_manifest_runtime import vllm as wv
        from weight_manifest_runtime.lifecycle import TargetVersions

        torch.set_num_threads(1)
        self.index = index
        self.llm = vllm.LLM(model=model_dir, skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                            max_model_len=256, max_num_seqs=8, seed=0, distributed_executor_backend="uni",
                            **wv.engine_args(direct=True))
        self.worker: Any = self.llm.llm_engine.model_executor.driver_worker.worker
        self.worker.wm_describe(instance_id="rollout", model_id=MODEL_ID, revision="rl", dp=index,
                                worker_id=f"rollout-{index}", lease_id="rollout-lease", generation=1)
        backend, session = engine_backend()
        where = {**self.worker.wm_where(), "endpoint": session}
        self.member = Member(self.worker.wm_tensors(), backend=backend, session=session,
                             register=self.worker.wm_regions(), **where)
        self.versions = TargetVersions(self.member, 1)
        # The engine's own record of the version it serves (wm_version) follows each activation.
        self.versions.on_activate(lambda generation: self.worker.wm_activate(str(generation)))
        self.wm_join(group, key, "target", self.member)
        self.bcast: Optional[Any] = None

    def generate(self, prompts: list[list[int]], tokens: int) -> dict[str, Any]:
        """Greedy continuations of ``prompts``, from the generation it serves (never while
        an update is open)."""
        import vllm

        served = self.versions.wait_active(timeout=60)
        if served is None:
            raise RuntimeError(f"engine {self.index} serves no generation (state {self.versions.state})")
        params = vllm.SamplingParams(temperature=0, max_tokens=tokens, ignore_eos=True)
        outputs = self.llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return {"generation": served, "version": self.worker.wm_version(),
                "tokens": [list(o.outputs[0].token_ids) for o in outputs]}

    # ---- peers ------------------------------------------------------------------------

    def peer_reload(self, folder: str) -> float:
        """Peer (a), the engine's half: vLLM's own reload from the checkpoint on disk."""
        started = time.perf_counter()
        self.worker.reload_weights(weights_path=folder)
        return time.perf_counter() - started

    def peer_broadcast_join(self, address: str, port: int, engines: int) -> None:
        self.bcast = broadcast_group(address, port, 1 + self.index, 1 + engines)

    def peer_broadcast(self, shapes: list[tuple[str, list[int]]]) -> float:
        """Peer (b), the engine's half: receive the packed tensors and load them with the
        model's own ``load_weights`` (what RL frameworks call after a broadcast)."""
        import torch

        started = time.perf_counter()
        assert self.bcast is not None
        counts = [int(torch.Size(s).numel()) for _, s in shapes]
        flat = torch.empty(sum(counts), dtype=torch.float32)
        self.bcast.broadcast(flat, 0).wait()
        pieces = torch.split(flat, counts)
        weights = [(n, p.view(s)) for (n, s), p in zip(shapes, pieces)]
        self.worker.model_runner.model.load_weights(weights=weights)
        return time.perf_counter() - started

    def pid(self) -> int:
        return os.getpid()
