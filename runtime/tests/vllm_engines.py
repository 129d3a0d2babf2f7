"""Shared by the vLLM tests: tiny models written to disk, the engine (one per test module,
in this process: ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` and the ``uni`` executor start it in
about 2 s), and the two independent oracles: HF ``transformers``' greedy tokens from the
same weights, and the checkpoint's tensors concatenated as vLLM fuses them, written out
here with ``torch.cat`` (q, k, v rows into ``qkv_proj``; gate and up rows into
``gate_up_proj``; each expert's gate and up into ``w13_weight[e]``, its down into
``w2_weight[e]``)."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any, Iterator, Optional

# Before vLLM is imported: one process, no CPU thread binding (the machine is shared), a
# 1 GiB KV cache.
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

import pytest

import weight_manifest as wm
from no_skip import require
from weight_manifest import hf, live
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Side

torch = require("torch")
transformers = require("transformers")
vllm_api = require("vllm")
from weight_manifest_runtime import vllm as wv  # noqa: E402

PROMPTS = [[1, 2, 3, 4], [17, 300, 5], [500, 7, 7, 9, 11, 13]]
NEW_TOKENS = 16
MODEL_ID, REVISION = "tiny", "main"

# The notes' tiny model: head_dim 32 is the smallest the CPU attention backend takes.
COMMON = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
              num_key_value_heads=1, head_dim=32, initializer_range=0.2, tie_word_embeddings=False)


def hf_model(kind: str, seed: int) -> Any:
    """A random tiny Llama-, Qwen2- or Qwen3-MoE-like model (fp32, eval)."""
    torch.manual_seed(seed)
    if kind == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**COMMON))
    elif kind == "qwen2":
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**COMMON))
    elif kind == "qwen3_moe":
        model = transformers.Qwen3MoeForCausalLM(transformers.Qwen3MoeConfig(
            **COMMON, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=64, decoder_sparse_step=1,
            norm_topk_prob=True))
    else:
        raise ValueError(kind)
    return model.eval()


def write_model(kind: str, seed: int, path: Path) -> Path:
    hf_model(kind, seed).save_pretrained(path)
    return path


def checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint's tensors as written on disk (HF names)."""
    from safetensors.torch import load_file

    return dict(load_file(str(path / "model.safetensors")))


def hf_greedy(path: Path) -> list[list[int]]:
    """HF transformers' greedy continuation of each prompt: the independent oracle."""
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = torch.tensor([prompt])
            for _ in range(NEW_TOKENS):
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            out.append(ids[0, len(prompt):].tolist())
    return out


def fused_expected(tensors: dict[str, Any], param: str) -> Optional[Any]:
    """What vLLM's parameter ``param`` holds at TP1 for the checkpoint ``tensors``, by
    hand (None for a name this rule set does not know)."""
    if param in tensors:
        return tensors[param]
    prefix, _, leaf = param.rpartition(".")
    module, _, block = prefix.rpartition(".")
    if block == "qkv_proj":
        return torch.cat([tensors[f"{module}.{p}_proj.{leaf}"] for p in "qkv"])
    if block == "gate_up_proj":
        return torch.cat([tensors[f"{module}.{p}_proj.{leaf}"] for p in ("gate", "up")])
    if param.endswith(".mlp.experts.routed_experts.w13_weight") or param.endswith(".mlp.experts.routed_experts.w2_weight"):
        layer = param[: param.index(".mlp.experts.")]
        experts = sorted({int(n.split(".")[5]) for n in tensors if n.startswith(f"{layer}.mlp.experts.")})
        if param.endswith("w13_weight"):
            return torch.stack([torch.cat([tensors[f"{layer}.mlp.experts.{e}.{p}_proj.weight"] for p in ("gate", "up")])
                                for e in experts])
        return torch.stack([tensors[f"{layer}.mlp.experts.{e}.down_proj.weight"] for e in experts])
    return None


class Engine:
    """One in-process vLLM engine on ``path`` with the extension mixed in."""

    def __init__(self, path: Path, *, direct: bool) -> None:
        self.path = path
        self.llm = vllm_api.LLM(model=str(path), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                                max_model_len=256, max_num_seqs=8, seed=0, distributed_executor_backend="uni",
                                **wv.engine_args(direct=direct))
        self.worker: Any = self.llm.llm_engine.model_executor.driver_worker.worker

    def generate(self) -> list[list[int]]:
        params = vllm_api.SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True)
        outputs = self.llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in outputs]

    def params(self) -> dict[str, Any]:
        return {n: p.data for n, p in self.worker.model_runner.model.named_parameters()}

    def close(self) -> None:
        engine_core = getattr(self.llm.llm_engine, "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del self.llm, self.worker
        gc.collect()


def engine_fixture(path: Path, *, direct: bool) -> Iterator[Engine]:
    engine = Engine(path, direct=direct)
    try:
        yield engine
    finally:
        engine.close()


def engine_on_two_checkpoints(kind: str, root: Path, *, direct: bool) -> Iterator[dict[str, Any]]:
    """An engine started on a random ``kind`` checkpoint A, with a second one B and HF's
    greedy tokens of both: what a test module's fixture yields."""
    a, b = write_model(kind, 0, root / "a"), write_model(kind, 1, root / "b")
    tokens = {"a": hf_greedy(a), "b": hf_greedy(b)}
    for engine in engine_fixture(a, direct=direct):
        yield {"kind": kind, "engine": engine, "a": a, "b": b, "tokens": tokens}


def source_side(tensors: dict[str, Any], engine_dtype: str = "float32") -> tuple[Side, dict[str, Any]]:
    """A trainer holding ``tensors`` whole (one rank), described as the engine describes
    the checkpoint's tensors (HF names, :data:`hf.LAYOUT_FINGERPRINT`, :func:`hf.ids`)."""
    held = {n: t.detach().contiguous().clone() for n, t in tensors.items()}
    descriptors = {}
    for name, tensor in held.items():
        layer, expert = hf.ids(name)
        descriptors[name] = wm.TensorDescriptor(tensor_id=name, global_shape=tuple(tensor.shape), dtype=engine_dtype,
                                                itemsize=tensor.element_size(), partition_dim=None, shard_dims=(),
                                                layer_id=layer, expert_id=expert,
                                                layout_fingerprint=hf.LAYOUT_FINGERPRINT)
    inventory = live.runtime_inventory(held, worker_id="trainer-0", endpoint="trainer-0", instance_id="trainer",
                                       lease_id="trainer-lease", generation=1, rank=wm.ParallelRank(),
                                       descriptors=descriptors, offsets={n: [0] * t.dim() for n, t in held.items()},
                                       model_id=MODEL_ID, revision=REVISION)
    return Side([inventory]), held


def update(engine: Engine, tensors: dict[str, Any], version: str) -> dict[str, Any]:
    """One update of ``engine`` (described already) to ``tensors``, in this process: plan
    from the trainer's placement to the engine's, bind, pause, move the bytes with a
    :class:`transfer.LocalBackend`, activate. Returns the update's report and timings."""
    import time

    source, held = source_side(tensors)
    target = Side([engine.worker.wm_inventory()])
    bound = wm.bind_plan(wm.plan(source.placement, target.placement), source.binding, target.binding,
                         source_generation=source.binding.generation, target_generation=target.binding.generation)
    backend = transfer.LocalBackend()
    for tensor in held.values():
        backend.register(int(tensor.data_ptr()), tensor.numel() * tensor.element_size())
    engine.worker.wm_register(backend)
    sessions = {"trainer-0": "trainer", engine.worker.wm_where()["worker_id"]: "engine"}
    try:
        engine.worker.wm_pause()
        started = time.perf_counter()
        report = transfer.execute(bound, backend, sessions, mode="push")
        moved = time.perf_counter() - started
        applied = engine.worker.wm_activate(version)
    finally:
        engine.worker.wm_resume()
        engine.worker.wm_unregister()
    return {"bytes": report.bytes, "transfer_seconds": moved, "apply_seconds": applied["seconds"]}



def assert_preset_is_the_engines(preset: str, path: Path, inventories: list[dict[str, Any]], tp: int,
                                 params: Optional[dict[str, tuple[int, ...]]] = None) -> None:
    """The adapter's vLLM preset on the checkpoint at ``path`` describes what the engine's
    workers report (their inventories, whose records other tests check against vLLM's own
    bytes): every fragment's box, alias (the fused parameter), byte_offset in its
    parameter, ids and fingerprint, and, from ``params`` (name -> shape) when given, each
    fused parameter's byte size."""
    from conftest import ROOT

    config = transformers.AutoConfig.from_pretrained(str(path))
    dims = {"heads": config.num_attention_heads, "kv_heads": config.num_key_value_heads}
    placement, template = wm.adapt_safetensors(path, ROOT / "examples" / "rules" / preset, model_id=MODEL_ID,
                                               revision=REVISION, tp=tp, dims=dims)

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["tensor_id"], r["rank"]["tp"], tuple(r["global_offset"]), tuple(r["local_shape"]), r["nbytes"],
                tuple(r.get("aliases") or ()), r["byte_offset"], r.get("layer_id"), r.get("expert_id"), r["layout_fingerprint"])

    expected = sorted(key(r) for r in template["tensors"])
    engine = sorted(key(r) for inventory in inventories for r in inventory["tensors"])
    assert engine == expected
    assert len(placement.fragments) == len(expected)
    if params is not None:
        ends: dict[tuple[str, int], int] = {}
        for r in template["tensors"]:
            for alias in r.get("aliases") or ():
                end = r["byte_offset"] + r["nbytes"]
                ends[(alias, r["rank"]["tp"])] = max(ends.get((alias, r["rank"]["tp"]), 0), end)
        assert ends
        for (alias, _), end in ends.items():
            count = 1
            for extent in params[alias]:
                count *= extent
            assert end == count * 4, alias
