"""A rejection points at the value as the user wrote it (issue 24): the input position of
a fragment, although the rules run on the fragments sorted by id, and the numbers behind
the rule in `detail`. Expectations are computed here from the document."""

from __future__ import annotations

import json
import math
import pathlib

import pytest

import weight_manifest as wm

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "moe-ep-pp"


def reversed_placement() -> dict:
    """The example placement with its fragments in reverse id order: input positions are
    not the sorted ones."""
    document = json.loads((EXAMPLE / "placement.json").read_text())
    document["fragments"].reverse()
    document["placement_id"] = None
    return document


def sharded_fragment(document: dict) -> tuple[int, dict, int]:
    """The input index of the first fragment that starts its tensor on a split axis and
    covers more than one element there, its tensor, and that axis."""
    tensors = {t["tensor_id"]: t for t in document["tensors"]}
    for i, f in enumerate(document["fragments"]):
        tensor = tensors[f["tensor_id"]]
        for axis in tensor["shard_dims"] or []:
            if f["global_offset"][axis] == 0 and 1 < f["local_shape"][axis] < tensor["global_shape"][axis]:
                return i, tensor, axis
    raise AssertionError("the example has no such fragment")


def rejection(document: dict) -> wm.ManifestError:
    with pytest.raises(wm.ManifestError) as raised:
        wm.PlacementManifest.from_json(json.dumps(document))
    return raised.value


def test_nbytes_points_at_the_input_fragment_and_says_the_size() -> None:
    document = reversed_placement()
    fragment = document["fragments"][3]
    fragment["nbytes"] += 1
    tensor = next(t for t in document["tensors"] if t["tensor_id"] == fragment["tensor_id"])
    expected = math.prod(fragment["local_shape"]) * tensor["itemsize"]
    error = rejection(document)
    assert error.code == "nbytes_mismatch"
    assert error.path == "/fragments/3/nbytes"
    assert error.detail == {"expected": expected, "got": expected + 1, "other": None}
    # The reference's message is kept.
    assert str(error) == (f"fragment byte size mismatch: {fragment['placement_fragment_id']}: "
                          f"expected {expected}, got {expected + 1}")


def test_a_duplicate_id_names_both_places() -> None:
    document = reversed_placement()
    document["fragments"][5]["placement_fragment_id"] = document["fragments"][1]["placement_fragment_id"]
    error = rejection(document)
    assert error.code == "duplicate_fragment_id"
    # Sorted by id (stable), the one at input 5 comes second.
    assert error.path == "/fragments/5/placement_fragment_id"
    assert error.detail["other"] == "/fragments/1/placement_fragment_id"


def test_out_of_bounds_names_the_axis() -> None:
    document = reversed_placement()
    i, tensor, axis = sharded_fragment(document)
    fragment = document["fragments"][i]
    fragment["global_offset"][axis] = tensor["global_shape"][axis] - 1
    error = rejection(document)
    assert error.code == "fragment_out_of_bounds"
    assert error.path == f"/fragments/{i}/local_shape/{axis}"
    assert error.detail == {"axis": axis, "offset": tensor["global_shape"][axis] - 1,
                            "extent": fragment["local_shape"][axis], "size": tensor["global_shape"][axis]}


def test_an_overlap_names_the_other_box_and_the_common_region() -> None:
    document = reversed_placement()
    i, tensor, axis = sharded_fragment(document)
    j = 0 if i != 0 else 1
    a, b = document["fragments"][i], document["fragments"][j]
    # Put b on a's tensor and rank, shifted by one on the split axis.
    b.update({k: json.loads(json.dumps(a[k])) for k in ("tensor_id", "rank", "local_shape", "nbytes")})
    b["global_offset"] = list(a["global_offset"])
    b["global_offset"][axis] = a["global_offset"][axis] + 1
    error = rejection(document)
    assert error.code == "fragment_overlap"
    assert {error.path, error.detail["other"]} == {f"/fragments/{i}", f"/fragments/{j}"}
    start = [max(x, y) for x, y in zip(a["global_offset"], b["global_offset"])]
    end = [min(x + e, y + e) for x, y, e in zip(a["global_offset"], b["global_offset"], a["local_shape"])]
    boxes = [{"offset": f["global_offset"], "shape": f["local_shape"]} for f in (a, b)]
    assert sorted(error.detail["boxes"], key=json.dumps) == sorted(boxes, key=json.dumps)
    assert error.detail["offset"] == start
    assert error.detail["shape"] == [e - s for s, e in zip(start, end)]
