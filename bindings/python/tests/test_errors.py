"""Every rejection is a ValueError with the contract's (the reference's) message, the
stable code and, where the contract defines one, the JSON pointer."""

from __future__ import annotations

import dataclasses
import pickle
from types import SimpleNamespace
from typing import Any, Callable

import pytest

import weight_manifest as wm
from conftest import (
    descriptor,
    inventory,
    inventory_record,
    placement_fragment,
    runtime_fragment,
    runtime_manifest,
    w1,
)


def rejection(build: Callable[[], Any]) -> wm.ManifestError:
    with pytest.raises(ValueError) as raised:
        build()
    error = raised.value
    assert isinstance(error, wm.ManifestError)
    return error


def expect(build: Callable[[], Any], code: str, message: str, path: Any = None) -> None:
    error = rejection(build)
    assert (error.code, str(error), error.path) == (code, message, path)


def test_error_is_a_value_error_with_code_and_path() -> None:
    error = rejection(lambda: wm.ParallelRank(tp="1"))
    assert type(error).__mro__[1] is ValueError
    assert error.args == ("parallel rank tp must be an integer",)
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.path, str(again)) == (error.code, None, str(error))


@pytest.mark.parametrize(
    ("build", "code", "message"),
    [
        (lambda: wm.ParallelRank(dp=None), "not_an_integer", "parallel rank dp must be an integer"),
        (lambda: descriptor(global_shape=()), "empty_shape", "global_shape must not be empty"),
        (lambda: descriptor(global_shape=5), "not_a_sequence", "global_shape must contain integers"),
        (lambda: descriptor(tensor_id=""), "empty_string", "tensor_id must be a non-empty string"),
        (lambda: descriptor(tensor_id="\ud800"), "empty_string", "tensor_id must be a non-empty string"),
        (lambda: descriptor(partition_dim=2), "partition_dim_out_of_range", "partition_dim is out of range"),
        (lambda: descriptor(shard_dims=(0, 0)), "shard_dims_duplicate", "shard_dims must not contain duplicates"),
        (lambda: descriptor(partition_dim=None, shard_dims=(1, 0)), "shard_dims_unsorted", "shard_dims must be sorted"),
        (lambda: descriptor(partition_dim=None, shard_dims=(2,)), "shard_dims_out_of_range", "shard_dims contains an out-of-range dimension"),
        (lambda: descriptor(shard_dims=()), "partition_dim_conflict", "partition_dim conflicts with shard_dims"),
        (lambda: descriptor(layout_fingerprint=None), "empty_string", "layout_fingerprint must be a non-empty string"),
        (lambda: placement_fragment(aliases="ab"), "aliases_invalid", "aliases must contain non-empty strings"),
        (lambda: placement_fragment(aliases=("a", "a")), "aliases_duplicate", "aliases must not contain duplicates"),
        (lambda: runtime_fragment(address=0), "below_minimum", "address must be at least 1"),
        (lambda: runtime_fragment(address=2**64 - 32), "address_range_overflow", "address range must fit in an unsigned 64-bit integer"),
        (lambda: runtime_fragment(placement_fragment_id=""), "empty_string", "placement_fragment_id must be a non-empty string"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_value_type_messages(build: Callable[[], Any], code: str, message: str) -> None:
    expect(build, code, message)


def test_rank_must_be_a_parallel_rank_in_its_place_in_the_order() -> None:
    not_a_rank = {"dp": 0, "tp": 0, "pp": 1, "ep": 1}
    expect(lambda: placement_fragment(rank=not_a_rank), "wrong_element_type", "rank must be a ParallelRank")
    # Checks before the rank step win; checks after it lose (§2.3, §2.4).
    expect(lambda: placement_fragment(rank=not_a_rank, nbytes=0), "below_minimum", "nbytes must be at least 1")
    expect(lambda: placement_fragment(rank=None, aliases=5), "wrong_element_type", "rank must be a ParallelRank")
    expect(lambda: runtime_fragment(rank=None, lease_generation=-1), "below_minimum", "lease_generation must be at least 0")
    expect(lambda: runtime_fragment(rank=None, placement_fragment_id=""), "wrong_element_type", "rank must be a ParallelRank")


def test_manifest_collections_must_be_sequences_of_the_right_type() -> None:
    expect(lambda: w1(tensors="abc"), "not_a_sequence", "PlacementManifest tensors must be a sequence")
    expect(lambda: w1(tensors={"a": 1}), "not_a_sequence", "PlacementManifest tensors must be a sequence")
    expect(lambda: w1(fragments=None), "not_a_sequence", "PlacementManifest fragments must be a sequence")
    expect(lambda: w1(tensors=[{}]), "wrong_element_type", "PlacementManifest tensors must contain TensorDescriptor")
    expect(lambda: w1(fragments=[runtime_fragment()]), "wrong_element_type", "PlacementManifest fragments must contain PlacementFragment")
    expect(lambda: runtime_manifest(tensors=[placement_fragment()]), "wrong_element_type", "RuntimeManifest tensors must contain TensorDescriptor")
    expect(lambda: runtime_manifest(fragments=[placement_fragment()]), "wrong_element_type", "RuntimeManifest fragments must contain RuntimeFragment")
    expect(lambda: runtime_manifest(fragments=5), "not_a_sequence", "RuntimeManifest fragments must be a sequence")
    expect(
        lambda: wm.RuntimeBindingManifest(
            model_id="m", revision="r", placement_id="p", placement_digest="0" * 64,
            instance_id="i", generation=0, lease_id="l", fragments=[runtime_fragment()],
        ),
        "wrong_element_type",
        "RuntimeBindingManifest fragments must contain RuntimeBindingFragment",
    )
    # §8.1: the tensors' element check comes before the fragments' sequence check.
    expect(lambda: w1(tensors=[1], fragments=None), "wrong_element_type", "PlacementManifest tensors must contain TensorDescriptor")


def test_manifest_rule_messages() -> None:
    expect(lambda: w1(model_id=""), "empty_string", "model_id must be a non-empty string")
    expect(
        lambda: w1(fragments=[placement_fragment(), placement_fragment(placement_fragment_id="p1", global_offset=(2, 0))]),
        "fragment_overlap",
        "logical fragment boxes overlap for tensor and parallel rank: placement-0 and p1",
    )
    expect(lambda: w1(fragments=[placement_fragment(tensor_id="x")]), "unknown_tensor_id", "unknown tensor_id: x")
    expect(lambda: w1(placement_id="sha256:" + "0" * 64), "placement_id_mismatch", "placement_id does not match canonical logical content")
    expect(lambda: runtime_manifest(generation=8), "generation_mismatch", "runtime manifest generation does not match fragment generation")
    expect(
        lambda: wm.RuntimeBindingManifest(
            model_id="m", revision="r", placement_id="p", placement_digest="A" * 64,
            instance_id="i", generation=0, lease_id="l", fragments=[],
        ),
        "digest_format",
        "placement_digest must be a lowercase SHA-256 digest",
    )


@pytest.mark.parametrize(
    ("instance", "worker", "device"),
    [
        ("instance", "worker-0", "cuda:0"),
        ("inst", "it's", "cuda:ü"),
        ("a\"b'c", "w\\x", "d\n"),
        # Non-printable non-ASCII: Python's repr escapes these (\xa0, \u2028, \U000e0001).
        ("i\u00a0", "w\u2028", "cuda:\U000e0001"),
    ],
)
def test_address_overlap_names_the_space_as_a_python_tuple(instance: str, worker: str, device: str) -> None:
    a = runtime_fragment(fragment_id="a", worker_id=worker, device=device)
    b = runtime_fragment(
        fragment_id="b", worker_id=worker, device=device, address=0x1010,
        placement_fragment_id=None, rank=wm.ParallelRank(),
    )
    space = (instance, worker, device)
    expect(
        lambda: runtime_manifest(instance_id=instance, fragments=[a, b]),
        "address_overlap",
        f"runtime manifest address ranges overlap: a and b in {space!r}",
    )


def test_document_errors_carry_json_pointers() -> None:
    text = w1().to_json().replace('"itemsize":2', '"itemsize":"2"')
    expect(lambda: wm.PlacementManifest.from_json(text), "not_an_integer", "itemsize must be an integer", "/tensors/0/itemsize")
    expect(lambda: wm.PlacementManifest.from_json("[]"), "not_an_object", "placement manifest must be a JSON object", "")
    expect(lambda: wm.PlacementManifest.from_json("{"), "invalid_json", "placement manifest is not valid JSON")
    expect(lambda: wm.PlacementManifest.from_json('{"a":1,"a":2}'), "duplicate_key", "duplicate JSON field: a", "/a")
    expect(lambda: wm.PlacementManifest.from_json('{"a":NaN}'), "non_finite_number", "non-finite JSON number is unsupported: NaN", "/a")
    expect(lambda: wm.PlacementManifest.from_json(5), "invalid_json", "placement manifest is not valid JSON")  # type: ignore[arg-type]
    expect(lambda: wm.PlacementManifest.from_json('"\ud800"'), "invalid_json", "placement manifest is not valid JSON")
    expect(lambda: wm.PlacementManifest.from_json(b"\xef\xbb\xbf{}"), "invalid_json", "placement manifest is not valid JSON")


def test_inventory_errors_carry_json_pointers_into_the_mapping() -> None:
    read = wm.RuntimeManifest.from_runtime_inventory
    expect(lambda: read(inventory(inventory_record(itemsize=None))), "not_an_integer", "itemsize must be an integer", "/tensors/0/itemsize")
    record = inventory_record()
    del record["stride"]
    expect(lambda: read(inventory(inventory_record(), record)), "missing_field", "missing required field: stride", "/tensors/1")
    expect(lambda: read(inventory(inventory_record(stride=[1, 1]))), "non_canonical_stride", "runtime inventory tensor must use canonical stride", "/tensors/0/stride")
    expect(
        lambda: read(inventory(inventory_record(lease_generation=6))),
        "lease_generation_mismatch",
        "runtime inventory lease generation mismatch: 6 != 7",
        "/tensors/0/lease_generation",
    )
    expect(lambda: read(inventory(inventory_record(rank={"dp": 0}))), "missing_field", "missing required field: tp", "/tensors/0/rank")
    expect(lambda: read(inventory(), address_semantics="VIEW"), "address_semantics_invalid", "address_semantics must be 'view'")
    expect(
        lambda: read(inventory(inventory_record(byte_offset=2))),
        "offsets_require_view_semantics",
        "non-zero runtime offsets require address_semantics='view'",
        "/tensors/0/byte_offset",
    )


def test_top_level_without_the_members_is_missing_field_as_in_the_reference() -> None:
    # §16 D5: an object that is not a mapping is read by attribute, and has none.
    expect(lambda: wm.RuntimeManifest.from_runtime_inventory([1, 2]), "missing_field", "missing required field: generation", "")
    expect(lambda: wm.RuntimeBindingManifest.from_runtime_inventory(None), "missing_field", "missing required field: generation", "")
    expect(lambda: wm.PlacementManifest.from_runtime_inventory(SimpleNamespace()), "missing_field", "missing required field: tensors", "")
    expect(lambda: wm.RuntimeManifest.from_runtime_inventory(inventory("record")), "missing_field", "missing required field: tensor_id", "/tensors/0")


def test_projection_and_bind_messages() -> None:
    runtime = runtime_manifest()
    expect(lambda: wm.placement_manifest_from_runtime_manifest(runtime, placement_id=""), "empty_string", "placement_id must be a non-empty string")
    expect(lambda: wm.placement_manifest_from_runtime_manifest(runtime, placement_id=5), "empty_string", "placement_id must be a non-empty string")  # type: ignore[arg-type]
    expect(lambda: wm.runtime_binding_from_runtime_manifest(runtime_manifest(lease_id=None)), "missing_lease_id", "runtime manifest has no lease_id for runtime binding")
    # missing_generation is reachable only in memory: no fragments, no generation.
    empty = runtime_manifest(tensors=(), fragments=(), generation=None)
    assert empty.generation is None
    expect(lambda: wm.runtime_binding_from_runtime_manifest(empty), "missing_generation", "runtime manifest has no generation for runtime binding")

    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    expect(lambda: wm.bind_runtime_manifest(w1(model_id="other"), binding), "model_id_mismatch", "placement and runtime binding model_id differ")
    moved = dataclasses.replace(binding, fragments=[dataclasses.replace(binding.fragments[0], nbytes=64)])
    expect(
        lambda: wm.bind_runtime_manifest(placement, moved),
        "binding_nbytes_mismatch",
        f"runtime binding byte size does not match placement: {placement.fragments[0].placement_fragment_id}",
    )
    with pytest.raises(TypeError):
        wm.bind_runtime_manifest(binding, placement)  # type: ignore[arg-type]
