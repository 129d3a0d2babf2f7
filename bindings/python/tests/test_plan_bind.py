"""``bind_plan``: a reshard plan bound to the runtime bindings of its two placements
(contract §17.4), on the plan-bind vectors (tests/vectors/plan_bind/)."""

from __future__ import annotations

import json

import pytest

import weight_manifest as wm
from conftest import ROOT
from weight_manifest import _native

VECTORS = ROOT / "tests" / "vectors" / "plan_bind"


def text(name: str) -> str:
    return (VECTORS / name).read_text(encoding="utf-8")


def manifest(name: str) -> wm.RuntimeBindingManifest:
    return _native.binding_from_json(wm.RuntimeBindingManifest, text(name))


def test_binds_the_vectors_from_texts_and_from_manifests() -> None:
    expected = text("bound-plan.json")
    plan = text("plan.json")
    fenced = wm.bind_plan(
        plan, text("source-binding.json"), text("target-binding.json"), source_generation=3, target_generation=12
    )
    assert fenced.to_json() == expected
    unfenced = wm.bind_plan(plan.encode(), manifest("source-binding.json"), manifest("target-binding.json"))
    assert unfenced.to_json() == expected
    assert fenced.plan_id == json.loads(plan)["plan_id"]
    assert fenced.bound_plan_id == json.loads(expected)["bound_plan_id"]
    assert "bind_plan" not in wm.__all__  # an addition, not the reference API


@pytest.mark.parametrize(
    ("plan", "target", "fence", "code"),
    [
        ("plan.json", "target-binding-stale.json", 12, "plan_binding_generation_mismatch"),
        ("plan.json", "target-binding-other-digest.json", None, "plan_binding_digest_mismatch"),
        ("plan.json", "source-binding.json", None, "plan_binding_placement_id_mismatch"),
        ("tampered", "target-binding.json", None, "plan_id_mismatch"),
    ],
)
def test_rejections_carry_their_code(plan: str, target: str, fence: int | None, code: str) -> None:
    document = text("plan.json")
    if plan == "tampered":
        document = document.replace('"nbytes":8', '"nbytes":9', 1)
    with pytest.raises(wm.ManifestError) as raised:
        wm.bind_plan(document, manifest("source-binding.json"), text(target), target_generation=fence)
    assert raised.value.code == code
    assert str(raised.value)


def test_the_plan_is_read_before_the_bindings() -> None:
    with pytest.raises(wm.ManifestError) as raised:
        wm.bind_plan("[]", "{", "{")
    assert raised.value.code == "plan_document_invalid"
    with pytest.raises(wm.ManifestError) as raised:
        wm.bind_plan(text("plan.json"), "{", "{")
    assert raised.value.code == "invalid_json"
