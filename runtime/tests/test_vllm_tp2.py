"""A direct update of a tensor-parallel (TP2) vLLM engine in its own processes, over the
Mooncake Transfer Engine on 127.0.0.1: the engine core and its two workers are spawned by
vLLM, the extension's methods are reached only through ``collective_rpc`` (msgpack
arguments), each worker starts its own transfer engine, and this process, the trainer,
pushes the tiny Llama's new weights into both workers' parameters.

Oracles: what each TP rank must hold is written out here from vLLM's tensor-parallel
rules (column-parallel rows and row-parallel columns split in two; with one KV head and two
ranks, k and v whole on both: ``num_kv_head_replicas = tp / kv_heads``), and compared with
the bytes read back from the workers' memory at the inventory's addresses; the tokens
after the update are HF transformers' greedy ones on the new weights."""

from __future__ import annotations

import os
from typing import Any, Iterator

import numpy as np
import pytest

import weight_manifest as wm
from no_skip import require
from vllm_engines import (NEW_TOKENS, PROMPTS, assert_preset_is_the_engines, checkpoint, hf_greedy, source_side,
                          vllm_api, wv, write_model)
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Side

psutil = require("psutil")
TP = 2


def rank_box(name: str, shape: tuple[int, ...], rank: int) -> tuple[slice, ...]:
    """What TP rank ``rank`` of 2 holds of checkpoint tensor ``name`` in vLLM."""
    whole = tuple(slice(None) for _ in shape)
    if name.endswith(("k_proj.weight", "v_proj.weight")) or "norm" in name:
        return whole  # one KV head, two ranks: replicated; norms replicated
    split = 1 if name.endswith(("o_proj.weight", "down_proj.weight")) else 0
    size = shape[split] // TP
    index = list(whole)
    index[split] = slice(rank * size, (rank + 1) * size)
    return tuple(index)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("vllm-tp2")
    a, b = write_model("llama", 0, root / "a"), write_model("llama", 1, root / "b")
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    saved = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "1"
    llm = None
    try:
        llm = vllm_api.LLM(model=str(a), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                           max_model_len=256, max_num_seqs=8, seed=0, tensor_parallel_size=TP,
                           distributed_executor_backend="mp", **wv.engine_args(direct=True))
        started = [p.pid for p in psutil.Process().children(recursive=True) if p.pid not in before]
        yield {"llm": llm, "a": a, "b": b, "hf": {"a": hf_greedy(a), "b": hf_greedy(b)}, "pids": started}
    finally:
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = saved or "0"
        # Every process this engine started ends, stopped by its PID (vLLM's own shutdown
        # waits for its workers on timeouts of its own), then the client is shut down.
        ours = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        for process in ours:
            process.terminate()
        _, alive = psutil.wait_procs(ours, timeout=2)
        for process in alive:
            process.kill()
        psutil.wait_procs(alive, timeout=5)
        if llm is not None:
            llm.llm_engine.engine_core.shutdown()
            del llm


def generate(llm: Any) -> list[list[int]]:
    params = vllm_api.SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True)
    outputs = llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
    return [list(o.outputs[0].token_ids) for o in outputs]


def test_tp2_direct_update_over_the_transfer_engine(setup: dict[str, Any]) -> None:
    from mooncake.engine import TransferEngine

    llm = setup["llm"]
    assert len(setup["pids"]) >= 3  # the engine core and two workers, in processes of their own
    assert generate(llm) == setup["hf"]["a"]
    summaries = llm.collective_rpc("wm_describe", kwargs={"instance_id": "engine", "model_id": "tiny",
                                                          "revision": "main"})
    assert [s["mode"] for s in summaries] == ["direct", "direct"]
    registered = llm.collective_rpc("wm_register", args=({"engine": "mooncake", "hostname": "127.0.0.1"},))
    try:
        inventories = llm.collective_rpc("wm_inventory")
        b = checkpoint(setup["b"])
        # The boxes the workers report are vLLM's tensor-parallel ones.
        for rank, inventory in enumerate(inventories):
            assert inventory["tensors"][0]["rank"]["tp"] == rank
            for record in inventory["tensors"]:
                index = rank_box(record["tensor_id"], tuple(b[record["tensor_id"]].shape), rank)
                box = [(s.start or 0, (s.stop if s.stop is not None else n) - (s.start or 0))
                       for s, n in zip(index, b[record["tensor_id"]].shape)]
                assert [list(x) for x in zip(*box)] == [record["global_offset"], record["local_shape"]], record
        # The adapter's preset at TP2 says the same, fused offsets included.
        assert_preset_is_the_engines("vllm-llama.json", setup["a"], inventories, TP)

        engine = TransferEngine()
        assert engine.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") == 0
        session = "127.0.0.1:%d" % engine.get_rpc_port()
        backend = transfer.EngineBackend(engine)
        source, held = source_side(b)
        for tensor in held.values():
            backend.register(tensor.data_ptr(), tensor.numel() * tensor.element_size())
        target = Side(inventories)
        bound = wm.bind_plan(wm.plan(source.placement, target.placement), source.binding, target.binding,
                             source_generation=1, target_generation=1)
        sessions = {"trainer-0": session}
        for inventory, reply in zip(inventories, registered):
            sessions[inventory["tensors"][0]["worker_id"]] = reply["session"]
        llm.collective_rpc("wm_pause")
        report = transfer.execute(bound, backend, sessions, mode="push", worker="trainer-0")
        llm.collective_rpc("wm_activate", args=("b",))
        assert llm.collective_rpc("wm_version") == ["b", "b"]
        assert report.bytes == sum(r["nbytes"] for i in inventories for r in i["tensors"])

        # Read every record back from the workers' memory and compare it with the rule.
        scratch = np.zeros(max(r["nbytes"] for i in inventories for r in i["tensors"]), dtype=np.uint8)
        backend.register(int(scratch.ctypes.data), scratch.nbytes)
        for rank, inventory in enumerate(inventories):
            for record in inventory["tensors"]:
                status = engine.transfer_sync_read(registered[rank]["session"], int(scratch.ctypes.data),
                                                   record["address"], record["nbytes"])
                assert status == 0
                name = record["tensor_id"]
                expected = b[name][rank_box(name, tuple(b[name].shape), rank)].contiguous().numpy().tobytes()
                assert scratch[: record["nbytes"]].tobytes() == expected, (rank, name)
        assert generate(llm) == setup["hf"]["b"] != setup["hf"]["a"]
    finally:
        llm.collective_rpc("wm_resume")
        llm.collective_rpc("wm_unregister")
