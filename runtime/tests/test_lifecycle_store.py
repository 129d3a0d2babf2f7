"""Kept revisions in the real Mooncake Store (weight_manifest_runtime.local_store on
127.0.0.1): full updates whose rollback restores generation g from the Store, the last K
revisions kept and older ones removed from the Store, a leased revision kept past K, and a
restore of any kept revision. What the targets hold is the oracle's
(lifecycle_world.World.held: numpy slices of each generation drawn by the test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime.local_store import LocalStore

from lifecycle_world import World


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStore]:
    with LocalStore(tmp_path_factory.mktemp("store"), segment_bytes=64 << 20) as running:
        yield running


@pytest.fixture()
def world(local: LocalStore, tmp_path: Path) -> Iterator[World]:
    w = World(np.random.default_rng(5), tmp_path, source=(2, 1), target=(1, 2), keep=2, store=local)
    yield w
    w.client.remove_all(True)
    w.close()


def held_by_all(w: World) -> set[Optional[int]]:
    return {w.held(t) for t in w.versions} | {v.active for v in w.versions.values()}


def saved(w: World, generation: int) -> bool:
    key = f"lifecycle/model/r1/{generation}/manifest"
    return int(w.client.is_exist(key)) == 1


def test_full_updates_roll_back_from_the_store_and_keep_the_last_k(world: World) -> None:
    w = world
    w.update().run(w.bound(), 2, mode="full")
    assert held_by_all(w) == {2} and w.revisions.keeper.kept == [1, 2] and saved(w, 1)
    w.next_generation(3)
    w.update().run(w.bound(), 3, mode="full")
    assert held_by_all(w) == {3} and w.revisions.keeper.kept == [2, 3]
    assert not saved(w, 1) and saved(w, 2) and saved(w, 3)  # revision 1 left the Store
    w.next_generation(4)
    victim = sorted(w.versions)[0]

    def corrupt(step: str, worker: Optional[str]) -> None:
        if step == "transferred":
            next(iter(w.target.workers[victim].values())).view(np.uint8).reshape(-1)[1] ^= 4

    with pytest.raises(wm.ManifestError) as caught:
        w.update(on_step=corrupt).run(w.bound(), 4, mode="full")
    assert caught.value.code == "transfer_verify_failed" and victim in str(caught.value)
    assert held_by_all(w) == {3}  # every byte of generation 3 came back from the Store
    # Any kept revision restores, as a version change of its own; one no longer kept does not.
    result = w.update().restore(2)
    assert result["committed"] and held_by_all(w) == {2}
    with pytest.raises(wm.ManifestError) as caught:
        w.update().restore(1)
    assert caught.value.code == "lifecycle_revision_missing"
    assert held_by_all(w) == {2}


def test_a_leased_revision_is_not_removed_past_k(world: World) -> None:
    w = world
    w.update().run(w.bound(), 2, mode="full")
    with w.revisions.keeper.lease(1):
        w.next_generation(3)
        w.update().run(w.bound(), 3, mode="full")
        assert saved(w, 1) and w.revisions.keeper.kept == [1, 2, 3]
        w.update().restore(1)  # a restore under another lease
        assert held_by_all(w) == {1}
    w.update().restore(3)
    assert held_by_all(w) == {3}
    w.next_generation(4)
    w.update().run(w.bound(), 4, mode="full")
    assert not saved(w, 1) and not saved(w, 2) and w.revisions.keeper.kept == [3, 4]
