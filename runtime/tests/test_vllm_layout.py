"""weight_manifest_runtime.vllm's layout probe on small modules whose loaders are written here, so
the layout each one writes is known by construction: a fused parameter, a transposed copy,
a tensor loaded into two parameters, a loader that refuses, a tensor skipped, and members
in another order than the class's ``packed_modules_mapping``. No engine starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

import weight_manifest as wm
from conftest import ROOT
from vllm_engines import torch, wv


class Tiny(torch.nn.Module):
    """A module with one fused parameter ``fused.weight`` [6, 4] (a: rows 0-1, b: rows
    2-5) and one plain ``plain.weight`` [3, 3]; ``load`` decides what its loader does."""

    packed_modules_mapping = {"fused": ["a", "b"]}

    def __init__(self, load: Callable[["Tiny", str, Any], set[str]]) -> None:
        super().__init__()
        self.fused = torch.nn.Module()
        self.fused.weight = torch.nn.Parameter(torch.zeros(6, 4), requires_grad=False)
        self.plain = torch.nn.Module()
        self.plain.weight = torch.nn.Parameter(torch.zeros(3, 3), requires_grad=False)
        self.load = load

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> set[str]:
        loaded: set[str] = set()
        for name, tensor in weights:
            loaded |= self.load(self, name, tensor)
        return loaded


def vllm_like(model: Tiny, name: str, tensor: Any) -> set[str]:
    if name in ("m.a.weight", "m.b.weight"):
        start = 0 if name == "m.a.weight" else 2
        model.fused.weight[start : start + tensor.shape[0]].copy_(tensor)
        return {"fused.weight"}
    if name == "m.plain.weight":
        model.plain.weight.copy_(tensor)
        return {"plain.weight"}
    return set()  # skipped, as vLLM skips rotary inv_freq


CHECKPOINT = {"m.a.weight": (2, 4), "m.b.weight": (4, 4), "m.plain.weight": (3, 3), "m.inv_freq": (2,)}


def test_the_probe_finds_each_box_and_writes_nothing_real() -> None:
    model = Tiny(vllm_like)
    placed = wv.probe_layout(model, CHECKPOINT)
    assert placed["m.inv_freq"] is None
    a, b, plain = placed["m.a.weight"], placed["m.b.weight"], placed["m.plain.weight"]
    assert (a.param, a.start, a.stop, a.global_offset, a.local_shape) == ("fused.weight", (0, 0), (2, 4), (0, 0), (2, 4))
    assert (b.param, b.start, b.stop) == ("fused.weight", (2, 0), (6, 4))
    assert (plain.param, plain.start, plain.stop) == ("plain.weight", (0, 0), (3, 3))
    # The real parameters are untouched and in place.
    assert not model.fused.weight.any() and not model.plain.weight.any()
    assert wv._check_packing(model, placed) == {"fused.weight": ["m.a.weight", "m.b.weight"]}


def test_a_row_slice_of_the_checkpoint_is_its_offset() -> None:
    def half(model: Tiny, name: str, tensor: Any) -> set[str]:
        if name == "m.b.weight":  # this rank holds rows 2-3 of b, as a TP loader narrows
            model.fused.weight[2:4].copy_(tensor[2:4])
            return {"fused.weight"}
        return vllm_like(model, name, tensor)

    b = wv.probe_layout(Tiny(half), CHECKPOINT)["m.b.weight"]
    assert (b.start, b.stop, b.global_offset, b.local_shape) == ((2, 0), (4, 4), (2, 0), (2, 4))


@pytest.mark.parametrize("case", ["transposed", "two_parameters", "refused", "scattered"])
def test_what_is_not_one_box_is_refused(case: str) -> None:
    def load(model: Tiny, name: str, tensor: Any) -> set[str]:
        if name != "m.plain.weight":
            return vllm_like(model, name, tensor)
        if case == "transposed":
            model.plain.weight.copy_(tensor.t())
            return {"plain.weight"}
        if case == "two_parameters":
            model.plain.weight.copy_(tensor)
            model.fused.weight[0:3, 0:3].copy_(tensor)
            return {"plain.weight", "fused.weight"}
        if case == "refused":
            raise AssertionError("shape mismatch")
        model.plain.weight[::2].copy_(tensor[:2])  # rows 0 and 2: not one box
        return {"plain.weight"}

    with pytest.raises(wm.ManifestError) as caught:
        wv.probe_layout(Tiny(load), CHECKPOINT)
    assert (caught.value.code, caught.value.path) == ("vllm_layout_unsupported", "/tensors/m.plain.weight")


def test_members_out_of_the_classs_packing_order_are_refused() -> None:
    def swapped(model: Tiny, name: str, tensor: Any) -> set[str]:
        if name in ("m.a.weight", "m.b.weight"):  # b first, then a
            start = 4 if name == "m.a.weight" else 0
            model.fused.weight[start : start + tensor.shape[0]].copy_(tensor)
            return {"fused.weight"}
        return vllm_like(model, name, tensor)

    model = Tiny(swapped)
    placed = wv.probe_layout(model, CHECKPOINT)
    with pytest.raises(wm.ManifestError) as caught:
        wv._check_packing(model, placed)
    assert caught.value.code == "vllm_layout_unsupported" and "packs ['a', 'b']" in str(caught.value)


def test_rows_the_loader_pads_with_zeros_are_not_the_tensors() -> None:
    def padded(model: Tiny, name: str, tensor: Any) -> set[str]:
        if name == "m.plain.weight":  # as VocabParallelEmbedding: rows 0-1 loaded, row 2 zeroed
            model.plain.weight[:2].copy_(tensor[:2])
            model.plain.weight[2:].fill_(0)
            return {"plain.weight"}
        return vllm_like(model, name, tensor)

    plain = wv.probe_layout(Tiny(padded), CHECKPOINT)["m.plain.weight"]
    assert (plain.start, plain.stop, plain.global_offset, plain.local_shape) == ((0, 0), (2, 3), (0, 0), (2, 3))


@pytest.mark.parametrize("vocab,tp", [(520, 2), (520, 4), (1000, 2), (512, 2)])
def test_the_presets_split_a_vocabulary_as_vllm_pads_it(tmp_path: Path, vocab: int, tp: int) -> None:
    """The header-only preset places the embedding's and the LM head's rows on each TP rank
    where vLLM's own ``VocabParallelEmbedding._get_indices`` puts the checkpoint's rows (the
    vocabulary padded to 64 before the split; the last ranks hold fewer rows)."""
    import transformers
    from vllm.model_executor.layers.vocab_parallel_embedding import VocabParallelEmbedding, pad_vocab_size

    from weight_manifest import adapt

    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                      num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                      tie_word_embeddings=False)
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    placement, _ = adapt.adapt_safetensors(tmp_path, ROOT / "examples" / "rules" / "vllm-llama.json",
                                           model_id="m", revision="r", tp=tp, dims={"heads": 4, "kv_heads": 2})
    padded = pad_vocab_size(vocab)
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        got = {f.rank.tp: (f.global_offset[0], f.global_offset[0] + f.local_shape[0])
               for f in placement.fragments if f.tensor_id == name}
        want = {}
        for rank in range(tp):
            shard = VocabParallelEmbedding._get_indices(padded, padded, vocab, vocab, rank, tp)
            want[rank] = (shard.org_vocab_start_index, shard.org_vocab_end_index)
        assert got == want, (name, vocab, tp)
