"""The RL loop of examples/rl-loop, small: 2 steps (the first trains every tensor, the
second only the top decoder layer and the final norm) of a 2-rank DTensor trainer, each
followed by a versioned delta update of one vLLM engine on another emulated host; the
engine's greedy tokens after every update must be HF transformers' on the trainer's
gathered weights of that step (the example compares them; its JSON says so per step).

Independent of the example's own figures: the delta's changed bytes must be exactly the
bytes of the tensors the second step trains, counted here from the model's config, and
the tokens must change between steps (else an update that never landed would pass), and
the trainer's reshard through the group must equal torch's own ``redistribute``.

Needs root (network namespaces): it fails, never skips, without. Prefix wmrlt, network
198.18.151.0/24. About 75 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

LOOP = ROOT / "examples" / "rl-loop" / "rl_loop.py"
HIDDEN, LAYERS, VOCAB = 256, 2, 2048


def top_layer_bytes(hidden: int, kv_heads: int, head_dim: int) -> int:
    """The fp32 bytes of one Llama decoder layer (q, k, v, o; gate, up, down with an
    intermediate size of 3 * hidden; two norms) and the final norm."""
    attention = 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim
    mlp = 3 * hidden * 3 * hidden
    return 4 * (attention + mlp + 2 * hidden + hidden)


def test_two_steps_of_training_reach_a_vllm_engine_with_hfs_tokens() -> None:
    assert os.geteuid() == 0, "the RL loop runs on emulated hosts (network namespaces): root; CI runs as root"
    env = {**os.environ, "WM_HOSTS_PREFIX": "wmrlt", "WM_HOSTS_NET": "198.18.151"}
    done = subprocess.run([sys.executable, str(LOOP), "--steps", "2", "--full-steps", "1", "--engines", "1",
                           "--hidden", str(HIDDEN), "--layers", str(LAYERS), "--vocab", str(VOCAB)],
                          env=env, capture_output=True, text=True, timeout=600)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), done.stderr[-4000:]
    result = json.loads(lines[-1])
    assert (result["steps"], result["engines"], result["trainer_ranks"], result["engine"]) == (2, 1, 2, "vllm")
    assert result["tokens_equal"] is True
    assert [run["tokens_equal"] for run in result["runs"]] == [[True], [True]]
    assert result["steps_that_changed_tokens"] >= 1
    full, delta = result["runs"]
    assert full["delta_bytes"] == result["bytes"]
    assert delta["delta_bytes"] == top_layer_bytes(HIDDEN, kv_heads=1, head_dim=64) < result["bytes"]
    # The peers moved the same weights (the engine's tokens checked again after each).
    assert result["peers_tokens_equal"] is True
    assert all(result["peers"][k] > 0 for k in ("disk_seconds", "broadcast_seconds", "redistribute_seconds"))
    # The trainer's own reshard through the group (Shard(0) -> Shard(1)) wrote what torch's
    # redistribute gives, checked tensor by tensor on each rank.
    assert result["reshard"]["equal_to_redistribute"] is True
    assert result["reshard"]["bytes"] == result["bytes"]
    assert result["hosts"] == 2
    assert done.returncode == 0, done.stderr[-4000:]
