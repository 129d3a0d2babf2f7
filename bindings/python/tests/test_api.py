"""The public API behaves as the reference's frozen dataclasses do (names, fields,
defaults, immutability, replace, equality and hashing, type hints, pickling)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import typing

import pytest

import weight_manifest as wm
from conftest import W1_DIGEST, W1_ID, descriptor, placement_fragment, runtime_fragment, w1

REQ = dataclasses.MISSING

FIELDS = {
    wm.ParallelRank: [("dp", 0), ("tp", 0), ("pp", 0), ("ep", 0)],
    wm.TensorDescriptor: [
        ("tensor_id", REQ),
        ("global_shape", REQ),
        ("dtype", REQ),
        ("itemsize", REQ),
        ("partition_dim", REQ),
        ("layout_fingerprint", REQ),
        ("layer_id", None),
        ("expert_id", None),
        ("shard_dims", None),
    ],
    wm.PlacementFragment: [
        ("placement_fragment_id", REQ),
        ("tensor_id", REQ),
        ("global_offset", REQ),
        ("local_shape", REQ),
        ("nbytes", REQ),
        ("rank", REQ),
        ("aliases", ()),
    ],
    wm.RuntimeFragment: [
        ("fragment_id", REQ),
        ("tensor_id", REQ),
        ("global_offset", REQ),
        ("local_shape", REQ),
        ("address", REQ),
        ("nbytes", REQ),
        ("worker_id", REQ),
        ("endpoint", REQ),
        ("device", REQ),
        ("rank", REQ),
        ("lease_generation", REQ),
        ("owner", None),
        ("aliases", ()),
        ("placement_fragment_id", None),
    ],
    wm.RuntimeBindingFragment: [
        ("placement_fragment_id", REQ),
        ("fragment_id", REQ),
        ("address", REQ),
        ("nbytes", REQ),
        ("worker_id", REQ),
        ("endpoint", REQ),
        ("device", REQ),
        ("owner", None),
    ],
    wm.PlacementManifest: [
        ("model_id", REQ),
        ("revision", REQ),
        ("tensors", REQ),
        ("fragments", REQ),
        ("placement_id", None),
    ],
    wm.RuntimeManifest: [
        ("model_id", REQ),
        ("revision", REQ),
        ("instance_id", REQ),
        ("tensors", REQ),
        ("fragments", REQ),
        ("lease_id", None),
        ("placement_id", None),
        ("generation", None),
    ],
    wm.RuntimeBindingManifest: [
        ("model_id", REQ),
        ("revision", REQ),
        ("placement_id", REQ),
        ("placement_digest", REQ),
        ("instance_id", REQ),
        ("generation", REQ),
        ("lease_id", REQ),
        ("fragments", REQ),
    ],
}


def test_all_is_exactly_the_reference_api() -> None:
    assert wm.__all__ == [
        "ParallelRank",
        "PlacementFragment",
        "PlacementManifest",
        "RuntimeBindingFragment",
        "RuntimeBindingManifest",
        "RuntimeFragment",
        "RuntimeManifest",
        "TensorDescriptor",
        "bind_runtime_manifest",
        "placement_manifest_from_runtime_manifest",
        "runtime_binding_from_runtime_manifest",
    ]
    for name in wm.__all__:
        assert getattr(wm, name) is not None


@pytest.mark.parametrize("cls", list(FIELDS), ids=lambda c: c.__name__)
def test_field_names_order_and_defaults(cls: type) -> None:
    assert dataclasses.is_dataclass(cls)
    fields = dataclasses.fields(cls)
    expected = FIELDS[cls]
    assert [f.name for f in fields] == [name for name, _ in expected]
    assert [f.default for f in fields] == [default for _, default in expected]
    assert all(f.default_factory is dataclasses.MISSING for f in fields)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", list(FIELDS), ids=lambda c: c.__name__)
def test_type_hints_resolve(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    assert list(hints) == [name for name, _ in FIELDS[cls]]


def test_type_hints_name_the_api_types() -> None:
    assert typing.get_type_hints(wm.PlacementFragment)["rank"] is wm.ParallelRank
    assert typing.get_type_hints(wm.PlacementManifest)["tensors"] == tuple[wm.TensorDescriptor, ...]
    assert typing.get_type_hints(wm.RuntimeManifest)["generation"] == typing.Optional[int]


def test_values_are_immutable() -> None:
    rank = wm.ParallelRank(tp=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rank.tp = 2  # type: ignore[misc]
    manifest = w1()
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.model_id = "other"  # type: ignore[misc]


def test_missing_required_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        wm.TensorDescriptor(tensor_id="t", global_shape=(1,), dtype="f", itemsize=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        wm.PlacementManifest(model_id="m", revision="r", tensors=())  # type: ignore[call-arg]


def test_keyword_construction_normalises_sequences_to_tuples() -> None:
    fragment = placement_fragment(global_offset=[0, 0], local_shape=[4, 4], aliases=["b", "a"])
    assert fragment.global_offset == (0, 0)
    assert fragment.local_shape == (4, 4)
    assert fragment.aliases == ("a", "b")
    assert fragment.fragment_id == "placement-0"


def test_replace_revalidates() -> None:
    rank = wm.ParallelRank()
    with pytest.raises(ValueError, match="^parallel rank ep must be at least 0$"):
        dataclasses.replace(rank, ep=-1)
    with pytest.raises(ValueError, match="^dtype must be a non-empty string$"):
        dataclasses.replace(descriptor(), dtype="")
    with pytest.raises(ValueError, match="^fragment byte size mismatch: placement-0: expected 32, got 33$"):
        dataclasses.replace(w1(), fragments=(placement_fragment(nbytes=33),))
    with pytest.raises(ValueError, match="^placement_id does not match canonical logical content$"):
        dataclasses.replace(w1(), revision="other")


def test_replace_of_a_valid_value_gives_an_equal_value() -> None:
    manifest = w1()
    again = dataclasses.replace(manifest)
    assert again == manifest and again is not manifest
    assert again.digest == manifest.digest


def test_equality_and_hashing_are_field_wise() -> None:
    assert wm.ParallelRank(tp=1) == wm.ParallelRank(tp=1)
    assert wm.ParallelRank(tp=1) != wm.ParallelRank(pp=1)
    assert hash(wm.ParallelRank(tp=1)) == hash(wm.ParallelRank(tp=1))
    assert len({w1(), w1(), w1(revision="r2", placement_id=None)}) == 2


def test_owner_is_excluded_from_equality_hash_and_repr() -> None:
    first, second = object(), object()
    a = runtime_fragment(owner=first)
    b = runtime_fragment(owner=second)
    assert a == b and hash(a) == hash(b)
    assert a.owner is first
    assert "owner" not in repr(a)
    binding = wm.RuntimeBindingFragment(
        placement_fragment_id="p", fragment_id="f", address=1, nbytes=1,
        worker_id="w", endpoint="e", device="d", owner=first,
    )
    assert "owner" not in repr(binding)
    assert binding == dataclasses.replace(binding, owner=None)


def test_descriptor_keeps_its_spelling_and_manifests_hold_the_canonical_form() -> None:
    given = descriptor(partition_dim=None, shard_dims=[0])
    assert given.partition_dim is None and given.shard_dims == (0,)
    assert given.effective_shard_dims == (0,)
    assert descriptor().shard_dims is None
    assert descriptor().effective_shard_dims == (0,)
    assert descriptor(partition_dim=None, global_shape=(8,), layer_id=None).effective_shard_dims == ()
    held = w1(tensors=(given,)).tensors[0]
    assert (held.partition_dim, held.shard_dims) == (0, (0,))
    assert w1(tensors=(given,)).placement_id == W1_ID


def test_manifest_sorts_and_computes_identity() -> None:
    other = descriptor(tensor_id="a.first", expert_id=None)
    fragments = (
        placement_fragment(placement_fragment_id="z"),
        placement_fragment(placement_fragment_id="a", tensor_id="a.first", rank=wm.ParallelRank()),
    )
    manifest = w1(tensors=(descriptor(), other), fragments=fragments)
    assert [t.tensor_id for t in manifest.tensors] == ["a.first", "layers.2.experts.3.w1"]
    assert [f.placement_fragment_id for f in manifest.fragments] == ["a", "z"]
    assert manifest.fragments[1] is fragments[0]
    reordered = w1(tensors=(other, descriptor()), fragments=tuple(reversed(fragments)))
    assert reordered == manifest
    assert reordered.to_json() == manifest.to_json()


def test_worked_example_w1() -> None:
    manifest = w1()
    assert manifest.placement_id == W1_ID
    assert manifest.digest == W1_DIGEST
    assert w1(placement_id=W1_ID) == manifest
    text = manifest.to_json()
    assert wm.PlacementManifest.from_json(text) == manifest
    assert wm.PlacementManifest.from_json(text.encode()) == manifest
    assert wm.PlacementManifest.from_json(bytearray(text.encode())).digest == W1_DIGEST


def test_pickle_and_copy_keep_the_value() -> None:
    manifest = w1()
    for again in (pickle.loads(pickle.dumps(manifest)), copy.copy(manifest), copy.deepcopy(manifest)):
        assert again == manifest
        assert again.digest == W1_DIGEST
        assert again.to_json() == manifest.to_json()
    rank = pickle.loads(pickle.dumps(wm.ParallelRank(tp=3)))
    assert rank == wm.ParallelRank(tp=3)


def test_runtime_manifest_derives_generation_and_holds_canonical_tensors() -> None:
    manifest = wm.RuntimeManifest(
        model_id="model", revision="revision", instance_id="instance",
        tensors=[descriptor()], fragments=[runtime_fragment()],
    )
    assert manifest.generation == 7
    assert manifest.tensors[0].shard_dims == (0,)
    assert isinstance(manifest.fragments, tuple)


def test_binding_manifest_sorts_fragments() -> None:
    def frag(pid: str, address: int) -> wm.RuntimeBindingFragment:
        return wm.RuntimeBindingFragment(
            placement_fragment_id=pid, fragment_id=f"rt-{pid}", address=address, nbytes=8,
            worker_id="w", endpoint="e", device="d",
        )

    binding = wm.RuntimeBindingManifest(
        model_id="m", revision="r", placement_id="p", placement_digest="0" * 64,
        instance_id="i", generation=1, lease_id="l", fragments=[frag("b", 64), frag("a", 8)],
    )
    assert [f.placement_fragment_id for f in binding.fragments] == ["a", "b"]
