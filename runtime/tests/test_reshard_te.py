"""The reshard example on the real Mooncake Transfer Engine, across processes on 127.0.0.1.

Each run starts its own coordinator and one worker process per rank; every target checks
every byte it holds against the synthetic model's defining function (or the real
checkpoint's slice), computed independently of the planner and the executor. The fault
runs must fail with the fault's code, print no result, and leave no process behind."""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_example, verified_example

EXAMPLE = ROOT / "examples" / "reshard-te" / "reshard_te.py"
sys.path.insert(0, str(EXAMPLE.parent))
import model  # noqa: E402



def run(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    return run_example(EXAMPLE, *args)


def verified(*args: str) -> dict[str, Any]:
    return verified_example(EXAMPLE, *args)


@pytest.fixture(autouse=True, scope="module")
def engine() -> None:
    try:
        import mooncake.engine  # noqa: F401
    except ImportError as error:
        pytest.fail(f"the Mooncake Transfer Engine does not import ({error}); `make python-venv` installs it "
                    "and Debian's libibverbs1, librdmacm1 and libnuma1")


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_tp4_pp2_to_tp2_pp4_moves_and_verifies_every_byte(mode: str) -> None:
    result = verified("--size-mib", "24", "--mode", mode)
    # The synthetic model is 8 layers of 12 H*H float32 words and an H norm, plus a 2 H*H
    # embedding; its H is the smallest multiple of 256 reaching 24 MiB. The targets hold
    # it once, except the norms, which each of the 2 TP ranks holds.
    h = 256
    while 4 * h * h * 98 < 24 << 20:
        h += 256
    assert result["bytes"] == 4 * (98 * h * h + 8 * h * 2)
    assert result["mode"] == mode and result["segments"] > 0 and result["raw_te_gib_per_s"] > 0


def test_dim1_splits_tp2_to_tp1_stage_into_few_operations() -> None:
    result = verified("--size-mib", "16", "--source", "tp2", "--target", "tp1", "--mode", "pull")
    # Row-parallel tensors cost one run per row; staging issues one operation per region.
    assert result["segments"] < 100


@pytest.mark.parametrize("layouts", [("ep4", "ep2"), ("tp2,dp2", "tp1,dp2"), ("tp1", "tp2,pp2")])
def test_other_layouts_verify(layouts: tuple[str, str]) -> None:
    source, target = layouts
    experts = ["--experts", "4"] if "ep" in source else []
    verified("--size-mib", "8", "--source", source, "--target", target, *experts)


def test_the_real_minilm_checkpoint_tp2_to_tp1_verifies(tmp_path: Path) -> None:
    result = verified("--model", "minilm", "--source", "tp2", "--target", "tp1")
    # TP1 holds every tensor of the checkpoint once: its bytes, by the file's own header.
    data = model.minilm_file(tmp_path).read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    assert result["bytes"] == sum(e - s for name, t in header.items() if name != "__metadata__"
                                  for s, e in [t["data_offsets"]])


def test_the_local_backend_runs_the_same_update() -> None:
    verified("--backend", "local", "--size-mib", "8")


@pytest.mark.parametrize(
    "fault,mode,code",
    [
        ("kill-target", "push", "transfer_worker_lost"),
        ("kill-target", "pull", "transfer_worker_lost"),
        ("short-buffer", "push", "transfer_failed"),
        ("short-buffer", "pull", "transfer_failed"),
        ("stale-generation", "push", "transfer_fence_mismatch"),
        ("changed-lease", "pull", "transfer_fence_mismatch"),
        ("corrupt-byte", "push", "transfer_verify_failed"),
    ],
)
def test_each_fault_fails_the_update_naming_what_failed(fault: str, mode: str, code: str) -> None:
    exit_code, result, stderr = run("--size-mib", "16", "--mode", mode, "--fault", fault)
    assert exit_code == 1
    assert result is None, "a failed update printed a result"
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: [{code}]"), stderr[-3000:]
    if code in ("transfer_failed", "transfer_verify_failed"):
        assert "tensor " in last
    if code == "transfer_failed":
        assert " -> target-" in last
    if code in ("transfer_worker_lost", "transfer_fence_mismatch", "transfer_verify_failed"):
        assert "target-dp0.pp0.tp0.ep0" in last or "/target/" in last
    if fault == "corrupt-byte":
        # The coordinator's own content verification catches it (it runs before the
        # targets' own checks, whose message is "<worker>: ...; this target is not ready"),
        # naming the first tensor of the corrupted target and that target among its holders.
        caught = re.fullmatch(r"error: \[transfer_verify_failed\] after the update, tensor (\S+) differs on the "
                              r"targets from the sources' content digest \(held by ([^)]*)\); no target is ready", last)
        assert caught is not None, last
        assert "target-dp0.pp0.tp0.ep0" in caught.group(2).split(", ")


def test_a_delta_update_moves_only_the_changed_blocks_and_verifies() -> None:
    """After a verified full update, the sources change 1% of their 64-element blocks; the
    delta moves those blocks' bytes only (the synthetic rows are whole blocks: H is a
    multiple of 256), then the content digests and every target byte check again."""
    result = verified("--size-mib", "24", "--delta", "1", "--mode", "push")
    assert 0 < result["delta_bytes"] <= 0.015 * result["bytes"]
    # Exactly the bytes of the targets' elements the change touched (each target counts
    # them from the model's definition of the change, not from the delta).
    assert result["delta_bytes"] == result["delta_expected_bytes"]
    # Coalesced: nothing on the wire but those bytes.
    assert result["delta_wire_bytes"] == result["delta_bytes"]


def test_the_local_backend_catches_a_corrupted_byte_by_its_content_digest() -> None:
    exit_code, result, stderr = run("--backend", "local", "--size-mib", "8", "--fault", "corrupt-byte")
    assert exit_code == 1 and result is None
    assert stderr.strip().splitlines()[-1].startswith("error: [transfer_verify_failed]")
    assert "content digest" in stderr
