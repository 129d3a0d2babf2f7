"""Updates staged in registered memory and applied through vLLM's own ``reload_weights``
(weight_manifest_runtime.vllm, ``mode="staged"``), on engines as vLLM's CPU backend runs them by
default: its linears packed into oneDNN (a tiny Llama) and its MoE experts repacked in
place (a tiny Qwen3-MoE). Direct writes are refused there with a code; the staged path
gives HF transformers' greedy tokens on the new weights."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import weight_manifest as wm
from vllm_engines import checkpoint, engine_on_two_checkpoints, fused_expected, torch, update


@pytest.fixture(scope="module", params=["llama", "qwen3_moe"])
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield from engine_on_two_checkpoints(request.param, tmp_path_factory.mktemp(f"vllm-staged-{request.param}"),
                                         direct=False)


def test_direct_writes_are_refused_where_the_kernels_repack(setup: dict[str, Any]) -> None:
    with pytest.raises(wm.ManifestError) as caught:
        setup["engine"].worker.wm_describe(instance_id="engine", model_id="tiny", revision="main")
    assert caught.value.code == "vllm_direct_unsupported"
    assert "qkv_proj" in str(caught.value) and "hold no elements" in str(caught.value)


def test_a_staged_update_gives_hfs_tokens_on_the_new_weights(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    worker = engine.worker
    summary = worker.wm_describe(instance_id="engine", model_id="tiny", revision="main", mode="staged")
    assert summary["tensors"] == len(checkpoint(setup["a"]))
    assert engine.generate() == setup["tokens"]["a"]
    update(engine, checkpoint(setup["b"]), "b")
    assert worker.wm_version() == "b"
    assert engine.generate() == setup["tokens"]["b"] != setup["tokens"]["a"]
    # The parameters vLLM keeps readable hold the new checkpoint's bytes; the packed
    # linears stay packed (0 elements).
    b = checkpoint(setup["b"])
    for name, value in engine.params().items():
        if value.numel() and "experts" not in name:
            assert torch.equal(value, fused_expected(b, name)), name
    assert engine.params()["model.layers.0.self_attn.qkv_proj.weight"].numel() == 0
    update(engine, checkpoint(setup["a"]), "a")
    assert engine.generate() == setup["tokens"]["a"]


def test_a_staged_version_that_does_not_fit_is_refused_before_the_reload(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    worker = engine.worker
    worker.wm_describe(instance_id="engine", model_id="tiny", revision="main", mode="staged")
    staged = worker._wm.tensors
    name = "model.layers.0.self_attn.q_proj.weight"
    good = staged[name]
    try:
        staged[name] = good[:-1]
        with pytest.raises(wm.ManifestError) as caught:
            worker.wm_activate("broken")
        assert (caught.value.code, caught.value.path) == ("vllm_staged_mismatch", "/tensors/" + name)
        del staged[name]
        with pytest.raises(wm.ManifestError) as caught:
            worker.wm_apply_staged()
        assert caught.value.code == "vllm_staged_mismatch" and name in str(caught.value)
    finally:
        staged[name] = good
        worker.wm_resume()
    # Refused before vLLM saw it: the engine lives on, on its version.
    assert worker.wm_version() != "broken"
    assert engine.generate() == setup["tokens"]["a"]

