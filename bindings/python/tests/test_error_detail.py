"""A fields_mismatch names the missing and unexpected keys, and the document kind they are
instead (issue 24); the message stays the reference's. Other rejections have no detail."""

from __future__ import annotations

import json
import pathlib

import pytest

import weight_manifest as wm

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "moe-ep-pp"


def test_a_runtime_inventory_read_as_a_placement_names_its_kind() -> None:
    text = (EXAMPLE / "runtime-inventory.json").read_text()
    with pytest.raises(wm.ManifestError) as raised:
        wm.PlacementManifest.from_json(text)
    error = raised.value
    assert (error.code, str(error), error.path) == (
        "fields_mismatch",
        "placement manifest schema fields do not match contract",
        "",
    )
    # The keys, from the file itself.
    keys = set(json.loads(text))
    expected = {"fragments", "model_id", "placement_id", "revision", "tensors"}
    assert error.detail == {
        "missing": sorted(expected - keys),
        "unexpected": sorted(keys - expected),
        "looks_like": {
            "kind": "runtime inventory",
            "command": "weight-manifest runtime validate --inventory",
        },
    }


def test_other_rejections_have_no_detail() -> None:
    with pytest.raises(wm.ManifestError) as raised:
        wm.PlacementManifest.from_json("{")
    assert raised.value.detail is None
