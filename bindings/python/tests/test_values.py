"""The native value classes behave as the frozen dataclasses they replace.

The oracle is a real ``@dataclass(frozen=True)`` of the same name, fields, defaults and
field options (``dataclasses.make_dataclass`` from the declared fields), and Python
itself: for the same arguments it must give the same repr, equality, hash, binding
errors (message for message) and pickling round trip.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import inspect
import pickle
from typing import Any, Callable

import pytest

import weight_manifest as wm

RANK = wm.ParallelRank(dp=1, tp=2, pp=3, ep=4)

# One valid call of each class: positional arguments and keyword arguments.
CALLS: dict[type, tuple[tuple[Any, ...], dict[str, Any]]] = {
    wm.ParallelRank: ((1, 2), {"ep": 4}),
    wm.TensorDescriptor: (("t", (8, 4), "bf16", 2, 0, "fp"), {"layer_id": 3}),
    wm.PlacementFragment: (("p", "t", (0, 0), (4, 4)), {"nbytes": 32, "rank": RANK, "aliases": ("a", "b")}),
    wm.RuntimeFragment: (
        ("f", "t", (0, 0), (4, 4), 4096, 32, "w", "e", "cpu"),
        {"rank": RANK, "lease_generation": 7, "owner": ("held", 1), "placement_fragment_id": "p"},
    ),
    wm.RuntimeBindingFragment: (("p", "f", 4096, 32, "w", "e"), {"device": "cpu", "owner": "held"}),
}
CLASSES = list(CALLS)


def oracle(cls: type) -> type:
    """A plain frozen dataclass with the class's name, fields and field options."""
    spec = [
        (f.name, f.type, dataclasses.field(default=f.default, compare=f.compare, repr=f.repr))
        if f.default is not dataclasses.MISSING
        else (f.name, f.type)
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, spec, frozen=True)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_repr_eq_and_hash_are_the_dataclasses(cls: type) -> None:
    args, kwargs = CALLS[cls]
    made, plain = cls(*args, **kwargs), oracle(cls)(*args, **kwargs)
    assert repr(made) == repr(plain)
    assert hash(made) == hash(plain)
    assert made == cls(*args, **kwargs) and not made != cls(*args, **kwargs)
    assert [getattr(made, f.name) for f in dataclasses.fields(cls)] == [
        getattr(plain, f.name) for f in dataclasses.fields(cls)
    ]
    assert dataclasses.asdict(made) == dataclasses.asdict(plain)
    assert dataclasses.astuple(made) == dataclasses.astuple(plain)
    # Like a dataclass, an instance of another class (even an equal-looking one) is not
    # comparable.
    assert made != plain and (made == plain) is False
    assert made.__eq__(plain) is NotImplemented


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_changed_field_changes_equality_but_the_owner_does_not(cls: type) -> None:
    args, kwargs = CALLS[cls]
    made = cls(*args, **kwargs)
    for f in dataclasses.fields(cls):
        if f.name == "owner":
            assert dataclasses.replace(made, owner=object()) == made
            continue
        value = getattr(made, f.name)
        changed = {int: value + 1 if isinstance(value, int) else value, str: f"{value}x"}.get(type(value))
        if changed is None or f.name in {"nbytes", "itemsize"}:
            continue  # a consistent change of these needs others to change too
        other = dataclasses.replace(made, **{f.name: changed})
        assert other != made and getattr(other, f.name) == changed


def without_required(cls: type, n: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The valid call by keyword, without its last `n` required arguments."""
    args, kwargs = CALLS[cls]
    fields = dataclasses.fields(cls)
    given = {**dict(zip((f.name for f in fields), args)), **kwargs}
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    for name in required[len(required) - n:]:
        del given[name]
    return (), given


BAD_CALLS: list[Callable[[type], tuple[tuple[Any, ...], dict[str, Any]]]] = [
    lambda cls: without_required(cls, 1),
    lambda cls: without_required(cls, 2),
    lambda cls: without_required(cls, 3),
    lambda cls: ((), {}),  # missing (where any are required)
    lambda cls: (tuple(range(len(dataclasses.fields(cls)) + 1)), {}),  # too many positional
    lambda cls: (CALLS[cls][0], {**CALLS[cls][1], "unknown": 1}),  # unexpected keyword
    lambda cls: (CALLS[cls][0], {**CALLS[cls][1], dataclasses.fields(cls)[0].name: 1}),  # twice
    lambda cls: ((), {"ep": 1} if cls is wm.ParallelRank else {dataclasses.fields(cls)[-1].name: None}),
]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", range(len(BAD_CALLS)))
def test_argument_errors_are_pythons(cls: type, bad: int) -> None:
    args, kwargs = BAD_CALLS[bad](cls)
    try:
        oracle(cls)(*args, **kwargs)
    except TypeError as expected:
        with pytest.raises(TypeError) as raised:
            cls(*args, **kwargs)
        assert str(raised.value) == str(expected)
    else:
        cls(*args, **kwargs)  # binds; its values are the core's to judge


def test_keywords_built_at_run_time_bind_by_text() -> None:
    # A `**mapping` whose keys are not the interned identifiers of a call site.
    keys = ["".join(["t", "p"]), "".join(["e", "p"])]
    assert wm.ParallelRank(**dict(zip(keys, (2, 3)))) == wm.ParallelRank(tp=2, ep=3)
    with pytest.raises(TypeError, match="keywords must be strings"):
        wm.ParallelRank(**{1: 2})  # type: ignore[misc]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_values_are_immutable_for_real(cls: type) -> None:
    args, kwargs = CALLS[cls]
    made = cls(*args, **kwargs)
    name = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
        setattr(made, name, "x")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
        made.other = 1
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
        delattr(made, name)
    # Unlike a dataclass, not even object.__setattr__ changes a field: the checked value
    # the manifests read cannot go stale.
    with pytest.raises((AttributeError, TypeError)):
        object.__setattr__(made, name, "x")
    assert not hasattr(made, "__dict__")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_pickle_copy_and_deepcopy(cls: type) -> None:
    args, kwargs = CALLS[cls]
    made = cls(*args, **kwargs)
    for again in (pickle.loads(pickle.dumps(made)), copy.copy(made), copy.deepcopy(made)):
        assert again == made and type(again) is cls
        assert getattr(again, "owner", None) == getattr(made, "owner", None)
        # Only an owner can close a reference cycle.
        assert gc.is_tracked(again) == (getattr(made, "owner", None) is not None)


def test_a_subclass_is_a_dataclass_subclass() -> None:
    class Rank(wm.ParallelRank):
        pass

    rank = Rank(tp=2)
    assert isinstance(rank, wm.ParallelRank) and rank.tp == 2
    assert rank != wm.ParallelRank(tp=2)  # another class, as for dataclasses
    assert repr(rank).startswith("test_a_subclass_is_a_dataclass_subclass.<locals>.Rank(dp=0, tp=2")
    # A subclass instance may carry attributes that are not fields; they pickle too.
    rank.note = "kept"  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rank.tp = 3  # type: ignore[misc]
    again = copy.deepcopy(rank)
    assert again == rank and again.note == "kept"  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_signature_match_args_and_docs_are_the_declarations(cls: type) -> None:
    plain = oracle(cls)
    assert str(inspect.signature(cls)).replace("'", "") == str(inspect.signature(plain)).replace("'", "")
    assert cls.__match_args__ == plain.__match_args__  # type: ignore[attr-defined]
    assert cls.__module__ == "weight_manifest._types" and cls.__qualname__ == cls.__name__
    assert cls.__doc__ and "§2." in cls.__doc__
    match cls(*CALLS[cls][0], **CALLS[cls][1]):
        case wm.ParallelRank(dp, tp):
            assert (dp, tp) == (1, 2)
        case wm.TensorDescriptor(tensor_id=tensor_id):
            assert tensor_id == "t"
        case other:
            assert dataclasses.fields(other)[0].name in ("placement_fragment_id", "fragment_id")
