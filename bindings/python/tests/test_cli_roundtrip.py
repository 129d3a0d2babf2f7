"""The Python binding and the Rust CLI agree byte for byte on the reference files, and
each reads what the other writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import weight_manifest as wm
from weight_manifest import _native
from conftest import REFERENCE

MODELS = ["01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases"]


def run(cli: Path, *args: object) -> str:
    done = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("model", MODELS)
def test_placement_files(cli: Path, model: str, tmp_path: Path) -> None:
    canonical = (REFERENCE / f"{model}.placement.json").read_text()
    run(cli, "placement", "canonicalize", REFERENCE / f"{model}.placement.pretty.json", "-o", tmp_path / "cli.json")
    from_cli = wm.PlacementManifest.from_json((tmp_path / "cli.json").read_bytes())
    assert from_cli.to_json() == canonical

    pretty = wm.PlacementManifest.from_json((REFERENCE / f"{model}.placement.pretty.json").read_text())
    (tmp_path / "py.json").write_text(pretty.to_json())
    report = json.loads(run(cli, "placement", "validate", tmp_path / "py.json", "--format", "json"))
    assert (report["ok"], report["placement_id"], report["digest"]) == (True, pretty.placement_id, pretty.digest)
    assert report["canonical"] == canonical


@pytest.mark.parametrize("model", MODELS)
def test_projections(cli: Path, model: str, tmp_path: Path) -> None:
    inventory_path = REFERENCE / f"{model}.runtime-inventory.json"
    runtime = wm.RuntimeManifest.from_runtime_inventory(load(inventory_path))

    run(cli, "project", "placement", inventory_path, "-o", tmp_path / "placement.json")
    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    assert placement.to_json() == (tmp_path / "placement.json").read_text()

    run(cli, "project", "binding", inventory_path, "-o", tmp_path / "binding.json")
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    assert _native.binding_to_json(binding) == (tmp_path / "binding.json").read_text()
    parsed = _native.binding_from_json(wm.RuntimeBindingManifest, (tmp_path / "binding.json").read_text())
    assert parsed == binding


@pytest.mark.parametrize("model", MODELS)
def test_bind(cli: Path, model: str, tmp_path: Path) -> None:
    binding_path = REFERENCE / f"{model}.binding-inventory.json"
    runtime = wm.RuntimeManifest.from_runtime_inventory(load(REFERENCE / f"{model}.runtime-inventory.json"))
    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    (tmp_path / "placement.json").write_text(placement.to_json())

    run(cli, "bind", tmp_path / "placement.json", binding_path, "-o", tmp_path / "runtime.json")
    binding = wm.RuntimeBindingManifest.from_runtime_inventory(load(binding_path))
    bound = wm.bind_runtime_manifest(placement, binding)
    text = _native.runtime_to_json(bound)
    assert text == (tmp_path / "runtime.json").read_text()
    assert text == (REFERENCE / "derived" / f"{model}.bound-runtime.json").read_text()

    from_cli = _native.runtime_from_json(wm.RuntimeManifest, (tmp_path / "runtime.json").read_bytes())
    assert from_cli == bound
    assert wm.placement_manifest_from_runtime_manifest(from_cli).digest == placement.digest
    report = json.loads(run(cli, "runtime", "validate", tmp_path / "runtime.json", "--format", "json"))
    assert report["ok"] is True
