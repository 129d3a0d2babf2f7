"""A delta's check costs what it wrote (weight_manifest_runtime.lifecycle.blocks through
TargetVersions): each target re-hashes only the blocks a delta wrote there and keeps the
values of every other block from its last verification.

Oracles: which generation a target's bytes hold (lifecycle_world.World.held: numpy slices
of each generation's global tensors); the digests of a generation computed here from its
global tensors with ``weight_manifest.content`` (brute force); and the bytes a delta's check
must hash, counted here from the elements that changed between two generations: a source
block (64 elements of a global row, cut by its source box) with a changed element is sent
whole, and each target block (cut by its target box) it lands in is hashed whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest import content

from weight_manifest_runtime.lifecycle import VersionedUpdate

from lifecycle_world import Model, World

BLOCK = 64
#: Cuts off the 64-element blocks (a: 200 columns in halves on the sources, quarters on the
#: targets), whole rows (b), a replicated 1-D tensor (c).
MODEL: Model = {"a": ((8, 200), 1, 0), "b": ((16, 192), 0, 1), "c": ((400,), None, 0)}


def world(tmp_path: Path, seed: int = 3, delta: float = 0.002) -> World:
    return World(np.random.default_rng(seed), tmp_path, source=(2, 1), target=(4, 1), model=dict(MODEL),
                 delta=delta)


def units(start: int, stop: int) -> list[tuple[int, int]]:
    """[start, stop) of a row cut at the multiples of BLOCK."""
    cuts = [start, *range((start // BLOCK + 1) * BLOCK, stop, BLOCK), stop]
    return list(zip(cuts, cuts[1:]))


def inner(index: tuple[slice, ...], n: int) -> tuple[int, int]:
    last = index[-1]
    return int(last.start or 0), int(last.stop if last.stop is not None else n)


def sent(w: World, target: str, before: int, after: int) -> list[tuple[np.ndarray, tuple[int, int]]]:
    """For each row of each of ``target``'s boxes, which of its elements the delta from
    ``before`` to ``after`` writes (those of a source block with a changed element), and
    the box's inner range."""
    masks = []
    for name, index in ((n, i) for (t, n), i in w.target.boxes.items() if t == target):
        shape = MODEL[name][0]
        n = shape[-1]
        old, new = (w.generations[g][name].view(np.uint32).reshape(-1, n) for g in (before, after))
        changed = old != new
        source_unit = np.zeros(n, dtype=np.int64)
        for (_, source_name), source_index in w.source.boxes.items():
            if source_name == name:
                o, end = inner(source_index, n)
                for a, b in units(o, end):
                    source_unit[a:b] = a  # a unit is named by its first column
        o, end = inner(index, n)
        rows = range(changed.shape[0]) if len(shape) == 1 or MODEL[name][1] != 0 else \
            range(*index[0].indices(shape[0]))
        for row in rows:
            mask = np.zeros(n, dtype=bool)
            mask[o:end] = np.isin(source_unit, source_unit[changed[row]])[o:end]
            masks.append((mask, (o, end)))
    return masks


def expected_hashed(w: World, target: str, before: int, after: int) -> int:
    """The bytes ``target`` must hash to check that delta: each of its blocks (cut by its
    box) that holds a written element, whole."""
    return sum((b - a) * 4 for mask, box in sent(w, target, before, after) for a, b in units(*box)
               if mask[a:b].any())


def generation_digests(w: World, g: int) -> dict[str, str]:
    """Generation g's digests from its global tensors (one box each)."""
    tensors = {n: np.ascontiguousarray(t) for n, t in w.generations[g].items()}
    records = [{"tensor_id": n, "global_shape": list(t.shape), "global_offset": [0] * t.ndim,
                "local_shape": list(t.shape), "itemsize": 4} for n, t in tensors.items()]
    return content.digests(content.partials(tensors, {"tensors": records}, BLOCK), BLOCK)


def verified_digests(w: World, update: VersionedUpdate) -> dict[str, str]:
    """What the targets were verified with (their kept partials, no new hash), asked by
    the coordinator of the last update (its epoch)."""
    targets = sorted(w.versions)
    replies = update.coordinator.request_all(targets, {"op": "lc_content", "verified": True,
                                                       "generation": w.versions[targets[0]].active})
    return content.digests((r for t in targets for r in replies[t]["partials"]), BLOCK)


def all_at(w: World, g: int) -> bool:
    return all((w.held(t), v.active, v.state) == (g, g, "active") for t, v in w.versions.items())


def whole(w: World, target: str) -> int:
    return sum(t.nbytes for t in w.target.workers[target].values())


def changed_byte(w: World, target: str, g: int, inside: bool) -> tuple[str, int]:
    """A byte of ``target`` in an element that changed from g to g+1 (``inside``), or in a
    64-element block of a global row where nothing changed (the delta does not write it)."""
    for name, tensor in w.target.workers[target].items():
        n = MODEL[name][0][-1]
        old, new = (w.generations[k][name].view(np.uint32) for k in (g, g + 1))
        changed = (old != new).reshape(-1, n)
        if not inside:
            for j in range(0, n, BLOCK):
                changed[:, j:j + BLOCK] = ~changed[:, j:j + BLOCK].any(axis=1, keepdims=True)
        where = np.flatnonzero(changed.reshape(w.generations[g][name].shape)[w.target.boxes[(target, name)]])
        if len(where):
            return name, int(where[len(where) // 2]) * 4 + 1
    raise AssertionError("no such byte")


def flip(w: World, target: str, where: tuple[str, int]) -> None:
    w.target.workers[target][where[0]].view(np.uint8).reshape(-1)[where[1]] ^= 0x10


def test_a_delta_check_hashes_only_the_blocks_it_wrote_and_gives_the_full_digests(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    result = update.run(w.bound(), 2, mode="delta")
    assert all_at(w, 2) and result["committed"]
    for target in w.versions:
        assert update.hashed[target] == expected_hashed(w, target, 1, 2), target
        assert 0 < update.hashed[target] < whole(w, target) / 4
    assert result["hashed_bytes"] == sum(update.hashed.values())
    assert verified_digests(w, update) == generation_digests(w, 2)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())
    # A second delta builds on the values the first one kept.
    w.next_generation(3)
    update = w.update()
    update.run(w.bound(), 3, mode="delta")
    assert all_at(w, 3)
    assert update.hashed == {t: expected_hashed(w, t, 2, 3) for t in w.versions}
    assert verified_digests(w, update) == generation_digests(w, 3)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())


def test_a_delta_that_lands_a_corrupted_byte_in_its_blocks_is_refused_and_rolled_back(tmp_path: Path) -> None:
    w = world(tmp_path)
    victim = sorted(w.versions)[1]
    where = changed_byte(w, victim, 1, inside=True)
    hook = lambda step, _: flip(w, victim, where) if step == "transferred" else None  # noqa: E731
    update = w.update(on_step=hook)
    with pytest.raises(wm.ManifestError) as caught:
        update.run(w.bound(), 2, mode="delta")
    assert caught.value.code == "transfer_verify_failed" and victim in str(caught.value)
    assert all_at(w, 1)
    # The rollback's check hashed every byte (its values replace the kept ones).
    assert update.hashed == {t: whole(w, t) for t in w.versions}
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())


def test_a_byte_corrupted_outside_the_deltas_blocks_is_found_by_the_full_check_only(tmp_path: Path) -> None:
    w = world(tmp_path)
    victim = sorted(w.versions)[0]
    where = changed_byte(w, victim, 1, inside=False)
    # After the targets hashed g=1 (the prepare of the first update asks them), before the
    # bytes land: the delta's check does not hash that block.
    hook = lambda step, _: flip(w, victim, where) if step == "prepared" else None  # noqa: E731
    update = w.update(on_step=hook)
    update.run(w.bound(), 2, mode="delta")
    assert {t: v.active for t, v in w.versions.items()} == dict.fromkeys(w.versions, 2)
    assert w.held(victim) is None
    flip(w, victim, where)
    assert w.held(victim) == 2  # but for that byte, generation 2
    flip(w, victim, where)
    checked = {t: v.status(check=True)["consistent"] for t, v in w.versions.items()}
    assert checked == {t: t != victim for t in w.versions}


def test_a_full_update_a_restore_and_a_rollback_hash_every_byte_they_wrote(tmp_path: Path) -> None:
    w = world(tmp_path)
    update = w.update()
    update.run(w.bound(), 2, mode="full")
    assert all_at(w, 2) and update.hashed == {t: whole(w, t) for t in w.versions}
    assert verified_digests(w, update) == generation_digests(w, 2)
    w.next_generation(3)
    update = w.update()
    update.run(w.bound(), 3, mode="delta")
    assert update.hashed == {t: expected_hashed(w, t, 2, 3) for t in w.versions}
    update = w.update()
    update.restore(2)
    assert all_at(w, 2) and update.hashed == {t: whole(w, t) for t in w.versions}
    assert verified_digests(w, update) == generation_digests(w, 2)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())


def test_kept_values_of_a_failed_delta_are_never_reused(tmp_path: Path) -> None:
    """A delta A (1 -> 2) fails after it landed and rolls back; the sources then move to
    another generation 2' whose changed blocks are others. Had a target kept A's values
    (or g's of before the rollback for bytes the rollback rewrote), the delta B (1 -> 2')
    would verify blocks of A that B does not write against the wrong values."""
    w = world(tmp_path, delta=0.01)
    victim = sorted(w.versions)[2]
    where = changed_byte(w, victim, 1, inside=True)
    hook = lambda step, _: flip(w, victim, where) if step == "transferred" else None  # noqa: E731
    with pytest.raises(wm.ManifestError):
        w.update(on_step=hook).run(w.bound(), 2, mode="delta")
    assert all_at(w, 1)
    first = w.generations[2]
    w.next_generation(2)  # 2': other blocks changed from 1
    assert any(not np.array_equal(first[n].view(np.uint32), w.generations[2][n].view(np.uint32)) for n in first)
    update = w.update()
    update.run(w.bound(), 2, mode="delta")
    assert all_at(w, 2) and update.hashed == {t: expected_hashed(w, t, 1, 2) for t in w.versions}
    assert verified_digests(w, update) == generation_digests(w, 2)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())


@pytest.mark.parametrize("step", ["prepared", "transferred", "verified", "decided", "activated"])
def test_a_coordinator_that_dies_mid_delta_is_recovered_and_the_next_delta_checks_right(
        tmp_path: Path, step: str) -> None:
    """Every open state (updating, verified) left by a dead coordinator, then the
    replacement's rollback (restored) or, after the decision, its commit (some targets
    active already), then a delta from the bytes the targets hold."""
    w = world(tmp_path, delta=0.01)

    class Died(BaseException):
        pass

    def die(name: str, worker: Optional[str]) -> Any:
        if name == step:
            raise Died(name)

    with pytest.raises(Died):
        w.update(on_step=die).run(w.bound(), 2, mode="delta")
    g = 2 if step in ("decided", "activated") else 1
    assert w.update(takeover=True).recover()["generation"] == g
    assert all_at(w, g)
    w.next_generation(g + 1)
    update = w.update(takeover=True)
    update.run(w.bound(), g + 1, mode="delta")
    assert all_at(w, g + 1) and update.hashed == {t: expected_hashed(w, t, g, g + 1) for t in w.versions}
    assert verified_digests(w, update) == generation_digests(w, g + 1)
