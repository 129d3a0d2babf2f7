"""A tiny Qwen3-MoE in an engine with plain linears: vLLM's CPU MoE kernel repacks the
experts' ``w13_weight``/``w2_weight`` in place after loading, so direct writes are refused
for them (the extension's check that every box holds the checkpoint's bytes finds it);
where vLLM's loader puts each expert's gate, up and down rows is still its own layout,
checked here against the checkpoint fused by hand."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import weight_manifest as wm
from vllm_engines import assert_preset_is_the_engines, checkpoint, engine_fixture, fused_expected, torch, wv, write_model
from weight_manifest import hf


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    a = write_model("qwen3_moe", 0, tmp_path_factory.mktemp("vllm-moe") / "a")
    for engine in engine_fixture(a, direct=True):
        yield {"kind": "qwen3_moe", "engine": engine, "a": a}


def test_direct_writes_into_repacked_experts_are_refused(setup: dict[str, Any]) -> None:
    with pytest.raises(wm.ManifestError) as caught:
        setup["engine"].worker.wm_describe(instance_id="engine", model_id="tiny", revision="main")
    assert caught.value.code == "vllm_direct_unsupported"
    message = str(caught.value)
    assert "repacked" in message and "w13_weight" in message and "qkv_proj" not in message


def test_the_experts_layout_from_vllms_loader(setup: dict[str, Any]) -> None:
    """Where vLLM's loader puts each checkpoint tensor, scattered back into parameters of
    the engine's shapes, is the checkpoint fused by hand (the experts' boxes cannot be
    read back from the engine: its kernel repacks them)."""
    engine = setup["engine"]
    a = checkpoint(setup["a"])
    model = engine.worker.model_runner.model
    placed = wv.probe_layout(model, {n: tuple(t.shape) for n, t in a.items()})
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    rebuilt: dict[str, Any] = {}
    for name, where in placed.items():
        assert where is not None, name
        if shapes[where.param] == (0,):
            continue  # a packed linear: no shape to compare with
        target = rebuilt.setdefault(where.param, torch.full(shapes[where.param], float("nan")))
        index = tuple(slice(o, o + n) for o, n in zip(where.global_offset, where.local_shape))
        where.view(target).copy_(a[name][index])
    if setup["kind"] == "qwen3_moe":
        layer = "model.layers.1.mlp.experts.routed_experts"
        assert shapes[f"{layer}.w13_weight"] == (4, 128, 64) and shapes[f"{layer}.w2_weight"] == (4, 64, 64)
        up = placed["model.layers.1.mlp.experts.2.up_proj.weight"]
        assert (up.param, up.start, up.stop) == (f"{layer}.w13_weight", (2, 64, 0), (3, 128, 64))
    assert rebuilt
    for param, value in rebuilt.items():
        assert torch.equal(value, fused_expected(a, param)), param


def test_the_adapters_vllm_preset_is_the_loaders_layout(setup: dict[str, Any]) -> None:
    """The preset against the boxes vLLM's loader writes (probe_layout), as records: the
    parameter as alias where it holds several tensors, the box's start in it as byte_offset."""
    model = setup["engine"].worker.model_runner.model
    a = checkpoint(setup["a"])
    placed = wv.probe_layout(model, {n: tuple(t.shape) for n, t in a.items()})
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    counts: dict[str, int] = {}
    for where in placed.values():
        assert where is not None
        counts[where.param] = counts.get(where.param, 0) + 1
    records = []
    for name, where in placed.items():
        assert where is not None
        strides = torch.empty(shapes[where.param], device="meta").stride()
        layer, expert = hf.ids(name)
        records.append({
            "tensor_id": name, "rank": {"tp": 0}, "global_offset": list(where.global_offset),
            "local_shape": list(where.local_shape), "nbytes": 4 * int(torch.Size(where.local_shape).numel()),
            "aliases": [where.param] if counts[where.param] > 1 else [],
            "byte_offset": 4 * sum(s * x for s, x in zip(where.start, strides)), "layer_id": layer,
            "expert_id": expert, "layout_fingerprint": hf.LAYOUT_FINGERPRINT})
    assert_preset_is_the_engines("vllm-qwen3-moe.json", setup["a"], [{"tensors": records}], 1, shapes)
