"""A delta's undo log: none when generation g is kept in the update's revisions (the
rollback restores it, as a full update's does), else each target's copy of the bytes the
delta writes there, reported and bounded by ``max_undo_bytes``.

Oracles: which generation a target's bytes hold (lifecycle_world.World.held), generation
g's digests from its global tensors with ``weight_manifest.content`` (brute force), and the
bytes a delta writes on each target counted from the elements that changed between two
generations (test_lifecycle_delta_check.sent: a changed source block is sent whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest import content
from weight_manifest_runtime.lifecycle import VersionedUpdate

from lifecycle_world import World
from test_lifecycle_delta_check import BLOCK, all_at, changed_byte, flip, generation_digests, sent, world


def written(w: World, target: str, before: int, after: int) -> int:
    """The bytes the delta from ``before`` to ``after`` writes on ``target``."""
    return sum(int(mask.sum()) * 4 for mask, _ in sent(w, target, before, after))


def targets_digests(w: World) -> dict[str, str]:
    """Every target's bytes hashed here, combined (brute force)."""
    records = []
    for t in sorted(w.versions):
        member = w.members[t]
        records.extend(content.partials(member.tensors, member.inventory(), BLOCK))
    return content.digests(records, BLOCK)


def no_revisions(w: World, **kwargs: Any) -> VersionedUpdate:
    """An update with no kept revision to roll back to: a delta keeps its undo log."""
    return VersionedUpdate(w.coordinator, w.log, revisions=None, **kwargs)


def test_a_delta_keeps_no_undo_log_when_generation_g_is_kept(tmp_path: Path) -> None:
    w = world(tmp_path, delta=0.01)
    seen: dict[str, Any] = {}

    def hook(step: str, worker: Optional[str]) -> None:
        if step == "prepared":
            seen.update({t: v.status() for t, v in w.versions.items()})

    result = w.update(on_step=hook).run(w.bound(), 2, mode="delta")
    assert all_at(w, 2) and result["undo_log"] is False and result["undo_bytes"] == 0
    assert {t: (s["undo"], s["undo_bytes"]) for t, s in seen.items()} == dict.fromkeys(w.versions, (False, 0))


@pytest.mark.parametrize("step", ["transferred", "verified"])
def test_a_delta_without_an_undo_log_rolls_back_from_the_kept_revision(tmp_path: Path, step: str) -> None:
    """A fault after the transfer (a written byte flipped: the verify fails; or the
    coordinator's death after the verify, before the decision): every target back at g,
    restored from revision g, its bytes g's by the oracle and by their digests."""
    w = world(tmp_path, delta=0.01)
    victim = sorted(w.versions)[1]

    class Died(BaseException):
        pass

    def hook(name: str, worker: Optional[str]) -> None:
        if name == step == "transferred":
            flip(w, victim, changed_byte(w, victim, 1, inside=True))
        elif name == step:
            raise Died(name)

    update = w.update(on_step=hook)
    if step == "transferred":
        with pytest.raises(wm.ManifestError) as caught:
            update.run(w.bound(), 2, mode="delta")
        assert caught.value.code == "transfer_verify_failed"
        assert "rolled back: every target serves generation 1" in str(caught.value)
    else:
        with pytest.raises(Died):
            update.run(w.bound(), 2, mode="delta")
        assert w.update(takeover=True).recover()["generation"] == 1
    assert not update.undo
    assert all_at(w, 1)
    assert targets_digests(w) == generation_digests(w, 1)
    assert all(v.status(check=True)["consistent"] for v in w.versions.values())


def test_a_delta_without_a_kept_revision_keeps_the_bytes_it_writes_and_rolls_back_from_them(tmp_path: Path) -> None:
    w = world(tmp_path, delta=0.01)
    victim = sorted(w.versions)[0]
    sizes: dict[str, int] = {}

    def hook(step: str, worker: Optional[str]) -> None:
        if step == "prepared":
            sizes.update({t: v.status()["undo_bytes"] for t, v in w.versions.items()})
        if step == "transferred":
            flip(w, victim, changed_byte(w, victim, 1, inside=True))

    update = no_revisions(w, on_step=hook)
    with pytest.raises(wm.ManifestError) as caught:
        update.run(w.bound(), 2, mode="delta")
    assert caught.value.code == "transfer_verify_failed"
    assert sizes == {t: written(w, t, 1, 2) for t in w.versions}
    assert update.figures["undo_bytes"] == sum(sizes.values())
    assert all_at(w, 1) and targets_digests(w) == generation_digests(w, 1)


def test_an_undo_log_over_max_undo_bytes_is_refused_before_anything_moves(tmp_path: Path) -> None:
    w = world(tmp_path, delta=0.01)
    largest = max(written(w, t, 1, 2) for t in w.versions)
    with pytest.raises(wm.ManifestError) as caught:
        no_revisions(w, max_undo_bytes=largest - 1).run(w.bound(), 2, mode="delta")
    assert caught.value.code == "lifecycle_undo_too_large"
    text = str(caught.value)
    assert f"would hold {largest} bytes" in text and f"max_undo_bytes={largest - 1}" in text
    assert "keep revision 1 in the update's revisions" in text
    assert w.log.read() is None and all_at(w, 1)
    assert all(v.status()["undo"] is False for v in w.versions.values())
    # At the bound it runs; with revision 1 kept the bound does not apply (no undo log).
    result = no_revisions(w, max_undo_bytes=largest).run(w.bound(), 2, mode="delta")
    assert all_at(w, 2) and result["undo_log"] is True and result["undo_bytes"] == sum(
        written(w, t, 1, 2) for t in w.versions)
    w.revisions.save(w.coordinator, 2, "target")
    w.next_generation(3)
    result = w.update(max_undo_bytes=0).run(w.bound(), 3, mode="delta")
    assert all_at(w, 3) and result["undo_log"] is False

