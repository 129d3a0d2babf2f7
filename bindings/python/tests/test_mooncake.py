"""The Python Mooncake functions (weight_manifest.mooncake) against upstream: every case of
the recorded oracle corpus (tests/mooncake/corpus, expectations from upstream's wheel:
accept or reject, code, pointer, text, digest) through the Python API, and live round trips
through upstream's own ``weight_placement_from_json`` / ``WeightManifest.from_json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm
from weight_manifest import mooncake

from conftest import ROOT

CORPUS = ROOT / "tests" / "mooncake" / "corpus"
PLACEMENT = ROOT / "tests" / "vectors" / "reference" / "02_moe_ep_pp.placement.json"


def cases(name: str) -> list[dict[str, Any]]:
    return list(json.loads((CORPUS / name).read_text(encoding="utf-8"))["cases"])


PLACEMENTS = cases("placement.json")
STORAGE = cases("storage.json")


@pytest.mark.parametrize("case", PLACEMENTS, ids=[c["id"] for c in PLACEMENTS])
def test_placement_cases_as_upstream_decided(case: dict[str, Any]) -> None:
    expect = case["expect"]
    if expect["ok"]:
        facts = mooncake.validate(case["input"])
        for member in ("placement_id", "digest"):
            if member in expect:
                assert facts[member] == expect[member]
    else:
        with pytest.raises(wm.ManifestError) as caught:
            mooncake.validate(case["input"])
        assert caught.value.code == expect["code"]
        if "pointer" in expect:  # where the case records one
            assert caught.value.path == expect["pointer"]


@pytest.mark.parametrize("case", STORAGE, ids=[c["id"] for c in STORAGE])
def test_storage_cases_as_upstream_decided(case: dict[str, Any]) -> None:
    expect = case["expect"]
    if expect["ok"]:
        manifest = mooncake.StorageManifest.from_json(case["input"])
        assert manifest.digest == expect["digest"]
        assert manifest.to_json() == expect["text"]
    else:
        with pytest.raises(wm.ManifestError) as caught:
            mooncake.StorageManifest.from_json(case["input"])
        assert caught.value.code == expect["code"]
        if "pointer" in expect:  # where the case records one
            assert caught.value.path == expect["pointer"]


def test_corpus_has_both_outcomes() -> None:
    for corpus in (PLACEMENTS, STORAGE):
        assert any(c["expect"]["ok"] for c in corpus) and any(not c["expect"]["ok"] for c in corpus)


@pytest.fixture(scope="module")
def upstream() -> Any:
    from mooncake.reshard import weight

    return weight


def test_export_is_the_clis_and_upstream_reads_it_back_byte_for_byte(upstream: Any, cli: Path, tmp_path: Path) -> None:
    placement = PLACEMENT
    text = mooncake.export_placement(wm.PlacementManifest.from_json(placement.read_text()))
    out = tmp_path / "m.json"
    subprocess.run([str(cli), "mooncake", "export", str(placement), "-o", str(out)], check=True)
    assert out.read_text() == text
    theirs = upstream.weight_placement_from_json(text)
    assert upstream.weight_placement_to_json(theirs) == text
    assert mooncake.validate(text)["placement_id"] == theirs.placement_id
    back = mooncake.import_placement(text)
    assert back.placement.to_json() == wm.PlacementManifest.from_json(placement.read_text()).to_json()
    assert back.dropped


def test_a_tampered_placement_is_rejected_with_a_code(upstream: Any) -> None:
    placement = PLACEMENT
    text = mooncake.export_placement(placement.read_text())
    bad = json.loads(text)
    bad["weight_generation"] = 7  # the placement_id no longer matches
    tampered = json.dumps(bad, sort_keys=True, separators=(",", ":"))
    with pytest.raises(ValueError) as theirs:
        upstream.weight_placement_from_json(tampered)
    with pytest.raises(wm.ManifestError) as caught:
        mooncake.validate(tampered)
    # Upstream's reason, in upstream's words, with this project's code and pointer.
    assert str(theirs.value) == "placement_id does not match canonical logical content"
    assert (caught.value.code, caught.value.path) == ("placement_id_mismatch", "/placement_id")
    assert str(caught.value) == str(theirs.value)


def test_a_built_storage_manifest_is_upstreams(upstream: Any) -> None:
    from mooncake.reshard.weight.storage_manifest import WeightManifest

    placement = wm.PlacementManifest.from_json(PLACEMENT.read_text())
    seen: dict[tuple[Any, ...], Any] = {}
    for f in placement.fragments:
        seen.setdefault((f.tensor_id, f.global_offset, f.local_shape), f)
    offset, stored = 0, []
    for f in sorted(seen.values(), key=lambda f: f.placement_fragment_id):
        stored.append((f.placement_fragment_id, f.tensor_id, list(f.global_offset), list(f.local_shape),
                       "ns/g/payload/0", offset, f.nbytes, list(f.aliases)))
        offset += f.nbytes
    built = mooncake.StorageManifest.build(placement, stored, namespace="ns", group_id="ns/g", weight_generation=3,
                                           created_at="2026-12-02T00:00:00Z")
    theirs = WeightManifest.from_json(built.to_json())
    assert theirs.to_json() == built.to_json() and theirs.manifest_digest == built.digest
    assert built.placement.tensors[0].tensor_id == placement.tensors[0].tensor_id
    with pytest.raises(wm.ManifestError) as caught:
        mooncake.StorageManifest.build(placement, [(*s[:4], "elsewhere/0", *s[5:]) for s in stored], namespace="ns",
                                       group_id="ns/g", weight_generation=3, created_at="now")
    assert caught.value.code == "mooncake_storage_key"


BINDINGS = json.loads((CORPUS / "bindings.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", BINDINGS["cases"], ids=[c["id"] for c in BINDINGS["cases"]])
def test_binding_cases_as_upstream_decided(case: dict[str, Any]) -> None:
    placement = BINDINGS["placements"][case["placement"]]
    expect = case["expect"]
    if expect["ok"]:
        mooncake.validate_bindings(case["input"], placement)
    else:
        with pytest.raises(wm.ManifestError) as caught:
            mooncake.validate_bindings(case["input"], placement)
        assert caught.value.code == expect["code"]
        if "pointer" in expect:
            assert caught.value.path == expect["pointer"]


def test_a_binding_exported_is_upstreams_and_imports_back(upstream: Any) -> None:
    name = PLACEMENT.name.split(".")[0]
    ours = wm.PlacementManifest.from_json(PLACEMENT.read_text())
    inventory = json.loads((PLACEMENT.parent / f"{name}.binding-inventory.json").read_text())
    binding = wm.RuntimeBindingManifest.from_runtime_inventory(inventory)
    placement_text = mooncake.export_placement(ours)
    exported = mooncake.export_binding(binding, placement_text)
    theirs = mooncake.upstream_bindings(exported)
    assert len(theirs) == len({f.rank for f in ours.fragments})
    upstream.validate_runtime_bindings(upstream.weight_placement_from_json(placement_text), theirs)
    back = mooncake.import_binding(exported, placement_text)
    assert back.binding.to_json() == binding.to_json()
    assert back.dropped
    # What upstream rejects is rejected: one participant's binding missing.
    short = json.dumps(json.loads(exported)[1:])
    with pytest.raises(ValueError):
        upstream.validate_runtime_bindings(upstream.weight_placement_from_json(placement_text),
                                           mooncake.upstream_bindings(short))
    with pytest.raises(wm.ManifestError) as caught:
        mooncake.import_binding(short, placement_text)
    assert caught.value.code == "mooncake_binding_participant"


def _rejection(cli: Path, *args: str) -> dict[str, Any]:
    """The JSON rejection of a CLI command that must exit 1."""
    done = subprocess.run([str(cli), *args, "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 1, (done.stdout, done.stderr)
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    return error


def test_a_document_given_to_the_other_format_names_its_keys_and_command(upstream: Any, cli: Path,
                                                                          tmp_path: Path) -> None:
    """Upstream's own texts given to `placement validate` point at `mooncake validate`; this
    project's placement given to `mooncake validate` or `mooncake import` names the keys
    missing and unexpected and `placement validate` (contract §20.1)."""
    from mooncake.reshard.weight.storage_manifest import WeightManifest

    theirs = upstream.weight_placement_to_json(
        upstream.weight_placement_from_json(mooncake.export_placement(PLACEMENT.read_text())))
    upstream_placement = tmp_path / "upstream.json"
    upstream_placement.write_text(theirs)
    error = _rejection(cli, "placement", "validate", str(upstream_placement))
    assert (error["code"], error["path"]) == ("fields_mismatch", "")
    assert error["detail"]["looks_like"] == {"kind": "Mooncake placement manifest",
                                             "command": "weight-manifest mooncake validate"}
    ours = set(json.loads(PLACEMENT.read_text()))
    assert error["detail"]["missing"] == sorted(ours - set(json.loads(theirs))) == ["fragments", "model_id"]
    assert error["detail"]["unexpected"] == sorted(set(json.loads(theirs)) - ours)

    stored = next(c for c in json.loads((CORPUS / "storage.json").read_text())["cases"] if c["expect"]["ok"])
    upstream_store = tmp_path / "store.json"
    upstream_store.write_text(WeightManifest.from_json(stored["input"]).to_json())
    error = _rejection(cli, "placement", "validate", str(upstream_store))
    assert error["detail"]["looks_like"] == {"kind": "Mooncake Store manifest",
                                             "command": "weight-manifest mooncake validate"}

    for command in ("validate", "import"):
        error = _rejection(cli, "mooncake", command, str(PLACEMENT))
        assert (error["code"], error["path"]) == ("fields_mismatch", "")
        assert error["detail"]["looks_like"] == {"kind": "placement manifest",
                                                 "command": "weight-manifest placement validate"}
        assert error["detail"]["unexpected"] == ["fragments", "model_id"]
        assert set(error["detail"]["missing"]) == set(json.loads(theirs)) - set(ours)
