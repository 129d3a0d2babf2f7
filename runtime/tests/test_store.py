"""weight_manifest_runtime.store in one process against a real Mooncake Store on 127.0.0.1
(weight_manifest_runtime.local_store starts upstream's master and holder): the saved manifest is
upstream's (its own ``WeightManifest.from_json`` reads it with the same digest), replicas
are stored once and spread over their holders, restores are byte-exact (checked against
the tensors' defining values, not against the digests), and each rule of failing closed
raises its code. Members run in this process here (weight_manifest_runtime.group.LocalGroup); examples/store-roundtrip runs processes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest_runtime import store
from weight_manifest_runtime.local_store import LocalStore
from weight_manifest_runtime.group import Coordinator, LocalGroup, Member

from conftest import ROOT

sys.path.insert(0, str(ROOT / "examples" / "reshard-te"))
import model  # noqa: E402

SIZE = 4 << 20


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStore]:
    with LocalStore(tmp_path_factory.mktemp("store"), segment_bytes=256 << 20) as running:
        yield running


@pytest.fixture()
def client(local: LocalStore) -> Iterator[Any]:
    c = local.client()
    yield c
    c.remove_all(True)
    c.close()


class Side:
    """One side's members in this process, each with its own Store client."""

    def __init__(self, local: LocalStore, side: str, layout: model.Layout, fill: bool) -> None:
        self.group = LocalGroup()
        self.coordinator = Coordinator(self.group)
        self.specs = model.synthetic_tensors(SIZE)
        self.held: dict[str, tuple[wm.ParallelRank, dict[str, np.ndarray]]] = {}
        self.layout, self.members, self.closers = layout, [], []
        for rank in layout.ranks():
            shard = model.synthetic_shard(self.specs, layout, rank, fill)
            c = local.client(local_buffer_bytes=1 << 20)
            backend = store.StoreBackend(c)
            me = f"{side}-dp{rank.dp}-pp{rank.pp}-tp{rank.tp}"
            member = Member(shard["tensors"], backend=backend, session=me, handlers=store.handlers(backend),
                            worker_id=me, endpoint=me, rank=rank, instance_id=side, lease_id="l", generation=1,
                            **shard["where"])
            self.held[me] = (rank, shard["tensors"])
            self.group.join(member, side)
            self.members.append(member)
            self.closers.append((backend, c))

    def check(self) -> list[str]:
        problems = []
        for me, (rank, tensors) in self.held.items():
            problem = model.synthetic_check(self.specs, self.layout, rank, tensors)
            if problem is not None:
                problems.append(f"{me}: {problem}")
        return problems

    def close(self) -> None:
        self.coordinator.stop()
        for member in self.members:
            member.close()
        for backend, c in self.closers:
            backend.close()
            c.close()


@pytest.fixture()
def sides(local: LocalStore) -> Iterator[Any]:
    made: list[Side] = []

    def make(side: str, layout: str) -> Side:
        s = Side(local, side, model.Layout.parse(layout), side == "source")
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_save_writes_upstreams_manifest_last_and_restore_is_byte_exact(client: Any, sides: Any) -> None:
    from mooncake.reshard.weight.storage_manifest import WeightManifest

    source = sides("source", "tp2,dp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 4))
    text = bytes(client.get(saved.manifest_key)).decode("utf-8")
    theirs = WeightManifest.from_json(text)
    assert theirs.manifest_digest == saved.manifest_digest and theirs.to_json() == text
    assert saved.group_id == "t/synthetic/transformer/r1/4" and saved.manifest_key == saved.group_id + "/manifest"
    # Each box once, although DP2 holds two replicas of each; both replicas put bytes.
    placement = source.coordinator.side("source").placement
    boxes = {(f.tensor_id, f.global_offset, f.local_shape) for f in placement.fragments}
    assert saved.fragments == len(theirs.fragments) == len(boxes)
    assert saved.bytes == sum(f.nbytes for f in theirs.fragments)
    holders = {f.object_key.split("/payload/")[1].split("/")[0] for f in theirs.fragments}
    assert {h.split("-")[1] for h in holders} == {"dp0", "dp1"}
    target = sides("target", "tp1,pp2")
    assert target.check() != []  # zeros before
    report = store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
    assert target.check() == []
    assert report.bytes == sum(t.nbytes for _, ts in target.held.values() for t in ts.values())


def test_a_saved_generation_is_not_overwritten(client: Any, sides: Any) -> None:
    source = sides("source", "tp2")
    store.save(source.coordinator, client, store.SaveOptions("t", 1))
    with pytest.raises(wm.ManifestError) as caught:
        store.save(source.coordinator, client, store.SaveOptions("t", 1))
    assert caught.value.code == "store_manifest_exists"
    store.save(source.coordinator, client, store.SaveOptions("t", 2))


def test_what_a_dead_save_left_is_replaced(client: Any, sides: Any) -> None:
    # The Store's put of an existing key keeps the old bytes: an object a dead save left
    # must be removed, not put over.
    source = sides("source", "tp2")
    stale = "t/synthetic/transformer/r1/9/payload/source-dp0-pp0-tp0/0"
    assert client.put(stale, b"\x01" * 4096) == 0
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 9))
    assert stale in {f.object_key for f in store.read_manifest(client, saved.manifest_key, None).fragments}
    assert client.get_size(stale) > 4096
    target = sides("target", "tp1")
    store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
    assert target.check() == []


def test_restore_without_a_manifest_fails_before_any_byte(client: Any, sides: Any) -> None:
    target = sides("target", "tp1")
    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, "t/none/manifest", manifest_digest=None)
    assert caught.value.code == "store_manifest_missing"
    assert str(caught.value) == "the Store holds no t/none/manifest: no complete save is there"
    assert all(not t.any() for _, ts in target.held.values() for t in ts.values())


def test_content_digests_that_do_not_describe_the_manifest_fail(client: Any, sides: Any) -> None:
    source = sides("source", "tp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 5))
    record = bytes(client.get(f"{saved.group_id}/content")).decode()
    client.remove(f"{saved.group_id}/content", True)
    client.put(f"{saved.group_id}/content", record.replace('"generation":5', '"generation":6').encode())
    target = sides("target", "tp1")
    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
    assert caught.value.code == "store_verify_failed"


def test_a_manifest_of_another_digest_is_refused_before_any_byte(client: Any, sides: Any) -> None:
    source = sides("source", "tp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 6))
    target = sides("target", "tp1")
    other = "0" * 64
    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=other)
    assert caught.value.code == "store_manifest_digest_mismatch"
    assert str(caught.value) == (f"{saved.manifest_key} has digest {saved.manifest_digest}, the save reported "
                                 f"{other}: it is not that save")
    assert all(not t.any() for _, ts in target.held.values() for t in ts.values())


def first_object(client: Any, saved: Any) -> tuple[str, int]:
    """The first payload object the manifest names (sorted) and the bytes it must hold."""
    need: dict[str, int] = {}
    for f in store.read_manifest(client, saved.manifest_key, None).fragments:
        need[f.object_key] = max(need.get(f.object_key, 0), f.object_offset + f.nbytes)
    key = sorted(need)[0]
    return key, need[key]


def test_a_missing_object_is_refused_before_any_byte(client: Any, sides: Any) -> None:
    source = sides("source", "tp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 7))
    key, _ = first_object(client, saved)
    assert client.remove(key, True) == 0
    target = sides("target", "tp1")
    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
    assert caught.value.code == "store_object_missing"
    assert str(caught.value) == f"the Store holds no {key}, which {saved.manifest_key} names"
    assert all(not t.any() for _, ts in target.held.values() for t in ts.values())


def test_a_short_object_is_refused_before_any_byte(client: Any, sides: Any) -> None:
    source = sides("source", "tp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 8))
    key, need = first_object(client, saved)
    assert client.remove(key, True) == 0
    assert client.put(key, b"\x07" * (need - 1)) == 0
    target = sides("target", "tp1")
    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
    assert caught.value.code == "store_object_short"
    assert str(caught.value) == f"{key} holds {need - 1} bytes, {saved.manifest_key} needs {need}"
    assert all(not t.any() for _, ts in target.held.values() for t in ts.values())


def test_a_corrupted_restored_byte_fails_the_restore(client: Any, sides: Any) -> None:
    """One restored byte flipped after the transfer: the restore's own content check
    against the saved digests names the tensor."""
    source = sides("source", "tp2")
    saved = store.save(source.coordinator, client, store.SaveOptions("t", 10))
    target = sides("target", "tp1")
    _, tensors = target.held["target-dp0-pp0-tp0"]
    name = sorted(tensors)[0]

    def corrupt() -> None:
        tensors[name].view(np.uint8).reshape(-1)[0] ^= 1

    with pytest.raises(wm.ManifestError) as caught:
        store.restore(target.coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest,
                      after_transfer=corrupt)
    assert caught.value.code == "store_verify_failed"
    assert str(caught.value) == (f"after the restore, tensor {name} differs on the targets from the saved content "
                                 "digest; nothing is restored")


class FakeStoreClient:
    """The ranged get of Mooncake Store's client as upstream defines it: 0 to start a
    session, then the bytes read (a short or negative count is a failure)."""

    def __init__(self, start: int, read: int) -> None:
        self.start, self.read = start, read

    def batch_get_session_start(self, keys: list[str]) -> int:
        return self.start

    def batch_get_into_multi_buffer_ranges(self, keys: Any, local: Any, lengths: Any, offsets: Any) -> list[int]:
        return [self.read]

    def batch_get_session_end(self, keys: list[str]) -> None:
        return None


@pytest.mark.parametrize("start,read,ok", [(0, 24, True), (0, 23, False), (0, -1, False), (-1, 24, False)])
def test_a_store_read_is_done_only_when_every_byte_came(start: int, read: int, ok: bool) -> None:
    backend = store.StoreBackend(FakeStoreClient(start, read))
    try:
        handle = backend.submit("k", False, [1 << 20, 2 << 20], [store.STORE_BASE, store.STORE_BASE + 64], [8, 16])
        assert backend.wait(handle) is ok
        with pytest.raises(wm.ManifestError) as caught:
            backend.submit("k", False, [1 << 20], [store.STORE_BASE - 1], [8])
        assert caught.value.code == "transfer_failed"
    finally:
        backend.close()


def test_the_store_backend_only_reads() -> None:
    backend = store.StoreBackend(client=None)
    with pytest.raises(wm.ManifestError) as caught:
        backend.submit("k", True, [1], [store.STORE_BASE], [1])
    assert caught.value.code == "transfer_arguments_invalid"
    backend.close()


def test_a_safetensors_checkpoint_saved_and_restored_as_live_tp2(client: Any, local: LocalStore,
                                                                 tmp_path: Path) -> None:
    from mooncake.reshard.weight.storage_manifest import WeightManifest

    path = model.minilm_file(tmp_path)
    before = path.read_bytes()
    saved = store.save_checkpoint(client, path, model.BERT_RULES, store.SaveOptions("ckpt", 0),
                                  model_id=model.MINILM_ID, revision=model.MINILM_REVISION)
    assert path.read_bytes() == before  # mapped copy-on-write, never written
    theirs = WeightManifest.from_json(bytes(client.get(saved.manifest_key)).decode())
    assert theirs.manifest_digest == saved.manifest_digest
    checkpoint = model.minilm_tensors(path)
    assert saved.bytes == sum(t.nbytes for t in checkpoint.values())
    layout = model.Layout(tp=2)
    placement = model.minilm_placement(path, layout)
    group = LocalGroup()
    coordinator = Coordinator(group)
    members, closers, held = [], [], {}
    for rank in layout.ranks():
        want = model.minilm_slices(placement, checkpoint, rank)
        tensors = {n: np.zeros_like(t) for n, t in want.items()}
        c = local.client(local_buffer_bytes=1 << 20)
        backend = store.StoreBackend(c)
        me = f"target-tp{rank.tp}"
        member = Member(tensors, backend=backend, session=me, worker_id=me, endpoint=me, rank=rank,
                        instance_id="rollout", lease_id="l", generation=1, placement=placement)
        held[me] = (want, tensors)
        group.join(member, "target")
        members.append(member)
        closers.append((backend, c))
    try:
        store.restore(coordinator, client, saved.manifest_key, manifest_digest=saved.manifest_digest)
        for me, (want, tensors) in held.items():
            for name in want:
                assert np.array_equal(want[name].view(np.uint8), tensors[name].view(np.uint8)), (me, name)
    finally:
        coordinator.stop()
        for member in members:
            member.close()
        for backend, c in closers:
            backend.close()
            c.close()


def test_a_store_without_room_fails_the_save_and_writes_no_manifest(tmp_path: Path) -> None:
    # The synthetic model is 25.7 MB, the store 16 MiB: the Store refuses the objects.
    with LocalStore(tmp_path, segment_bytes=16 << 20) as small:
        c = small.client()
        source = Side(small, "source", model.Layout.parse("tp2"), True)
        try:
            with pytest.raises(wm.ManifestError) as caught:
                store.save(source.coordinator, c, store.SaveOptions("t", 1))
            assert caught.value.code == "store_failed"
            assert c.is_exist("t/synthetic/transformer/r1/1/manifest") == 0
        finally:
            source.close()
            c.close()
