"""Integer inputs: any int subclass but bool, and anything with __index__ (numpy
integers) are integers; bool, floats and strings are not. Values are held as plain ints."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np
import pytest

import weight_manifest as wm
from conftest import W1_DIGEST, descriptor, inventory, inventory_record, placement_fragment, w1


class Extent(enum.IntEnum):
    FOUR = 4
    EIGHT = 8


class Index:
    """Not an int, but usable as one."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def case_id(value: Any) -> str:
    if isinstance(value, int) and abs(value) > 2**80:
        return f"int-of-{value.bit_length()}-bits"  # repr() of 10**5000 is beyond Python's limit
    return repr(value)


def exact_ints(values: Any) -> bool:
    return all(type(v) is int for v in values)


@pytest.mark.parametrize(
    "make",
    [np.int64, np.int32, np.uint64, np.uint8, Index, lambda v: Extent(v)],
    ids=["int64", "int32", "uint64", "uint8", "__index__", "IntEnum"],
)
def test_integer_likes_build_the_same_manifest(make: Any) -> None:
    d = descriptor(global_shape=(make(8), make(4)), itemsize=np.int64(2), partition_dim=np.int64(0))
    f = placement_fragment(
        global_offset=[np.int64(0), np.int64(0)],
        local_shape=(make(4), make(4)),
        nbytes=np.uint64(32),
        rank=wm.ParallelRank(pp=np.int64(1), ep=np.uint8(1)),
    )
    manifest = w1(tensors=[d], fragments=[f])
    assert manifest.digest == W1_DIGEST
    assert exact_ints(d.global_shape) and type(d.itemsize) is int and type(d.partition_dim) is int
    assert exact_ints(f.global_offset) and exact_ints(f.local_shape) and type(f.nbytes) is int
    assert type(f.rank.pp) is int and type(f.rank.ep) is int
    assert manifest == w1()


def test_numpy_values_from_a_shape_tuple() -> None:
    array = np.zeros((8, 4), dtype=np.float32)
    d = descriptor(global_shape=array.shape, itemsize=array.itemsize, dtype=str(array.dtype))
    assert d.global_shape == (8, 4) and d.itemsize == 4
    shape = tuple(np.array([8, 4], dtype=np.int64))
    assert descriptor(global_shape=shape).global_shape == (8, 4)


def test_numpy_u64_extremes() -> None:
    top = np.uint64(2**64 - 1)
    rank = wm.ParallelRank(dp=top)
    assert rank.dp == 2**64 - 1 and type(rank.dp) is int
    with pytest.raises(ValueError, match="^parallel rank dp must be at least 0$"):
        wm.ParallelRank(dp=np.int64(-1))


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        (True, "not_an_integer", "itemsize must be an integer"),
        (np.bool_(True), "not_an_integer", "itemsize must be an integer"),
        (2.0, "not_an_integer", "itemsize must be an integer"),
        (np.float64(2.0), "not_an_integer", "itemsize must be an integer"),
        ("2", "not_an_integer", "itemsize must be an integer"),
        (None, "not_an_integer", "itemsize must be an integer"),
        (b"2", "not_an_integer", "itemsize must be an integer"),
        ([2], "not_an_integer", "itemsize must be an integer"),
        (0, "below_minimum", "itemsize must be at least 1"),
        (-(2**70), "below_minimum", "itemsize must be at least 1"),
        (2**64, "u64_overflow", "itemsize must fit in an unsigned 64-bit integer"),
        (10**5000, "u64_overflow", "itemsize must fit in an unsigned 64-bit integer"),
    ],
    ids=case_id,
)
def test_non_integers_are_rejected(value: Any, code: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        descriptor(itemsize=value)
    assert str(raised.value) == message
    assert raised.value.code == code  # type: ignore[attr-defined]


def test_integer_array_elements_and_sequences() -> None:
    with pytest.raises(ValueError, match="^global_shape must be an integer$") as raised:
        descriptor(global_shape=(8, True))
    assert raised.value.code == "not_an_integer"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="^global_shape must contain integers$"):
        descriptor(global_shape=np.array([8, 4]))  # not a Sequence, as in the reference
    with pytest.raises(ValueError, match="^global_shape must contain integers$"):
        descriptor(global_shape="84")
    with pytest.raises(ValueError, match="^global_shape must be an integer$"):
        descriptor(global_shape=[[8], 4])
    assert descriptor(global_shape=range(8, 10)).global_shape == (8, 9)


def test_self_containing_list_is_rejected_not_recursed() -> None:
    shape: list[Any] = [8]
    shape.append(shape)
    with pytest.raises(ValueError, match="^global_shape must be an integer$"):
        descriptor(global_shape=shape)


def test_numpy_integers_in_an_inventory() -> None:
    record = inventory_record(
        global_shape=np.array([8, 4]).tolist(),
        itemsize=np.int64(2),
        local_shape=(np.int64(4), np.int64(4)),
        stride=(np.int64(4), np.int64(1)),
        address=np.uint64(4096),
        nbytes=np.int32(32),
        rank={"dp": np.int64(0), "tp": 0, "pp": np.int16(1), "ep": 1},
    )
    runtime = wm.RuntimeManifest.from_runtime_inventory(inventory(record, generation=np.int64(7)))
    assert runtime.generation == 7 and type(runtime.generation) is int
    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    assert placement.digest == "9fb3a68c19f9be933676fffd1a43d2faef84e3ca0c16005a1237d37633d3ead8"


def test_index_raising_other_errors_propagates() -> None:
    class Broken:
        def __index__(self) -> int:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        wm.ParallelRank(tp=Broken())  # type: ignore[arg-type]


def test_replace_with_numpy_value() -> None:
    rank = dataclasses.replace(wm.ParallelRank(), tp=np.int64(5))
    assert rank == wm.ParallelRank(tp=5) and type(rank.tp) is int
