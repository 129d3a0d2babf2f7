"""The generated code list (weight_manifest._codes, from schema/codes.json) is the list the
core raises from: every rejection's code is in it, in the order the C ABI numbers."""

import json
from pathlib import Path

import pytest

import weight_manifest as wm
from weight_manifest._codes import ADDED_CODES, CODES, CONTRACT_CODES

ROOT = Path(__file__).resolve().parents[3]


def test_the_list_is_the_codes_file_in_order():
    listed = json.loads((ROOT / "schema" / "codes.json").read_text(encoding="utf-8"))["codes"]
    assert list(CODES) == [c["code"] for c in listed]
    assert list(CONTRACT_CODES) == [c["code"] for c in listed if c["origin"] == "contract"]
    assert len(CONTRACT_CODES) == 57 and len(set(CODES)) == len(CODES)
    assert "limit_exceeded" in ADDED_CODES


@pytest.mark.parametrize(
    "text",
    ["{", "[]", '{"a":1,"a":2}', '{"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]}'],
)
def test_rejections_carry_a_listed_code(text):
    with pytest.raises(wm.ManifestError) as caught:
        wm.PlacementManifest.from_json(text)
    assert caught.value.code in CODES
