"""A vLLM engine serving a block-FP8 checkpoint, updated in flight (contract §17.8).

A tiny random Llama (hidden 256, 2 layers) in bfloat16 is the trainer's weights at two
steps, A and B. Each is quantized by vLLM's own ``per_block_cast_to_fp8`` into a block-FP8
checkpoint (every decoder linear ``float8_e4m3fn`` with its ``weight_scale_inv``, as the
DeepSeek-V3 checkpoints store them): the reference. vLLM serves checkpoint A in this process;
then B goes to it in flight: planned from the trainer's bfloat16 placement into the engine's
checkpoint placement with a quantization spec, bound, pushed by the executor (the source
quantizes in its staging), and handed to vLLM's layer-wise reload (``reload_weights``, which
processes the FP8 layers again: the CPU kernel repacks the weights). Its greedy tokens must
equal those of the same vLLM loading reference checkpoint B from disk, and be HF
``transformers``' greedy choices on B's dequantized weights (float32, fed the same tokens),
except at near ties (:data:`NEAR_TIE`: vLLM also quantizes the activations).

**For CPUs without AMX only**: vLLM's CPU block-FP8 kernel refuses to start without AMX tiles
(``CPUFp8BlockScaledMMKernel.is_supported``) although it runs here; :func:`bypass_amx_check`
makes that check pass in this process, the engine's, and nowhere else.
"""

from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path
from typing import Any

# Before vLLM is imported: one process, no CPU thread binding (a shared machine), 1 GiB KV cache.
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from vllm.utils.deep_gemm import per_block_cast_to_fp8  # noqa: E402

import executed  # noqa: E402

BLOCK = 128
PROMPTS = [[1, 2, 3, 4], [17, 300, 5], [500, 7, 7, 9, 11, 13]]
NEW_TOKENS = 12
CONFIG = dict(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, head_dim=64, initializer_range=0.2, tie_word_embeddings=False)
QUANTIZATION = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                "weight_block_size": [BLOCK, BLOCK]}


def trainer_weights(seed: int) -> dict[str, torch.Tensor]:
    """The trainer's bfloat16 weights (HF names) of a random tiny Llama."""
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG)).eval()
    return {n: t.detach().to(torch.bfloat16).contiguous() for n, t in model.state_dict().items()}


def quantized_names(weights: dict[str, torch.Tensor]) -> list[str]:
    """The decoder's linear weights: what the checkpoint stores in block FP8."""
    return sorted(n for n in weights if n.startswith("model.layers.") and n.endswith("_proj.weight"))


def scale_name(name: str) -> str:
    return name.replace(".weight", ".weight_scale_inv")


def reference_checkpoint(weights: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """The block-FP8 checkpoint vLLM's ``per_block_cast_to_fp8`` makes of ``weights``,
    written to ``path`` (config with its quantization_config); its tensors."""
    out = dict(weights)
    for name in quantized_names(weights):
        values, scales = per_block_cast_to_fp8(weights[name], [BLOCK, BLOCK])
        out[name], out[scale_name(name)] = values.contiguous(), scales.contiguous()
    path.mkdir(parents=True, exist_ok=True)
    config = transformers.LlamaConfig(**CONFIG).to_dict()
    config.update(architectures=["LlamaForCausalLM"], torch_dtype="bfloat16", quantization_config=QUANTIZATION)
    (path / "config.json").write_text(json.dumps(config))
    save_file(out, str(path / "model.safetensors"))
    return out


def dequantized(checkpoint: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """float32 weights: each FP8 block times its scale."""
    out = {}
    for name, t in checkpoint.items():
        if name.endswith("weight_scale_inv"):
            continue
        scales = checkpoint.get(scale_name(name))
        if scales is None:
            out[name] = t.float()
            continue
        rows, cols = t.shape
        full = scales.repeat_interleave(BLOCK, 0)[:rows].repeat_interleave(BLOCK, 1)[:, :cols]
        out[name] = t.float() * full
    return out


#: A token HF does not choose is accepted when its logit is within this fraction of HF's
#: top logit: vLLM's block-FP8 linear quantizes its activations too (dynamically, per 128
#: elements, in bfloat16), which flips near ties that HF in float32 on the dequantized
#: weights resolves the other way.
NEAR_TIE = 0.01


def hf_agreement(weights: dict[str, torch.Tensor], sequences: list[list[int]]) -> dict[str, Any]:
    """HF ``transformers`` (float32, on ``weights``) fed each prompt and the engine's
    tokens: how many of the engine's tokens are HF's greedy choice, and the largest gap
    (relative to HF's top logit) of one that is not."""
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG)).eval()
    model.load_state_dict(weights)
    chosen = total = 0
    worst = 0.0
    with torch.no_grad():
        for prompt, tokens in zip(PROMPTS, sequences):
            logits = model(torch.tensor([prompt + tokens])).logits[0, len(prompt) - 1: -1]
            for row, token in zip(logits, tokens):
                total += 1
                top = float(row.max())
                if int(row.argmax()) == token:
                    chosen += 1
                else:
                    worst = max(worst, (top - float(row[token])) / abs(top))
    return {"chosen": chosen, "total": total, "worst_gap": worst}


def bypass_amx_check() -> None:
    """For CPUs without AMX only: vLLM's CPU block-FP8 kernel (which runs without AMX)
    declares itself unsupported there; in this process it is declared supported."""
    from vllm.model_executor.kernels.linear.scaled_mm import cpu

    cpu.CPUFp8BlockScaledMMKernel.is_supported = classmethod(lambda cls, *a, **k: (True, None))  # type: ignore[assignment]


class Engine:
    """vLLM in this process serving a block-FP8 checkpoint."""

    def __init__(self, path: Path) -> None:
        import vllm

        self.vllm = vllm
        self.llm = vllm.LLM(model=str(path), skip_tokenizer_init=True, enforce_eager=True, dtype="bfloat16",
                            max_model_len=128, max_num_seqs=4, seed=0, distributed_executor_backend="uni")
        self.worker: Any = self.llm.llm_engine.model_executor.driver_worker.worker

    def generate(self) -> list[list[int]]:
        params = self.vllm.SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True)
        outputs = self.llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in outputs]

    def reload(self, tensors: dict[str, torch.Tensor]) -> None:
        """The checkpoint-format tensors through vLLM's layer-wise reload."""
        self.worker.reload_weights(weights_iterator=list(tensors.items()))

    def close(self) -> None:
        engine_core = getattr(self.llm.llm_engine, "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del self.llm, self.worker
        gc.collect()


def documents(weights: dict[str, torch.Tensor]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The trainer's bfloat16 placement, the engine's checkpoint placement (FP8 weights with
    their scales, the rest bfloat16), each tensor whole on one rank, and the spec."""
    def tensor(tid: str, shape: list[int], dtype: str, itemsize: int) -> dict[str, Any]:
        return {"tensor_id": tid, "global_shape": shape, "dtype": dtype, "itemsize": itemsize, "partition_dim": None,
                "shard_dims": [], "layer_id": None, "expert_id": None, "layout_fingerprint": "hf:row-major"}

    def fragment(fid: str, tid: str, shape: list[int], itemsize: int) -> dict[str, Any]:
        n = itemsize
        for e in shape:
            n *= e
        return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": [0] * len(shape),
                "local_shape": shape, "nbytes": n, "rank": {"dp": 0, "tp": 0, "pp": 0, "ep": 0}, "aliases": []}

    quantized = set(quantized_names(weights))
    src_t, src_f, tgt_t, tgt_f = [], [], [], []
    for name in sorted(weights):
        shape = list(weights[name].shape)
        src_t.append(tensor(name, shape, "bfloat16", 2))
        src_f.append(fragment(f"s:{name}", name, shape, 2))
        if name in quantized:
            grid = [-(-shape[0] // BLOCK), -(-shape[1] // BLOCK)]
            tgt_t += [tensor(name, shape, "float8_e4m3fn", 1), tensor(scale_name(name), grid, "float32", 4)]
            tgt_f += [fragment(f"t:{name}", name, shape, 1), fragment(f"t:{scale_name(name)}", scale_name(name), grid, 4)]
        else:
            tgt_t.append(tensor(name, shape, "bfloat16", 2))
            tgt_f.append(fragment(f"t:{name}", name, shape, 2))
    doc = lambda t, f: {"model_id": "example/fp8-llama", "revision": "r1", "placement_id": None,  # noqa: E731
                        "tensors": sorted(t, key=lambda d: d["tensor_id"]), "fragments": f}
    spec = {"block_size": [BLOCK, BLOCK], "fmt": "e4m3", "quant_method": "fp8",
            "tensors": [{"scale_tensor_id": scale_name(n), "tensor_id": n} for n in sorted(quantized)]}
    return doc(src_t, src_f), doc(tgt_t, tgt_f), json.dumps(spec)


def run(work: Path) -> dict[str, Any]:
    """The engine's part of ``make fp8-update``: its figures."""
    a, b = trainer_weights(0), trainer_weights(1)
    reference_checkpoint(a, work / "a")
    reference_b = reference_checkpoint(b, work / "b")
    source, target, spec = documents(b)
    done = executed.update(source, target, spec, b, backend="local")
    landed = {}
    for f in target["fragments"]:
        buffer = done["landed"][f["placement_fragment_id"]]
        landed[f["tensor_id"]] = buffer.view(torch.float8_e4m3fn) if buffer.dtype == torch.uint8 else buffer
    landed_equal = all(torch.equal(landed[n].view(torch.uint8) if landed[n].dtype == torch.float8_e4m3fn else landed[n],
                                   t.view(torch.uint8) if t.dtype == torch.float8_e4m3fn else t)
                       for n, t in reference_b.items())
    bypass_amx_check()
    engine = Engine(work / "a")
    try:
        before = engine.generate()
        clock = time.perf_counter()
        engine.reload(landed)
        reload_seconds = time.perf_counter() - clock
        in_flight = engine.generate()
    finally:
        engine.close()
    engine = Engine(work / "b")
    try:
        from_disk = engine.generate()
    finally:
        engine.close()
    hf = hf_agreement(dequantized(reference_b), in_flight)
    return {"engine": "vllm", "engine_bytes_equal_reference": landed_equal,
            "engine_tokens_equal_disk": in_flight == from_disk,
            "engine_tokens_equal_hf": hf["worst_gap"] <= NEAR_TIE,
            "engine_tokens_hf_chosen": f"{hf['chosen']}/{hf['total']}", "engine_hf_worst_gap": round(hf["worst_gap"], 5),
            "engine_tokens_changed": before != in_flight, "engine_reload_seconds": round(reload_seconds, 4),
            "engine_tokens": in_flight}
