"""What the two examples that drive ``vllm serve`` share (vllm-api here, and rl-loop, which
puts this folder on its path): the prompts, HF transformers' greedy tokens on a state dict
(the oracle), a server's own greedy tokens and weight version, waiting until servers are
healthy, and stopping the process groups an example started."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

PROMPTS = [[1, 2, 3, 4], [17, 300, 5], [500, 7, 7, 9, 11, 13]]
NEW_TOKENS = 12


def hf_greedy(config: Any, state: dict[str, Any]) -> list[list[int]]:
    """HF transformers' greedy continuation of each prompt on ``state`` (the oracle)."""
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    model.load_state_dict(state, strict=True)
    out = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = torch.tensor([prompt])
            for _ in range(NEW_TOKENS):
                ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            out.append(ids[0, len(prompt):].tolist())
    return out


def served(url: str, model: str) -> dict[str, Any]:
    """A server's greedy tokens of each prompt (its own completions endpoint) and the weight
    version it reports."""
    import requests

    tokens = []
    for prompt in PROMPTS:
        # Generous: on two shared cores a server may be busy with another engine's update.
        reply = requests.post(f"{url}/v1/completions", timeout=300, json={
            "model": model, "prompt": prompt, "max_tokens": NEW_TOKENS, "temperature": 0, "ignore_eos": True,
            "return_token_ids": True})
        reply.raise_for_status()
        tokens.append(list(reply.json()["choices"][0]["token_ids"]))
    version = requests.get(f"{url}/weight_info", timeout=30).json()["weight_version"]
    return {"tokens": tokens, "weight_version": version}


def wait_healthy(urls: list[str], seconds: float) -> None:
    """Returns when every server answers ``/health``; raises after ``seconds`` in all."""
    import requests

    deadline = time.monotonic() + seconds
    for url in urls:
        while True:
            try:
                if requests.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server at {url} was not healthy in {seconds:g} s")
            time.sleep(0.5)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """Every process still running, by its process group (each was started in a session of
    its own): SIGTERM, then SIGKILL after 30 s."""
    for process in processes:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
