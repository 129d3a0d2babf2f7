"""The RL loop of examples/rl-loop on a cluster's shape, small: 4 trainer ranks and 2
``vllm serve`` engines of TP 2, each rank and each engine worker on a shaped link of its own,
2 steps (the first trains every tensor: a full update; the second only the top decoder layer
and the final norm: a delta), every peer beside it.

Independent of the example's own figures:
- each engine's greedy tokens after every update and after every peer are HF
  transformers' on the trainer's gathered weights (the example compares them; its JSON says
  so per step), and the tokens change between the steps (else an update that never landed
  would pass);
- the bytes each update moved are what vLLM's tensor-parallel rules say each worker holds
  (column-parallel rows and row-parallel columns split in two; with one KV head, k and v
  whole on both; norms whole), written out here: the whole model for the full update, the
  trained tensors only for the delta;
- every link the update's bytes crossed carried at least its share of them (the switch's
  counters), and a worker's link carried no more than its slice and the control traffic:
  each worker got its slice over its own link, not through a shared one;
- the trainer's own reshard wrote what torch's ``redistribute`` gives;
- nothing is left behind (namespaces, processes).

Needs root (network namespaces): it fails, never skips, without. Prefix wmrlt, network
198.18.151.0/24. About 3.5 minutes on 2 cores (the two servers' start, then 2 steps of every path)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import ROOT

LOOP = ROOT / "examples" / "rl-loop" / "rl_loop.py"
HIDDEN, LAYERS, VOCAB, TP, ENGINES, RANKS = 256, 2, 2048, 2, 2, 4


def shapes() -> dict[str, tuple[int, ...]]:
    """The checkpoint's tensors (a Llama of one KV head of 64, intermediate 3 * hidden)."""
    h, kv, inter = HIDDEN, 64, 3 * HIDDEN
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (VOCAB, h), "lm_head.weight": (VOCAB, h),
                                       "model.norm.weight": (h,)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        out.update({p + "self_attn.q_proj.weight": (h, h), p + "self_attn.k_proj.weight": (kv, h),
                    p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, h),
                    p + "mlp.gate_proj.weight": (inter, h), p + "mlp.up_proj.weight": (inter, h),
                    p + "mlp.down_proj.weight": (h, inter), p + "input_layernorm.weight": (h,),
                    p + "post_attention_layernorm.weight": (h,)})
    return out


def worker_bytes(name: str, shape: tuple[int, ...]) -> int:
    """The fp32 bytes one TP rank of 2 holds of ``name`` in vLLM."""
    whole = 4 * math.prod(shape)
    if name.endswith(("k_proj.weight", "v_proj.weight")) or "norm" in name:
        return whole  # one KV head, two ranks: replicated; norms replicated
    return whole // TP


def trained(name: str) -> bool:
    return name.startswith(f"model.layers.{LAYERS - 1}.") or name == "model.norm.weight"


def test_a_cluster_shaped_loop_reaches_tp2_engines_with_hfs_tokens() -> None:
    assert os.geteuid() == 0, "the RL loop runs on emulated hosts (network namespaces): root; CI runs as root"
    env = {**os.environ, "WM_HOSTS_PREFIX": "wmrlt", "WM_HOSTS_NET": "198.18.151"}
    before = set(Path(tempfile.gettempdir()).glob("wm-rl-loop-*"))
    done = subprocess.run([sys.executable, str(LOOP), "--steps", "2", "--full-steps", "1", "--ranks", str(RANKS),
                           "--engines", str(ENGINES), "--tp", str(TP), "--hidden", str(HIDDEN), "--layers",
                           str(LAYERS), "--vocab", str(VOCAB), "--gbit", "1"],
                          env=env, capture_output=True, text=True, timeout=900)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), done.stderr[-4000:]
    result = json.loads(lines[-1])
    assert (result["steps"], result["engines"], result["engine_tp"], result["trainer_ranks"], result["engine"]) \
        == (2, ENGINES, TP, RANKS, "vllm")
    assert result["links"] == RANKS + ENGINES * TP + 1 and result["link_gbit"] == 1
    assert result["tokens_equal"] is True
    full, delta = result["runs"]
    assert [full["mode"], delta["mode"]] == ["full", "delta"]
    assert full["tokens_equal"] == delta["tokens_equal"] == [True] * ENGINES
    assert full["hf"] != delta["hf"], "the step's training must change the greedy tokens"
    model = shapes()
    whole = ENGINES * sum(TP * worker_bytes(n, s) for n, s in model.items())
    assert full["bytes"] == whole
    assert delta["bytes"] == ENGINES * sum(TP * worker_bytes(n, s) for n, s in model.items() if trained(n)) < whole
    # Each worker's slice came over its own link: every worker link took at least its
    # slice and less than two slices (another worker's share would double it).
    # The hosts (examples/rl-loop/README.md): the ranks, the storage, then per engine its
    # server and its workers.
    slice_bytes = sum(worker_bytes(n, s) for n, s in model.items())
    links = full["ours"]["links"]
    workers = [f"wmrlt{RANKS + 1 + e * (1 + TP) + 1 + t}" for e in range(ENGINES) for t in range(TP)]
    assert all(slice_bytes <= links[h][1] < 2 * slice_bytes for h in workers), links
    # The trainer ranks sent it all between them, each its own shards, and took in little
    # (the workers' digests are sums of whole blocks, no partial blocks' bytes).
    ranks = [f"wmrlt{r}" for r in range(RANKS)]
    assert sum(links[h][0] for h in ranks) >= whole
    assert all(links[h][1] < slice_bytes // 4 for h in ranks), links
    for name in ("disk", "chain", "chain_after_gather", "broadcast", "redistribute"):
        peer = result["peers"][name]
        assert peer["seconds"] > 0 and peer["floor_seconds"] > 0
        assert peer["tokens_equal"] is True
    assert result["reshard"]["equal_to_redistribute"] is True
    assert result["leftovers"] == []
    assert done.returncode == 0, done.stderr[-4000:]
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "wmrlt" not in left
    assert not [p for p in Path(tempfile.gettempdir()).glob("wm-rl-loop-*") if p not in before], \
        "a passing run leaves no checkpoints behind"
