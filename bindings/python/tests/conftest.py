"""Shared builders: the contract's worked example W1 (§7.4) as Python objects, and the
paths of the reference vectors and the Rust CLI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm

ROOT = Path(__file__).resolve().parents[3]
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
