"""Shared builders: the contract's worked example W1 (§7.4) as Python objects, and the
paths of the reference vectors and the Rust CLI."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Optional

import pytest

# Mooncake's TCP transport connects through the host's LAN address unless told otherwise;
# every engine and Store client of the tests (and the examples they start) uses 127.0.0.1.
os.environ.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")

import weight_manifest as wm

ROOT = Path(__file__).resolve().parents[3]

# What installs a package of the test environment: every one is pinned in the lock.
INSTALL = (
    "install the test environment: `make python-venv` (it runs `.venv/bin/python -m pip install "
    "--no-deps -r bindings/python/requirements.lock`)"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """No test of the suite may skip: a skip (an ``importorskip``, a ``skip`` mark) is
    reported as a failure with its reason, so a missing package is never silent."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"the test skipped ({reason}); no test may skip: {INSTALL}"


def require(module: str) -> Any:
    """The module ``module`` of the test environment, imported; a test that needs an absent
    one fails with the install command, never skips."""
    try:
        return importlib.import_module(module)
    except ImportError as missing:
        pytest.fail(f"{module} is not importable ({missing}): {INSTALL}")
REFERENCE = ROOT / "tests" / "vectors" / "reference"

W1_ID = "sha256:c4f3bc2feed99a64ff156fd57cb5cf626ae8b38c1551c0fe2225e1921e14d73a"
W1_DIGEST = "7320a5090dc88556c57e5d9e8cb316d05b3bf99b00f7a0c0da04198ca995e915"


def _with(cls: Any, changes: dict[str, Any], **defaults: Any) -> Any:
    """``cls`` built from ``defaults`` with ``changes`` applied."""
    return cls(**{**defaults, **changes})


def descriptor(**changes: Any) -> wm.TensorDescriptor:
    return _with(
        wm.TensorDescriptor,
        changes,
        tensor_id="layers.2.experts.3.w1",
        global_shape=(8, 4),
        dtype="bfloat16",
        itemsize=2,
        partition_dim=0,
        layer_id=2,
        expert_id=3,
        layout_fingerprint="test:qwen:bf16:v1",
    )


def placement_fragment(**changes: Any) -> wm.PlacementFragment:
    return _with(
        wm.PlacementFragment,
        changes,
        placement_fragment_id="placement-0",
        tensor_id="layers.2.experts.3.w1",
        global_offset=(0, 0),
        local_shape=(4, 4),
        nbytes=32,
        rank=wm.ParallelRank(pp=1, ep=1),
    )


def runtime_fragment(**changes: Any) -> wm.RuntimeFragment:
    return _with(
        wm.RuntimeFragment,
        changes,
        fragment_id="runtime-0",
        tensor_id="layers.2.experts.3.w1",
        global_offset=(0, 0),
        local_shape=(4, 4),
        address=0x1000,
        nbytes=32,
        worker_id="worker-0",
        endpoint="worker-0:9000",
        device="cuda:0",
        rank=wm.ParallelRank(pp=1, ep=1),
        lease_generation=7,
    )


def runtime_manifest(**changes: Any) -> wm.RuntimeManifest:
    return _with(
        wm.RuntimeManifest,
        changes,
        model_id="model",
        revision="revision",
        instance_id="instance",
        tensors=(descriptor(),),
        fragments=(runtime_fragment(),),
        lease_id="lease-7",
        generation=7,
    )


def w1(**changes: Any) -> wm.PlacementManifest:
    return _with(
        wm.PlacementManifest,
        changes,
        model_id="model",
        revision="revision",
        tensors=(descriptor(),),
        fragments=(placement_fragment(),),
    )


def inventory_record(**changes: Any) -> dict[str, Any]:
    """One runtime inventory record: W2's fragment (§7.4)."""
    record: dict[str, Any] = dict(
        tensor_id="layers.2.experts.3.w1",
        global_shape=[8, 4],
        dtype="bfloat16",
        itemsize=2,
        partition_dim=0,
        layer_id=2,
        expert_id=3,
        layout_fingerprint="test:qwen:bf16:v1",
        is_contiguous=True,
        local_shape=[4, 4],
        stride=[4, 1],
        storage_offset=0,
        byte_offset=0,
        rank={"dp": 0, "tp": 0, "pp": 1, "ep": 1},
        lease_generation=7,
        fragment_id="runtime-0",
        global_offset=[0, 0],
        address=4096,
        nbytes=32,
        worker_id="worker-0",
        endpoint="worker-0:9000",
        device="cuda:0",
    )
    record.update(changes)
    return record


def inventory(*records: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A runtime inventory (W2 by default)."""
    document: dict[str, Any] = dict(
        generation=7,
        model_id="model",
        revision="revision",
        instance_id="instance",
        lease_id="lease-7",
        tensors=list(records) if records else [inventory_record()],
    )
    document.update(changes)
    return document


@pytest.fixture(scope="session")
def cli() -> Path:
    """The Rust CLI built by `cargo build`, in CARGO_TARGET_DIR when it is set
    (WEIGHT_MANIFEST_CLI overrides)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = Path(os.environ.get("WEIGHT_MANIFEST_CLI", target / "debug" / "weight-manifest"))
    assert path.is_file(), f"build the CLI first (cargo build): {path}"
    return path


def started_by(marker: str) -> list[str]:
    """The processes whose environment holds ``WM_TEST_RUN=<marker>``: every process one
    run started, however deep, whatever its name, and none of another test's or user's
    (a Mooncake master of someone else's is not this run's leftover)."""
    tag = f"WM_TEST_RUN={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag in (entry / "environ").read_bytes().split(b"\0"):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name} {command}")
        except OSError:  # gone meanwhile, or a kernel thread
            continue
    return found


def run_example(example: Path, *args: str) -> tuple[int, Optional[dict[str, Any]], str]:
    """Exit code, the last line's JSON (if any) and standard error of one run of an
    example script; no process it started may outlive it (a second's grace for exits
    already signalled)."""
    marker = uuid.uuid4().hex
    env = {**os.environ, "WM_TEST_RUN": marker}
    done = subprocess.run([sys.executable, str(example), *args, "--timeout", "120"], capture_output=True,
                          text=True, timeout=600, env=env)
    deadline = time.monotonic() + 1.0
    while (left := started_by(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"the example left processes behind: {left}"
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines else None
    return done.returncode, result, done.stderr


def verified_example(example: Path, *args: str) -> dict[str, Any]:
    """The result of a run that must succeed and verify."""
    code, result, stderr = run_example(example, *args)
    assert code == 0, stderr[-3000:]
    assert result is not None and result["verified"] is True
    return result
