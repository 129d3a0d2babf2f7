"""Inventories given as mappings or attribute objects, owner handling, projections and
bind (§10–§12)."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace
from typing import Any

import pytest

import weight_manifest as wm
from conftest import REFERENCE, inventory, inventory_record, runtime_manifest

W2_DIGEST = "9fb3a68c19f9be933676fffd1a43d2faef84e3ca0c16005a1237d37633d3ead8"
W2_LOGICAL = "logical:a6fe4dfe05d9e3dd45f24a617c01946b3b5112b4415c7e10420d22b3eaabe899"


@dataclasses.dataclass
class Rank:
    dp: int
    tp: int
    pp: int
    ep: int


def as_namespaces(document: dict[str, Any]) -> SimpleNamespace:
    """The inventory with every mapping turned into an attribute object."""
    def convert(value: Any) -> Any:
        if isinstance(value, dict):
            return SimpleNamespace(**{k: convert(v) for k, v in value.items()})
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    return convert(document)


def test_mapping_and_attribute_inventories_read_alike() -> None:
    from_mapping = wm.RuntimeManifest.from_runtime_inventory(inventory())
    from_attributes = wm.RuntimeManifest.from_runtime_inventory(as_namespaces(inventory()))
    record = inventory_record()
    record["rank"] = Rank(dp=0, tp=0, pp=1, ep=1)
    mixed = wm.RuntimeManifest.from_runtime_inventory(inventory(SimpleNamespace(**record)))
    assert from_mapping == from_attributes == mixed
    assert wm.placement_manifest_from_runtime_manifest(from_attributes).digest == W2_DIGEST


def test_rank_may_be_a_parallel_rank() -> None:
    record = inventory_record(rank=wm.ParallelRank(pp=1, ep=1))
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory(record))
    assert runtime.fragments[0].rank == wm.ParallelRank(pp=1, ep=1)


def test_reference_inventories_from_python_data() -> None:
    for model in ("01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases"):
        document = json.loads((REFERENCE / f"{model}.runtime-inventory.json").read_text())
        runtime = wm.RuntimeManifest.from_runtime_inventory(as_namespaces(document))
        placement = wm.placement_manifest_from_runtime_manifest(runtime)
        assert placement.to_json() == (REFERENCE / f"{model}.placement.json").read_text()
        binding_inventory = json.loads((REFERENCE / f"{model}.binding-inventory.json").read_text())
        binding = wm.RuntimeBindingManifest.from_runtime_inventory(binding_inventory)
        bound = wm.bind_runtime_manifest(placement, binding)
        assert wm.placement_manifest_from_runtime_manifest(bound) == placement


def test_placement_inventory() -> None:
    document = json.loads((REFERENCE / "01_tp_sharded_2d.runtime-inventory.json").read_text())
    placement = wm.PlacementManifest.from_runtime_inventory(as_namespaces(document))
    assert placement.to_json() == (REFERENCE / "01_tp_sharded_2d.placement.json").read_text()


def test_owner_resolver_gets_each_record_and_owners_follow_the_fragments() -> None:
    records = [
        inventory_record(),
        inventory_record(fragment_id="runtime-1", global_offset=[4, 0], address=8192, rank={"dp": 0, "tp": 1, "pp": 1, "ep": 1}),
    ]
    seen: list[Any] = []
    owners = [object(), object()]

    def resolve(record: Any) -> Any:
        seen.append(record)
        return owners[len(seen) - 1]

    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory(*records), owner_resolver=resolve)
    assert [r is o for r, o in zip(seen, records)] == [True, True]
    assert [f.owner for f in runtime.fragments] == owners

    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    by_runtime_id = {f.fragment_id: f.owner for f in binding.fragments}
    assert by_runtime_id == {"runtime-0": owners[0], "runtime-1": owners[1]}

    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    moved = dataclasses.replace(
        binding,
        instance_id="elsewhere",
        generation=8,
        lease_id="lease-8",
        fragments=[dataclasses.replace(f, address=f.address + 0x100000, owner=("new", f.fragment_id)) for f in binding.fragments],
    )
    bound = wm.bind_runtime_manifest(placement, moved)
    assert {f.fragment_id: f.owner for f in bound.fragments} == {"runtime-0": ("new", "runtime-0"), "runtime-1": ("new", "runtime-1")}
    assert all(f.lease_generation == 8 for f in bound.fragments)
    assert wm.placement_manifest_from_runtime_manifest(bound).digest == placement.digest


def test_owners_of_directly_built_fragments_are_carried() -> None:
    owner = bytearray(b"storage")
    runtime = runtime_manifest()
    fragment = dataclasses.replace(runtime.fragments[0], owner=owner)
    runtime = dataclasses.replace(runtime, fragments=[fragment])
    assert runtime.fragments[0] is fragment
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    assert binding.fragments[0].owner is owner


def test_binding_inventory_owner_resolver() -> None:
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory())
    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    document = {
        "generation": 9,
        "model_id": "model",
        "revision": "revision",
        "placement_id": placement.placement_id,
        "placement_digest": placement.digest,
        "instance_id": "instance-b",
        "lease_id": "lease-9",
        "fragments": [
            SimpleNamespace(
                is_contiguous=True, placement_fragment_id=W2_LOGICAL, fragment_id="rt-b",
                address=1 << 20, nbytes=32, worker_id="w", endpoint="e", device="cuda:1",
            )
        ],
    }
    binding = wm.RuntimeBindingManifest.from_runtime_inventory(document, owner_resolver=lambda r: ("owner", r.fragment_id))
    assert binding.fragments[0].owner == ("owner", "rt-b")
    bound = wm.bind_runtime_manifest(placement, binding)
    assert bound.fragments[0].owner == ("owner", "rt-b") and bound.generation == 9


def test_resolver_exceptions_propagate_and_resolver_none_owners_stay_none() -> None:
    def boom(record: Any) -> Any:
        raise KeyError("no owner")

    with pytest.raises(KeyError, match="no owner"):
        wm.RuntimeManifest.from_runtime_inventory(inventory(), owner_resolver=boom)
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory(), owner_resolver=lambda r: None)
    assert runtime.fragments[0].owner is None


def test_address_semantics_view() -> None:
    record = inventory_record(storage_offset=16, byte_offset=32)
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory(record), address_semantics="view")
    assert runtime.fragments[0].address == 4096  # never adjusted
    with pytest.raises(ValueError, match="^address_semantics must be 'view'$"):
        wm.RuntimeManifest.from_runtime_inventory(inventory(), address_semantics=1)  # type: ignore[arg-type]


def test_mapping_subclasses_and_unknown_members() -> None:
    class Record(dict):  # type: ignore[type-arg]
        pass

    document = inventory(Record(inventory_record(extra={"anything": float("nan")})), unknown=object())
    assert wm.RuntimeManifest.from_runtime_inventory(document).fragments[0].fragment_id == "runtime-0"


def test_generated_and_explicit_ids() -> None:
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory())
    assert wm.placement_manifest_from_runtime_manifest(runtime).fragments[0].placement_fragment_id == W2_LOGICAL
    explicit = wm.RuntimeManifest.from_runtime_inventory(inventory(inventory_record(placement_fragment_id="p/0")))
    placement = wm.placement_manifest_from_runtime_manifest(explicit, placement_id=None)
    assert placement.fragments[0].placement_fragment_id == "p/0"
    again = wm.placement_manifest_from_runtime_manifest(explicit, placement_id=placement.placement_id)
    assert again == placement
