"""Updates written straight into a running vLLM engine's parameters (weight_manifest_runtime.vllm,
``mode="direct"``), on a tiny Llama and a tiny Qwen2 (q/k/v biases), each engine started
once for its tests with plain linear weights (``engine_args(direct=True)``).

Oracles: HF transformers' greedy tokens from the same weights, and the checkpoint's
tensors concatenated by hand as vLLM fuses them (vllm_engines.fused_expected)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import weight_manifest as wm
from vllm_engines import (Engine, assert_preset_is_the_engines, checkpoint, engine_on_two_checkpoints,
                          fused_expected, torch, update, wv)


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp(f"vllm-direct-{request.param}")
    for setup in engine_on_two_checkpoints(request.param, root, direct=True):
        setup["summary"] = setup["engine"].worker.wm_describe(instance_id="engine", model_id="tiny", revision="main")
        yield setup


def assert_params_are(engine: Engine, tensors: dict[str, Any]) -> None:
    """Every parameter's bytes are the checkpoint's tensors as vLLM fuses them."""
    params = engine.params()
    assert params
    for name, value in params.items():
        expected = fused_expected(tensors, name)
        assert expected is not None, name
        assert torch.equal(value, expected), name


def test_the_fused_layout_comes_from_vllms_own_loader(setup: dict[str, Any]) -> None:
    engine, summary = setup["engine"], setup["summary"]
    model_class = type(engine.worker.model_runner.model)
    layer = "model.layers.0"
    fused = summary["fused"]
    assert fused[f"{layer}.self_attn.qkv_proj.weight"] == [f"{layer}.self_attn.{p}_proj.weight" for p in "qkv"]
    assert fused[f"{layer}.mlp.gate_up_proj.weight"] == [f"{layer}.mlp.{p}_proj.weight" for p in ("gate", "up")]
    # The members' order is the class's own packing, which the extension checks too.
    assert model_class.packed_modules_mapping["qkv_proj"] == ["q_proj", "k_proj", "v_proj"]
    if setup["kind"] == "qwen2":
        assert fused[f"{layer}.self_attn.qkv_proj.bias"] == [f"{layer}.self_attn.{p}_proj.bias" for p in "qkv"]
    assert summary["skipped"] == []
    assert_params_are(engine, checkpoint(setup["a"]))


def test_the_adapters_vllm_preset_is_the_engines_layout(setup: dict[str, Any]) -> None:
    worker = setup["engine"].worker
    shapes = {n: tuple(p.shape) for n, p in worker.model_runner.model.named_parameters()}
    assert_preset_is_the_engines(f"vllm-{setup['kind']}.json", setup["a"], [worker.wm_inventory()], 1, shapes)


def test_each_record_is_its_box_of_the_fused_parameter(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    inventory = engine.worker.wm_inventory()
    params = dict(engine.worker.model_runner.model.named_parameters())
    tensors = checkpoint(setup["a"])
    records = {r["tensor_id"]: r for r in inventory["tensors"]}
    assert set(records) == set(tensors)
    layer = "model.layers.1.self_attn"
    qkv = params[f"{layer}.qkv_proj.weight"]
    rows = {"q": 0, "k": 64, "v": 96}  # [heads * head_dim | kv_heads * head_dim | kv_heads * head_dim]
    for p, row in rows.items():
        record = records[f"{layer}.{p}_proj.weight"]
        assert record["aliases"] == [f"{layer}.qkv_proj.weight"]
        assert record["address"] == qkv.data_ptr() + row * 64 * 4
        assert record["byte_offset"] == row * 64 * 4
        assert record["local_shape"] == list(tensors[f"{layer}.{p}_proj.weight"].shape)
        assert (record["global_offset"], record["rank"]) == ([0, 0], {"dp": 0, "tp": 0, "pp": 0, "ep": 0})
    embed = records["model.embed_tokens.weight"]
    assert (embed["aliases"], embed["address"]) == ([], params["model.embed_tokens.weight"].data_ptr())
    assert embed["layer_id"] is None and records[f"{layer}.q_proj.weight"]["layer_id"] == 1
    # The core reads the inventory: a valid runtime manifest, placement and binding.
    manifest = wm.RuntimeManifest.from_runtime_inventory(inventory, address_semantics="view")
    assert len(manifest.fragments) == len(tensors)


def test_a_direct_update_changes_the_tokens_to_hfs_on_the_new_weights(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    assert engine.generate() == setup["tokens"]["a"]
    addresses = {n: p.data_ptr() for n, p in engine.params().items()}
    result = update(engine, checkpoint(setup["b"]), "b")
    assert result["bytes"] == sum(t.numel() * 4 for t in checkpoint(setup["b"]).values())
    assert engine.worker.wm_version() == "b"
    assert_params_are(engine, checkpoint(setup["b"]))
    assert {n: p.data_ptr() for n, p in engine.params().items()} == addresses
    assert engine.generate() == setup["tokens"]["b"] != setup["tokens"]["a"]
    update(engine, checkpoint(setup["a"]), "a")
    assert engine.generate() == setup["tokens"]["a"]


def test_a_paused_engine_runs_no_forward_pass_until_the_version_is_active(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    worker = engine.worker
    from weight_manifest_runtime import transfer
    from vllm_engines import Side, source_side

    source, held = source_side(checkpoint(setup["b"]))
    target = Side([worker.wm_inventory()])
    bound = wm.bind_plan(wm.plan(source.placement, target.placement), source.binding, target.binding,
                         source_generation=1, target_generation=1)
    backend = transfer.LocalBackend()
    for tensor in held.values():
        backend.register(tensor.data_ptr(), tensor.numel() * tensor.element_size())
    worker.wm_register(backend)
    tokens: list[Any] = []
    try:
        worker.wm_pause()
        steps = worker.wm_steps()
        reader = threading.Thread(target=lambda: tokens.append(engine.generate()))
        reader.start()
        time.sleep(1.0)
        assert reader.is_alive() and worker.wm_steps() == steps  # held at the gate, nothing read
        transfer.execute(bound, backend, {"trainer-0": "t", worker.wm_where()["worker_id"]: "e"}, mode="push")
        time.sleep(0.2)
        assert worker.wm_steps() == steps
        worker.wm_activate("b")
        reader.join(60)
        assert not reader.is_alive() and worker.wm_steps() > steps
    finally:
        worker.wm_resume()
        worker.wm_unregister()
    # The request that arrived during the update saw only the new version.
    assert tokens == [setup["tokens"]["b"]]
    update(engine, checkpoint(setup["a"]), "a")


def test_the_staged_path_on_the_same_engine(setup: dict[str, Any]) -> None:
    engine = setup["engine"]
    worker = engine.worker
    worker.wm_describe(instance_id="engine", model_id="tiny", revision="main", mode="staged")
    try:
        records = worker.wm_inventory()["tensors"]
        (address, length), = worker.wm_regions()
        assert all(address <= r["address"] and r["address"] + r["nbytes"] <= address + length for r in records)
        assert all(r["aliases"] == [] and r["global_offset"] == [0] * len(r["local_shape"]) for r in records)
        result = update(engine, checkpoint(setup["b"]), "b")
        assert result["apply_seconds"] > 0
        assert_params_are(engine, checkpoint(setup["b"]))
        assert engine.generate() == setup["tokens"]["b"]
    finally:
        update(engine, checkpoint(setup["a"]), "a")
        worker.wm_describe(instance_id="engine", model_id="tiny", revision="main")
    assert engine.generate() == setup["tokens"]["a"]


def test_an_engine_that_follows_its_lifecycle_serves_what_it_activates(setup: dict[str, Any]) -> None:
    """``wm_follow(versions)``: the member's TargetVersions is the one owner of the version
    the engine serves. Two versioned updates driven through the lifecycle's own calls
    (prepare, the bytes, content, verified, activate): ``wm_version`` is the generation
    served, it moves only at the activation, the tokens are then HF's on the new weights,
    and ``wm_activate`` is refused while the engine follows."""
    from weight_manifest_runtime import transfer
    from weight_manifest_runtime.group import Member
    from weight_manifest_runtime.lifecycle import TargetVersions
    from vllm_engines import Side, source_side

    engine = setup["engine"]
    worker = engine.worker
    backend = transfer.LocalBackend()
    where = worker.wm_where()
    member = Member(worker.wm_tensors(), backend=backend, session="engine", register=worker.wm_regions(),
                    staging_bytes=0, **{**where, "endpoint": "engine"})
    versions = TargetVersions(member, 1)
    token = {"coordinator": "test", "epoch": 1}

    def versioned_update(tensors: dict[str, Any], generation: int) -> None:
        source, held = source_side(tensors)
        target = Side([member.inventory()])
        bound = wm.bind_plan(wm.plan(source.placement, target.placement), source.binding, target.binding,
                             source_generation=source.binding.generation,
                             target_generation=target.binding.generation)
        for tensor in held.values():
            backend.register(int(tensor.data_ptr()), tensor.numel() * tensor.element_size())
        member.call("lc_prepare", {"from_generation": generation - 1, "to_generation": generation, "mode": "full",
                                   **token})
        transfer.execute(bound, backend, {"trainer-0": "trainer", where["worker_id"]: "engine"}, mode="push")
        member.call("lc_content", {"generation": generation, **token})
        member.call("lc_verified", {"generation": generation, **token})
        assert worker.wm_version() == str(generation - 1)  # verified, not served yet
        member.call("lc_activate", {"generation": generation, **token})
        for tensor in held.values():
            backend.unregister(int(tensor.data_ptr()))

    try:
        worker.wm_follow(versions)
        assert worker.wm_version() == "1"
        with pytest.raises(wm.ManifestError) as caught:
            worker.wm_activate("b")
        assert caught.value.code == "vllm_arguments_invalid"
        versioned_update(checkpoint(setup["b"]), 2)
        assert worker.wm_version() == "2" and versions.serving
        assert engine.generate() == setup["tokens"]["b"]
        versioned_update(checkpoint(setup["a"]), 3)
        assert worker.wm_version() == "3"
        assert engine.generate() == setup["tokens"]["a"]
    finally:
        member.close()
        worker.wm_describe(instance_id="engine", model_id="tiny", revision="main")  # follows nothing again
    assert worker.wm_version() is None


def test_arguments_are_checked(setup: dict[str, Any]) -> None:
    worker = setup["engine"].worker
    with pytest.raises(wm.ManifestError) as caught:
        worker.wm_describe(instance_id="engine", model_id="tiny", revision="main", mode="both")
    assert caught.value.code == "vllm_arguments_invalid"
    with pytest.raises(wm.ManifestError) as caught:
        worker.wm_apply_staged()
    assert caught.value.code == "vllm_arguments_invalid"
    with pytest.raises(wm.ManifestError) as caught:
        worker.wm_register({"engine": "nccl"})
    assert caught.value.code == "vllm_arguments_invalid"
    assert wv.engine_args(direct=False)["additional_config"] == {wv.PLAIN_LINEARS: False}


def test_a_forward_pass_that_waits_too_long_for_a_paused_update_fails(setup: dict[str, Any]) -> None:
    """Last in the module: the failed step leaves this engine's requests behind."""
    engine = setup["engine"]
    engine.worker.wm_describe(instance_id="engine", model_id="tiny", revision="main", pause_timeout=0.5)
    engine.worker.wm_pause()
    try:
        with pytest.raises(wm.ManifestError) as caught:
            engine.generate()
        assert caught.value.code == "vllm_engine_paused"
    finally:
        engine.worker.wm_resume()
