"""weight-manifest as a backend of vLLM's own weight-sync API, on the in-process ``LLM``
path: ``LLM(..., weight_transfer_config={"backend": "weight_manifest"})`` (the plugin found
through its entry point, as vLLM loads it), a trainer of one rank holding the tensors whole,
driven through ``WeightTransferTrainerFactory.trainer_init`` with a client made of the
``LLM``'s own four methods. Both ways a worker takes updates: staged (vLLM's default CPU
engine, linears packed: its layer-wise reload) and direct (linears kept plain).

The oracle of every update is HF ``transformers``' greedy continuation on the trainer's
tensors (an HF model loaded from them), never this project's output; a delta's bytes are
counted from the tensors the test changed; a fault (a source byte corrupted after the
bytes moved) must fail ``finish_weight_update`` with ``transfer_verify_failed`` while the
engine keeps vLLM's weight version and HF's tokens of the generation before, and the
next update must be taken (vLLM's session closed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

import weight_manifest as wm
from vllm_engines import COMMON, NEW_TOKENS, PROMPTS, hf_model, torch, transformers, vllm_api

from weight_manifest_runtime import vllm as wv  # noqa: E402


class LLMClient:
    """The trainer's client of an in-process ``LLM``: its own weight-sync methods."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def init_weight_transfer_engine(self, init_info: dict[str, Any]) -> None:
        self.llm.init_weight_transfer_engine({"init_info": init_info})

    def start_weight_update(self) -> None:
        self.llm.start_weight_update()

    def update_weights(self, update_info: Any) -> None:
        self.llm.update_weights({"update_info": update_info})

    def finish_weight_update(self, weight_version: Any = None) -> None:
        self.llm.finish_weight_update(weight_version)


def hf_tokens(state: dict[str, Any]) -> list[list[int]]:
    """HF transformers' greedy continuation of each prompt on the tensors ``state``."""
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**COMMON)).eval()
    model.load_state_dict({n: t.detach().clone() for n, t in state.items()}, strict=True)
    out = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = torch.tensor([prompt])
            for _ in range(NEW_TOKENS):
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            out.append(ids[0, len(prompt):].tolist())
    return out


def generate(llm: Any) -> list[list[int]]:
    params = vllm_api.SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True)
    outputs = llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
    return [list(o.outputs[0].token_ids) for o in outputs]


@pytest.fixture(scope="module", params=["direct"])
def setup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import gc

    path: Path = tmp_path_factory.mktemp(f"vllm-wt-{request.param}") / "a"
    hf_model("llama", 0).save_pretrained(path)
    extra = {"additional_config": {wv.PLAIN_LINEARS: True}} if request.param == "direct" else {}
    llm = vllm_api.LLM(model=str(path), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                       max_model_len=256, max_num_seqs=8, seed=0, distributed_executor_backend="uni",
                       weight_transfer_config={"backend": "weight_manifest"}, **extra)
    try:
        yield {"mode": request.param, "llm": llm, "path": path}
    finally:
        engine_core = getattr(llm.llm_engine, "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del llm
        gc.collect()


def test_updates_through_vllms_api_give_hfs_tokens_and_a_fault_changes_nothing(setup: dict[str, Any]) -> None:
    from vllm.distributed.weight_transfer import WeightTransferTrainerFactory

    from weight_manifest_runtime.weight_transfer.kept import KeptOnTargets
    from weight_manifest_runtime.weight_transfer.trainer import TrainerInfo

    llm = setup["llm"]
    start = {n: t.detach().clone() for n, t in hf_model("llama", 0).state_dict().items()}
    assert generate(llm) == hf_tokens(start)
    # The trainer's tensors: another model's (the first update moves every byte).
    state = {n: t.detach().clone().contiguous() for n, t in hf_model("llama", 1).state_dict().items()}
    # The revisions a rollback restores, passed by the caller: the last two generations,
    # each a copy in the worker's memory.
    trainer = WeightTransferTrainerFactory.trainer_init(
        TrainerInfo(rank=0, state_dict=state, model_id="tiny", generation=0, mode=setup["mode"], block_elements=1024,
                    revisions=KeptOnTargets(keep=2, block_elements=1024)),
        client=LLMClient(llm))
    # No ``decisions`` given: the trainer made the record's folder, and removes it at its shutdown.
    assert trainer.log is not None
    decisions = trainer.log.folder.parent
    assert decisions.name.startswith("wm-vllm-decisions-") and trainer.log.folder.is_dir()
    try:
        worker = llm.llm_engine.model_executor.driver_worker.worker
        assert worker.weight_transfer_engine.status()["mode"] == setup["mode"]

        full = trainer.send_weights(mode="full")
        assert full["generation"] == 1 and llm.get_weight_version() == "1"
        tokens_1 = hf_tokens(state)
        assert generate(llm) == tokens_1 != hf_tokens(start)
        assert full["bytes"] == sum(t.numel() * t.element_size() for t in state.values())
        # The worker keeps a copy of generation 0 (what this update's rollback restored),
        # kept before the update; nothing is copied at the commit.
        assert full["kept_bytes"] == full["bytes"]

        # A delta: the trainer changes the final norm and one layer's o_proj in place.
        state["model.norm.weight"].mul_(-1.5)
        state["model.layers.1.self_attn.o_proj.weight"].add_(0.25)
        delta = trainer.send_weights(mode="delta", weight_version="step-2")
        assert llm.get_weight_version() == "step-2"
        tokens_2 = hf_tokens(state)
        assert generate(llm) == tokens_2 != tokens_1
        changed = state["model.norm.weight"].nbytes + state["model.layers.1.self_attn.o_proj.weight"].nbytes
        assert delta["bytes"] == changed < full["bytes"]
        # Generation 1 is not kept (revisions are kept before full updates only): the undo
        # log holds the delta's bytes, and the check hashed the two tensors' blocks only.
        assert (delta["undo_log"], delta["undo_bytes"], delta["hashed_bytes"]) == (True, changed, changed)

        # A fault: a source byte corrupted after the bytes moved, before the check.
        state["model.layers.0.mlp.down_proj.weight"].mul_(0.5)  # a real change that must not land
        victim = state["model.embed_tokens.weight"]

        def corrupt(step: str, worker_id: Any) -> None:
            if step == "transferred":
                victim.view(torch.uint8)[7] ^= 0x40

        trainer.on_step = corrupt
        with pytest.raises(wm.ManifestError) as caught:
            trainer.send_weights(mode="full")
        assert caught.value.code == "transfer_verify_failed", caught.value
        assert "model.embed_tokens.weight" in str(caught.value)
        assert trainer.finish_errors and "transfer_verify_failed" in trainer.finish_errors[0]
        assert llm.get_weight_version() == "step-2"
        assert generate(llm) == tokens_2
        status = worker.weight_transfer_engine.status()
        assert (status["serving"], status["active"], status["gate_open"]) == (True, 2, True)

        # vLLM's session was closed with the failure: the next update is taken.
        trainer.on_step = None
        victim.view(torch.uint8)[7] ^= 0x40
        again = trainer.send_weights(mode="full")
        assert again["generation"] == 3 and llm.get_weight_version() == "3"
        assert generate(llm) == hf_tokens(state) != tokens_2
    finally:
        trainer.shutdown()
    assert not decisions.exists(), f"the trainer left its decision record behind: {decisions}"


def test_a_tied_model_with_a_padded_vocabulary_updates_from_its_state_dict(tmp_path: Path) -> None:
    """The trainer passes ``state_dict()`` as it is: ``lm_head.weight`` is the embedding
    (tied), and the vocabulary (520) is not a multiple of vLLM's padding (64), so the
    engine's embedding parameter has rows the checkpoint lacks."""
    import gc

    from vllm.distributed.weight_transfer import WeightTransferTrainerFactory

    from weight_manifest_runtime.weight_transfer.trainer import TrainerInfo

    config = transformers.LlamaConfig(**{**COMMON, "tie_word_embeddings": True, "vocab_size": 520})
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path / "tied")
    torch.manual_seed(1)
    trained = transformers.LlamaForCausalLM(config).eval()
    state = trained.state_dict()
    assert state["lm_head.weight"].data_ptr() == state["model.embed_tokens.weight"].data_ptr()
    llm = vllm_api.LLM(model=str(tmp_path / "tied"), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                       max_model_len=256, max_num_seqs=8, seed=0, distributed_executor_backend="uni",
                       weight_transfer_config={"backend": "weight_manifest"},
                       additional_config={wv.PLAIN_LINEARS: True})
    try:
        model = llm.llm_engine.model_executor.driver_worker.worker.model_runner.model
        assert model.model.embed_tokens.weight.shape[0] > 520  # vLLM padded it
        trainer = WeightTransferTrainerFactory.trainer_init(
            TrainerInfo(rank=0, state_dict=state, model_id="tiny", generation=0, block_elements=1024,
                        decisions=str(tmp_path / "decisions")),
            client=LLMClient(llm))
        try:
            assert trainer.tied == {"lm_head.weight": "model.embed_tokens.weight"}
            result = trainer.send_weights(mode="full")
            untied = {n: t for n, t in state.items() if n != "lm_head.weight"}
            assert result["bytes"] == sum(t.numel() * t.element_size() for t in untied.values())
            expected = []
            with torch.no_grad():
                for prompt in PROMPTS:
                    ids = torch.tensor([prompt])
                    for _ in range(NEW_TOKENS):
                        ids = torch.cat([ids, trained(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
                    expected.append(ids[0, len(prompt):].tolist())
            assert generate(llm) == expected
        finally:
            trainer.shutdown()
        # A folder given is the caller's: the record stays.
        assert trainer.log is not None and trainer.log.folder.parent == tmp_path / "decisions"
        assert (trainer.log.folder / "decision").is_file()
    finally:
        engine_core = getattr(llm.llm_engine, "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del llm
        gc.collect()


def test_errors_name_what_to_change_and_change_nothing(setup: dict[str, Any]) -> None:
    """A malformed payload, a trainer tensor of another shape or dtype than the engine's,
    a tensor the engine does not hold, a worker joining twice: each its code, naming the
    member or tensor, and the engine keeps serving what it served."""
    from vllm.distributed.weight_transfer import WeightTransferTrainerFactory

    from weight_manifest_runtime.weight_transfer import payloads
    from weight_manifest_runtime.weight_transfer.kept import KeptOnTargets
    from weight_manifest_runtime.weight_transfer.trainer import TrainerInfo

    llm = setup["llm"]
    before = generate(llm), llm.get_weight_version()
    # The worker checks init_info against the schema before it acts.
    with pytest.raises(wm.ManifestError) as caught:
        llm.init_weight_transfer_engine({"init_info": {"coordinator": "127.0.0.1:1", "generation": -1}})
    assert caught.value.code == "vllm_transfer_payload_invalid"
    assert str(caught.value).startswith("vllm_transfer_payload_invalid: init_info is not a valid InitInfo")
    with pytest.raises(wm.ManifestError) as caught:
        payloads.check(payloads.UPDATE_INFO, {"update": "u", "generation": 1, "mode": "sideways", "coordinator": "c",
                                               "epoch": 1}, "update_info")
    assert caught.value.code == "vllm_transfer_payload_invalid" and caught.value.path == "/mode"

    base = {n: t.detach().clone() for n, t in hf_model("llama", 0).state_dict().items()}
    cases = {"shape": {"model.norm.weight": torch.ones(32)},
             "dtype": {"model.norm.weight": base["model.norm.weight"].to(torch.bfloat16)},
             "extra": {"model.extra.weight": torch.ones(3)}}
    for label, change in cases.items():
        with pytest.raises(wm.ManifestError) as caught:
            WeightTransferTrainerFactory.trainer_init(
                TrainerInfo(rank=0, state_dict={**base, **change}, model_id="tiny", generation=2),
                client=LLMClient(llm))
        assert caught.value.code == "plan_tensor_mismatch", (label, caught.value)
        assert next(iter(change)) in str(caught.value), (label, caught.value)

    trainer = WeightTransferTrainerFactory.trainer_init(
        TrainerInfo(rank=0, state_dict=base, model_id="tiny", generation=3), client=LLMClient(llm))
    try:
        init = {"coordinator": trainer.group.address if trainer.group else "", "key": "0" * 64, "group": "g",
                "generation": 3, "instance_id": "rollout", "mode": "auto", "model_id": "tiny", "revision": "rl"}
        with pytest.raises(wm.ManifestError) as caught:
            llm.init_weight_transfer_engine({"init_info": init})
        assert caught.value.code == "vllm_transfer_join_refused", caught.value
        assert "shutdown_weight_transfer_engine first" in str(caught.value)
        # vLLM's own shutdown of the engine: the worker leaves the group (its channel closes).
        assert trainer.coordinator is not None
        assert trainer.coordinator.alive(["rollout-dp0-tp0"]) == {"rollout-dp0-tp0": True}
        llm.shutdown_weight_transfer_engine()
        assert trainer.coordinator.alive(["rollout-dp0-tp0"]) == {"rollout-dp0-tp0": False}
    finally:
        trainer.shutdown()
    assert (generate(llm), llm.get_weight_version()) == before


def test_a_packed_engine_refuses_direct_and_takes_staged_updates(tmp_path: Path) -> None:
    """vLLM's default CPU engine packs its linears: a trainer asking for direct writes is
    told so at its init (the worker's code reaches it), and ``auto`` takes the staged way
    (vLLM's layer-wise reload), whose tokens are HF's."""
    import gc

    from vllm.distributed.weight_transfer import WeightTransferTrainerFactory

    from weight_manifest_runtime.weight_transfer.trainer import TrainerInfo

    hf_model("llama", 0).save_pretrained(tmp_path / "a")
    llm = vllm_api.LLM(model=str(tmp_path / "a"), skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
                       max_model_len=256, max_num_seqs=8, seed=0, distributed_executor_backend="uni",
                       weight_transfer_config={"backend": "weight_manifest"})
    try:
        state = {n: t.detach().clone() for n, t in hf_model("llama", 1).state_dict().items()}
        with pytest.raises(wm.ManifestError) as caught:
            WeightTransferTrainerFactory.trainer_init(
                TrainerInfo(rank=0, state_dict=state, model_id="tiny", mode="direct"), client=LLMClient(llm))
        assert caught.value.code == "vllm_direct_unsupported", caught.value
        assert "qkv_proj" in str(caught.value) and "staged" in str(caught.value)
        trainer = WeightTransferTrainerFactory.trainer_init(
            TrainerInfo(rank=0, state_dict=state, model_id="tiny", mode="auto"), client=LLMClient(llm))
        try:
            worker = llm.llm_engine.model_executor.driver_worker.worker
            assert worker.weight_transfer_engine.status()["mode"] == "staged"
            trainer.send_weights(mode="full")
            assert generate(llm) == hf_tokens(state)
        finally:
            trainer.shutdown()
    finally:
        engine_core = getattr(llm.llm_engine, "engine_core", None)
        if engine_core is not None and hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        del llm
        gc.collect()
