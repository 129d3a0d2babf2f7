"""How fast a running vLLM engine takes a new version of its weights (BENCHMARKS.md, "vLLM
engine updates"), each path a ratio to vLLM's own route from disk measured in the same run:

- ``direct``: the update writes straight into the parameters (weight_manifest_runtime.vllm
  ``mode="direct"``, plain linears): pause, the bytes moved by the executor, activate;
- ``staged``: the same update into the registered staging buffer, then activate, which
  checks the staged names and shapes and applies them through ``reload_weights``
  (``weights_iterator``), on the same plain-linear engine and on the CPU backend's
  default engine (oneDNN-packed linears);
- ``disk`` (the baseline): ``reload_weights(weights_path=...)`` of the new checkpoint
  saved as safetensors (the save is not counted).

One engine at a time, in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``); the trainer's
tensors are in this process too and move with ``transfer.LocalBackend``, so ``direct``
measures the description and the copies, not a network. Each update alternates between two
random checkpoints A and B; after each, the engine's greedy tokens must be the ones it
gave at start on the same checkpoint. Prints one JSON line: per engine and path the median
seconds of ``--repeat`` updates and the ratio to ``disk``.

    .venv/bin/python runtime/bench/bench_vllm_update.py [--repeat 5] [--hidden 512]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")

import torch  # noqa: E402
import transformers  # noqa: E402

import weight_manifest as wm  # noqa: E402
from weight_manifest import hf, live  # noqa: E402
from weight_manifest_runtime import transfer
from weight_manifest_runtime import vllm as wv  # noqa: E402
from weight_manifest_runtime.group import Side  # noqa: E402

PROMPTS = [[1, 2, 3, 4], [17, 300, 5]]


def write(path: Path, seed: int, hidden: int, layers: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=8192, hidden_size=hidden, intermediate_size=3 * hidden,
                                      num_hidden_layers=layers, num_attention_heads=hidden // 64,
                                      num_key_value_heads=max(1, hidden // 256), head_dim=64,
                                      initializer_range=0.05, tie_word_embeddings=False)
    model = transformers.LlamaForCausalLM(config)
    model.save_pretrained(path)
    return {n: t.detach().clone() for n, t in model.state_dict().items()}


def trainer(tensors: dict[str, torch.Tensor]) -> tuple[Side, dict[str, torch.Tensor]]:
    descriptors = {}
    for name, tensor in tensors.items():
        layer, expert = hf.ids(name)
        descriptors[name] = wm.TensorDescriptor(tensor_id=name, global_shape=tuple(tensor.shape), dtype="float32",
                                                itemsize=4, partition_dim=None, shard_dims=(), layer_id=layer,
                                                expert_id=expert, layout_fingerprint=hf.LAYOUT_FINGERPRINT)
    inventory = live.runtime_inventory(tensors, worker_id="trainer", endpoint="trainer", instance_id="trainer",
                                       lease_id="l", generation=1, rank=wm.ParallelRank(), descriptors=descriptors,
                                       offsets={n: [0] * t.dim() for n, t in tensors.items()}, model_id="bench",
                                       revision="main")
    return Side([inventory]), tensors


class Bench:
    def __init__(self, path: Path, direct: bool) -> None:
        from vllm import LLM

        self.llm = LLM(model=str(path), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                       max_model_len=256, max_num_seqs=4, seed=0, distributed_executor_backend="uni",
                       **wv.engine_args(direct=direct))
        self.worker: Any = self.llm.llm_engine.model_executor.driver_worker.worker

    def tokens(self) -> list[list[int]]:
        from vllm import SamplingParams

        out = self.llm.generate([{"prompt_token_ids": p} for p in PROMPTS],
                                SamplingParams(temperature=0, max_tokens=8, ignore_eos=True), use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in out]

    def update(self, side: Side, held: dict[str, torch.Tensor], version: str) -> float:
        started = time.perf_counter()
        target = Side([self.worker.wm_inventory()])
        bound = wm.bind_plan(wm.plan(side.placement, target.placement), side.binding, target.binding,
                             source_generation=1, target_generation=1)
        backend = transfer.LocalBackend()
        for tensor in held.values():
            backend.register(tensor.data_ptr(), tensor.numel() * 4)
        self.worker.wm_register(backend)
        self.worker.wm_pause()
        transfer.execute(bound, backend, {"trainer": "t", self.worker.wm_where()["worker_id"]: "e"}, mode="push")
        self.worker.wm_activate(version)
        seconds = time.perf_counter() - started
        self.worker.wm_unregister()
        return seconds

    def disk(self, path: Path) -> float:
        started = time.perf_counter()
        self.worker.reload_weights(weights_path=str(path))
        return time.perf_counter() - started

    def close(self) -> None:
        self.llm.llm_engine.engine_core.shutdown()
        del self.llm, self.worker
        gc.collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wm-bench-vllm-") as tmp:
        paths = {v: Path(tmp) / v for v in "ab"}
        tensors = {v: write(paths[v], seed, args.hidden, args.layers) for seed, v in enumerate("ab")}
        sides = {v: trainer(tensors[v]) for v in "ab"}
        figures: dict[str, Any] = {"bytes": sum(t.numel() * 4 for t in tensors["a"].values()),
                                   "repeat": args.repeat}
        for engine_kind, direct, paths_measured in (("plain", True, ("direct", "staged")), ("default", False, ("staged",))):
            bench = Bench(paths["a"], direct)
            expected = {"a": bench.tokens()}
            bench.worker.reload_weights(weights_path=str(paths["b"]))
            expected["b"] = bench.tokens()
            bench.worker.reload_weights(weights_path=str(paths["a"]))
            results: dict[str, Any] = {}
            for path_kind in ("disk", *paths_measured):
                if path_kind != "disk":
                    bench.worker.wm_describe(instance_id="engine", model_id="bench", revision="main", mode=path_kind)
                times, version = [], "a"
                for _ in range(args.repeat):
                    version = "b" if version == "a" else "a"
                    if path_kind == "disk":
                        times.append(bench.disk(paths[version]))
                    else:
                        times.append(bench.update(*sides[version], version))
                    if bench.tokens() != expected[version]:
                        sys.exit(f"error: {engine_kind}/{path_kind}: the tokens after the update are not {version}'s")
                if version != "a":  # back on A for the next path
                    bench.disk(paths["a"])
                results[path_kind] = statistics.median(times)
            bench.close()
            figures[engine_kind] = {k: {"seconds": round(v, 4), "ratio_to_disk": round(v / results["disk"], 3)}
                                    for k, v in results.items()}
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
