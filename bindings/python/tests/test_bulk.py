"""The bulk path (``PlacementManifest.from_records``), manifests whose members are made on
first access, and the one-call dataclass constructors.

The oracle of the bulk path is the conformance corpus: every placement.parse fixture whose
document has the placement's five members is given to ``from_records`` as the records
``json.loads`` reads from it, and must give the fixture's expected canonical JSON, or its
code and pointer (computed by the Python oracle, tests/conformance/oracle)."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm
from conftest import REFERENCE, ROOT

PLACEMENT_FIXTURES = ROOT / "tests" / "conformance" / "placement"
MEMBERS = {"model_id", "revision", "tensors", "fragments", "placement_id"}
# Members from_records fills in when a record leaves them out: such a record is not the
# document the fixture holds, so those fixtures are left to the document readers.
DEFAULTED = {"tensors": {"layer_id", "expert_id", "shard_dims"}, "fragments": {"aliases"}}


def representable(document: Any) -> bool:
    if not isinstance(document, dict) or set(document) != MEMBERS:
        return False
    for member, defaulted in DEFAULTED.items():
        records = document[member]
        if isinstance(records, list):
            for record in records:
                if isinstance(record, dict) and not defaulted <= set(record):
                    return False
    return isinstance(document["tensors"], list) and isinstance(document["fragments"], list)


def cases() -> list[Path]:
    found = []
    for path in sorted(PLACEMENT_FIXTURES.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case["op"] != "placement.parse":
            continue
        try:
            document = json.loads(case["input"]["document"])
        except ValueError:
            continue
        if representable(document):
            found.append(path)
    return found


CASES = cases()


def test_the_corpus_gives_enough_cases() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("fixture", CASES, ids=lambda p: p.stem)
def test_records_are_read_as_their_document(fixture: Path) -> None:
    case = json.loads(fixture.read_text(encoding="utf-8"))
    document = json.loads(case["input"]["document"])
    expect = case["expect"]
    try:
        manifest = wm.PlacementManifest.from_records(**document)
    except wm.ManifestError as e:
        assert not expect["ok"], f"rejected: {e}"
        assert e.code == expect["code"]
        if "path" in expect:
            assert e.path == expect["path"]
        return
    except TypeError:
        # A member of a type no record can carry (e.g. records that are not objects).
        assert not expect["ok"]
        return
    assert expect["ok"], "accepted a rejected document"
    assert manifest.to_json() == expect["canonical"]
    assert manifest.placement_id == expect["placement_id"]


def reference_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((REFERENCE / "02_moe_ep_pp.placement.json").read_text())
    return document


def test_tuples_dicts_and_objects_give_one_placement() -> None:
    document = reference_document()
    expected = wm.PlacementManifest.from_json(json.dumps(document))
    as_dicts = wm.PlacementManifest.from_records(**document)
    as_tuples = wm.PlacementManifest.from_records(
        model_id=document["model_id"],
        revision=document["revision"],
        tensors=[
            (
                t["tensor_id"],
                t["global_shape"],
                t["dtype"],
                t["itemsize"],
                t["partition_dim"],
                t["layout_fingerprint"],
                t["layer_id"],
                t["expert_id"],
                t["shard_dims"],
            )
            for t in document["tensors"]
        ],
        fragments=[
            (
                f["placement_fragment_id"],
                f["tensor_id"],
                f["global_offset"],
                f["local_shape"],
                f["nbytes"],
                (f["rank"]["dp"], f["rank"]["tp"], f["rank"]["pp"], f["rank"]["ep"]),
            )
            for f in document["fragments"]
        ],
    )
    as_objects = wm.PlacementManifest.from_records(
        model_id=document["model_id"],
        revision=document["revision"],
        tensors=expected.tensors,
        fragments=[dataclasses.replace(f, rank=f.rank) for f in expected.fragments],
    )
    for built in (as_dicts, as_tuples, as_objects):
        assert built.to_json() == expected.to_json()
        assert (built.placement_id, built.digest) == (expected.placement_id, expected.digest)
    assert expected.placement_id == document["placement_id"]


def test_a_bad_record_is_named_by_its_pointer() -> None:
    document = reference_document()
    document["fragments"][1]["nbytes"] = 0
    with pytest.raises(wm.ManifestError) as raised:
        wm.PlacementManifest.from_records(**document)
    assert (raised.value.code, raised.value.path) == ("below_minimum", "/fragments/1/nbytes")
    document = reference_document()
    document["fragments"][0]["rank"] = (0, 0, 0)
    with pytest.raises(wm.ManifestError) as raised:
        wm.PlacementManifest.from_records(**document)
    assert raised.value.path is not None and raised.value.path.startswith("/fragments/0/rank")


def test_members_are_made_on_first_access() -> None:
    text = (REFERENCE / "02_moe_ep_pp.placement.json").read_text()
    lazy = wm.PlacementManifest.from_json(text)
    assert "fragments" not in lazy.__dict__ and "tensors" not in lazy.__dict__
    document = json.loads(text)
    # Independent of the core: the members as the document lists them.
    assert [f.placement_fragment_id for f in lazy.fragments] == sorted(
        f["placement_fragment_id"] for f in document["fragments"]
    )
    assert [t.tensor_id for t in lazy.tensors] == [t["tensor_id"] for t in document["tensors"]]
    eager = wm.PlacementManifest(
        model_id=lazy.model_id, revision=lazy.revision, tensors=lazy.tensors, fragments=lazy.fragments
    )
    assert eager == wm.PlacementManifest.from_json(text)
    assert pickle.loads(pickle.dumps(wm.PlacementManifest.from_json(text))) == eager
    assert dataclasses.replace(wm.PlacementManifest.from_json(text)) == eager
    with pytest.raises(AttributeError):
        lazy.no_such_member  # noqa: B018


def test_runtime_and_binding_members_are_made_on_first_access() -> None:
    inventory = json.loads((REFERENCE / "02_moe_ep_pp.runtime-inventory.json").read_text())
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory)
    assert "fragments" not in runtime.__dict__
    assert [f.fragment_id for f in runtime.fragments] == [r["fragment_id"] for r in inventory["tensors"]]
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    assert "fragments" not in binding.__dict__
    assert len(binding.fragments) == len(inventory["tensors"])
    assert wm.RuntimeManifest.from_json(runtime.to_json()).to_json() == runtime.to_json()
    assert wm.RuntimeBindingManifest.from_json(binding.to_json()).to_json() == binding.to_json()


def test_constructors_keep_normal_arguments_and_normalise_the_rest() -> None:
    offset = (0, 0)
    fragment = wm.PlacementFragment(
        placement_fragment_id="p",
        tensor_id="t",
        global_offset=offset,
        local_shape=[4, 4],  # type: ignore[arg-type]
        nbytes=32,
        rank=wm.ParallelRank(),
        aliases=("z", "a"),
    )
    assert fragment.global_offset is offset
    assert fragment.local_shape == (4, 4) and type(fragment.local_shape) is tuple
    assert fragment.aliases == ("a", "z")
    assert dataclasses.replace(fragment, nbytes=16).nbytes == 16
    with pytest.raises(wm.ManifestError) as raised:
        dataclasses.replace(fragment, nbytes=0)
    assert raised.value.code == "below_minimum"
    with pytest.raises(TypeError):
        wm.PlacementFragment(placement_fragment_id="p")  # type: ignore[call-arg]
    assert [f.name for f in dataclasses.fields(wm.PlacementFragment)][:2] == ["placement_fragment_id", "tensor_id"]


def test_plain_values_leave_the_cycle_collector_and_the_rest_stay() -> None:
    import gc
    import weakref

    rank = wm.ParallelRank(tp=1)
    fragment = wm.PlacementFragment("p", "t", (0,), (4,), 8, rank)
    assert not gc.is_tracked(rank) and not gc.is_tracked(fragment)
    # The values made by the core for a manifest's members leave it too.
    made = wm.PlacementManifest.from_json(wm.PlacementManifest(
        model_id="m", revision="r",
        tensors=(wm.TensorDescriptor("t", (4,), "f32", 2, 0, "x"),), fragments=(fragment,),
    ).to_json())
    assert not any(gc.is_tracked(v) for v in (*made.tensors, *made.fragments, made.fragments[0].rank))

    class Rank(wm.ParallelRank):
        pass

    # A subclass could hold anything: it stays tracked, and so does what holds it.
    subclassed = Rank(tp=1)
    assert gc.is_tracked(subclassed)
    held_rank = wm.PlacementFragment("p", "t", (0,), (4,), 8, subclassed)
    assert gc.is_tracked(held_rank)
    # A cycle through the subclassed rank is still collected.
    subclassed.fragment = held_rank  # type: ignore[attr-defined]
    probe = weakref.ref(subclassed)
    del subclassed, held_rank
    gc.collect()
    assert probe() is None

    class Owner:
        pass

    owner = Owner()
    held = wm.RuntimeFragment("f", "t", (0,), (4,), 4096, 8, "w", "e", "cpu", rank, 0, owner=owner)
    assert gc.is_tracked(held)
    # A cycle through an owner is still collected.
    owner.fragment = held  # type: ignore[attr-defined]
    probe = weakref.ref(owner)
    del owner, held
    gc.collect()
    assert probe() is None
    # Untracked values are still freed by reference counting.
    gone = weakref.ref(rank)
    del rank, fragment, made
    assert gone() is None
