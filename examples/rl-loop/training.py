"""One trainer rank of the RL loop: a Llama-like model whose tensors are DTensors sharded
``Shard(0)`` over a 1-D gloo mesh, trained FSDP-style by hand (each step gathers the
trained parameters with autograd, the backward reduce-scatters their gradients, AdamW
updates the local shards in place, so the addresses the weight-update group knows never
move).

The first ``full_steps`` steps train every tensor (their updates change every block);
later ones only ``trainable`` (the top decoder layer and the final norm, as when tuning
the last layers of a policy)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


class ShardedTrainer:
    """Rank ``rank`` of ``world`` (the default process group is already initialised),
    starting from the checkpoint in ``model_dir``."""

    def __init__(self, rank: int, world: int, model_dir: str, trainable: list[str], full_steps: int, lr: float,
                 seed: int) -> None:
        import torch
        import transformers
        from safetensors.torch import load_file
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_tensor

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

    def state(self) -> dict[str, Any]:
        """The tensors the weight-update group sends: the parameters' DTensors."""
        return {n: p.data for n, p in self.params.items()}

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
        """One step of AdamW over the trained tensors (a collective: every rank); the
        loss, the seconds and whether every tensor was trained."""
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
            raise RuntimeError("the optimizer moved a shard: the group's inventory no longer says where it is")
        return {"loss": float(loss.detach()) * self.world, "seconds": time.perf_counter() - started, "full": full_step}

    def gather(self) -> dict[str, Any]:
        """Every tensor whole (a collective: every rank calls it)."""
        return {n: p.detach().full_tensor() for n, p in self.params.items()}
