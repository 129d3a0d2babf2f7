"""weight_manifest_runtime.simulate and the schedule it shares with the executor.

Oracles: the operations an executor actually submitted (a recording backend) for the
schedule; the tensors' byte counts computed here from the model's shapes, and link rates
worked by hand, for the floor and the fluid simulation; a three-flow max-min fair share
worked by hand."""

from __future__ import annotations

import json
from dataclasses import replace
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from test_transfer import MODEL, Instance, update

import weight_manifest as wm
from weight_manifest_runtime import simulate, transfer
from weight_manifest_runtime.transfer.schedule import schedule


class Recording(transfer.LocalBackend):
    """A local backend that records every batch submitted: (session, write, local,
    remote, lengths)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[str, bool, list[int], list[int], list[int]]] = []

    def submit(self, session: str, write: bool, local: list[int], remote: list[int], lengths: list[int]) -> int:
        self.batches.append((session, write, list(local), list(remote), list(lengths)))
        return super().submit(session, write, local, remote, lengths)


def recorded(source: Instance, target: Instance, worker: str, mode: str, staging_bytes: int,
             batch_segments: int, **options: Any) -> tuple[Any, Recording, transfer.Staging]:
    bound, _, sessions = update(source, target)
    backend = Recording()
    source.register(backend)
    target.register(backend)
    staging = transfer.Staging(backend, staging_bytes)
    transfer.execute(bound, backend, sessions, mode=mode, worker=worker, staging=staging,
                     options=transfer.ExecuteOptions(batch_segments=batch_segments), **options)
    return bound, backend, staging


@pytest.mark.parametrize("mode", ["push", "pull"])
@pytest.mark.parametrize("layouts", [((2, 1, 1), (1, 1, 1)), ((1, 1, 1), (2, 1, 1)), ((4, 2, 1), (2, 1, 1)),
                                     ((2, 2, 1), (4, 1, 2))], ids=lambda l: f"{l[0]}->{l[1]}")
def test_the_schedule_is_the_operations_the_executor_submits(mode: str, layouts: Any) -> None:
    """Each executing worker's batches, in order, as the executor submitted them: the
    same remote addresses and lengths, the same session and direction, staged operations
    reading the staging buffer and the others their own bytes. A small staging buffer and
    small batches make several rounds and batches per pair."""
    (stp, spp, sdp), (ttp, tpp, tdp) = layouts
    source, target = Instance("src", stp, spp, sdp), Instance("dst", ttp, tpp, tdp, fill=False)
    workers = source.workers if mode == "push" else target.workers
    compared = 0
    for worker in workers:
        bound, backend, staging = recorded(source, target, worker, mode, staging_bytes=512, batch_segments=3)
        planned = schedule(bound, mode=mode, worker=worker, options=transfer.ExecuteOptions(batch_segments=3),
                           half=staging.half).operations(worker)
        assert len(planned) == len(backend.batches), worker
        for (index, _, remote_worker, write, ops), (session, wrote, local, remote, lengths) in zip(planned,
                                                                                                  backend.batches):
            assert session == remote_worker and wrote == write == (mode == "push")
            assert [o[0] for o in ops] == remote and [o[1] for o in ops] == lengths
            inside = [staging.address <= a < staging.address + 2 * staging.half for a in local]
            assert [o[2] for o in ops] == inside
            compared += len(ops)
    assert compared > 0


def test_a_deltas_schedule_is_the_executors_too() -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, _ = update(source, target)
    # Every fourth 64-byte block of each source worker's first tensor changed.
    changed = {}
    for worker, held in source.workers.items():
        tensor = next(iter(held.values()))
        base = int(tensor.ctypes.data)
        starts = np.arange(base, base + tensor.nbytes, 256, dtype=np.uint64)
        changed[(worker, "cpu")] = np.stack([starts, np.minimum(starts + 64, base + tensor.nbytes)], axis=1)
    bound, backend, staging = recorded(source, target, "dst-d0p0t0", "pull", staging_bytes=4096, batch_segments=2,
                                       changed=changed)
    planned = schedule(bound, mode="pull", worker="dst-d0p0t0", options=transfer.ExecuteOptions(batch_segments=2),
                       half=staging.half,
                       changed=changed).operations("dst-d0p0t0")
    assert [[(r, n) for r, n, _ in ops] for *_, ops in planned] == [list(zip(b[3], b[4])) for b in backend.batches]
    assert sum(n for b in backend.batches for n in b[4]) == sum(n for *_, ops in planned for _, n, _ in ops) > 0


def model_bytes() -> int:
    """Every tensor's bytes once (float32), from the model's shapes."""
    return sum(4 * int(np.prod(shape)) for shape, _, _ in MODEL.values())


def flat(**engine: float) -> simulate.Model:
    """1 Gbit/s NICs, one per host; engine costs zero unless given."""
    costs = {"op_seconds": 0.0, "batch_seconds": 0.0, "pair_seconds": 0.0, "stream_gbit": 1e6,
             "staging_gib_per_s": 1e6, **engine}
    return simulate.Model(gpus_per_host=8, nics_per_host=1, nic_gbit=1.0, intra_host_gbit=100.0,
                          engine=simulate.Engine(**costs), rpc_seconds=0.0)


def test_two_hosts_the_floor_and_the_time_are_the_bytes_over_the_link() -> None:
    """TP2 on host A -> TP1 on host B: every byte crosses B's one NIC at 1 Gbit/s, so the
    floor is the model's bytes over 125 MB/s, and without engine costs the two sources
    sharing that link finish exactly then."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, _ = update(source, target)
    hosts = {"src-d0p0t0": "A", "src-d0p0t1": "A", "dst-d0p0t0": "B"}
    for mode in ("push", "pull"):
        got = simulate.simulate(bound, flat(), mode=mode, hosts=hosts)
        assert got.bytes == model_bytes()
        assert got.floor_seconds == pytest.approx(model_bytes() / 125e6, rel=1e-9)
        assert got.transfer_seconds == pytest.approx(got.floor_seconds, rel=1e-6)
        assert got.links[0]["link"] == "nic-in:B:0" and got.links[0]["bytes"] == model_bytes()


def test_gpus_sharing_a_nic_share_its_rate() -> None:
    """TP2 on host A -> TP2 on host B, GPU g to GPU g: with one NIC per host every byte the
    targets hold crosses it (floor: their bytes over 125 MB/s); with a NIC per GPU the
    busiest NIC carries the larger target's bytes."""
    source, target = Instance("src", 2, 1), Instance("dst", 2, 1, fill=False)
    bound, _, _ = update(source, target)
    hosts = {"src-d0p0t0": "A", "src-d0p0t1": "A", "dst-d0p0t0": "B", "dst-d0p0t1": "B"}
    shared = simulate.simulate(bound, replace(flat(), gpus_per_host=2, nics_per_host=1), mode="push", hosts=hosts)
    own = simulate.simulate(bound, replace(flat(), gpus_per_host=2, nics_per_host=2), mode="push", hosts=hosts)
    held = {w: sum(t.nbytes for t in tensors.values()) for w, tensors in target.workers.items()}
    assert shared.floor_seconds == pytest.approx(sum(held.values()) / 125e6, rel=1e-9)
    assert shared.transfer_seconds == pytest.approx(shared.floor_seconds, rel=1e-6)
    assert own.floor_seconds == pytest.approx(max(held.values()) / 125e6, rel=1e-9)
    assert sorted(l["link"] for l in own.links) == ["nic-in:B:0", "nic-in:B:1", "nic-out:A:0", "nic-out:A:1"]


def test_an_engine_bound_update_costs_its_operations() -> None:
    """With links far faster than the engine, a worker's time is, pair after pair, the
    start latency plus its operations and batches at the engine's cost: counted here from
    the batches the executor really submitted (pull: target dst-d0p0t0 runs both pairs)."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, backend, _ = recorded(source, target, "dst-d0p0t0", "pull", staging_bytes=transfer.DEFAULT_STAGING_BYTES,
                                 batch_segments=1)
    ops = sum(len(b[4]) for b in backend.batches)
    per_pair: dict[str, int] = {}
    for b in backend.batches:
        per_pair[b[0]] = per_pair.get(b[0], 0) + 1
    op_s, batch_s, start_s = 1e-3, 4e-3, 0.05
    model = simulate.Model(nics_per_host=1, nic_gbit=1e6, intra_host_gbit=1e6, rpc_seconds=0.0,
                           engine=simulate.Engine(op_seconds=op_s, batch_seconds=batch_s, pair_seconds=start_s,
                                                  stream_gbit=1e6, staging_gib_per_s=1e9))
    hosts = {"src-d0p0t0": "A", "src-d0p0t1": "A", "dst-d0p0t0": "B"}
    got = simulate.simulate(bound, model, mode="pull", hosts=hosts, options=transfer.ExecuteOptions(batch_segments=1))
    # The in-flight bound (4) overlaps a pair's batch round trips.
    assert max(per_pair.values()) > 4
    want = 2 * start_s + ops * op_s + sum(n * batch_s / min(4, n) for n in per_pair.values())
    assert got.operations == ops and got.batches == len(backend.batches)
    assert got.transfer_seconds == pytest.approx(want, rel=1e-3)


def test_max_min_fair_shares() -> None:
    """Links x (10) and y (4); flows a (x), b (x, y), c (y): y's two flows get 2 each, a
    takes the rest of x (8). A cap of 1 on c gives b 3 and a 7."""
    def flows(cap_c: float) -> list[simulate.Flow]:
        return [simulate.Flow(None, ("x",), 1.0, 1e9, 0.0), simulate.Flow(None, ("x", "y"), 1.0, 1e9, 0.0),  # type: ignore[arg-type]
                simulate.Flow(None, ("y",), 1.0, cap_c, 0.0)]  # type: ignore[arg-type]
    got = flows(1e9)
    simulate._fair(got, {"x": 10.0, "y": 4.0})
    assert [f.rate for f in got] == pytest.approx([8.0, 2.0, 2.0])
    got = flows(1.0)
    simulate._fair(got, {"x": 10.0, "y": 4.0})
    assert [f.rate for f in got] == pytest.approx([7.0, 3.0, 1.0])


def test_a_delta_moves_its_fraction_and_the_cli_writes_json_and_svg(tmp_path: Any) -> None:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 1, fill=False)
    bound, _, _ = update(source, target)
    changed = simulate.delta_changed(bound, 0.25, block_bytes=64, seed=3)
    # The oracle: the changed ranges' bytes, counted with numpy.
    want = sum(int((r[:, 1] - r[:, 0]).sum()) for r in changed.values())
    got = simulate.simulate(bound, flat(), mode="push", changed=changed,
                            hosts={"src-d0p0t0": "A", "src-d0p0t1": "A", "dst-d0p0t0": "B"})
    assert got.bytes == want and 0.15 * model_bytes() < want < 0.35 * model_bytes()
    path = tmp_path / "bound.json"
    path.write_text(bound.to_json())
    picture = tmp_path / "links.svg"
    done = subprocess.run([sys.executable, "-m", "weight_manifest_runtime.simulate", "--bound", str(path), "--model", "emulated",
                           "--delta", "0.1", "--delta-block-bytes", "64", "--format", "json", "--svg", str(picture)],
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert out["update"]["bytes"] == model_bytes() and out["delta"]["bytes"] < model_bytes()
    assert set(out["update"]["phases"]) == {"plan", "bind", "transfer", "verify", "commit"}
    assert out["update"]["ratio"] >= 1.0
    assert picture.read_text().startswith("<svg") and "nic-in:t0:0" in picture.read_text()


def test_a_bad_model_is_refused(tmp_path: Any) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"gpus_per_host": 0}))
    with pytest.raises(ValueError, match="gpus_per_host"):
        simulate.load_model(str(path))
    path.write_text(json.dumps({"nic_gbps": 1}))
    with pytest.raises(ValueError, match="nic_gbps"):
        simulate.load_model(str(path))
    with pytest.raises(ValueError, match="no preset"):
        simulate.load_model("h999")


def test_workers_sharing_the_machines_cores_take_turns() -> None:
    """TP2 -> TP2 pushed (two sources at once, one pair each) on links far faster than
    the engine: with a core each, the update takes the larger worker's operations at
    op_seconds; with one core shared by both, every operation of both workers, one after
    another. The operations are those the executors really submitted."""
    source, target = Instance("src", 2, 1), Instance("dst", 2, 1, fill=False)
    ops = {}
    for worker in source.workers:
        bound, backend, _ = recorded(source, target, worker, "push", staging_bytes=transfer.DEFAULT_STAGING_BYTES,
                                     batch_segments=256)
        ops[worker] = sum(len(b[4]) for b in backend.batches)
    op_s = 1e-3
    fast = replace(flat(op_seconds=op_s), nic_gbit=1e6, intra_host_gbit=1e6)
    hosts = {"src-d0p0t0": "A", "src-d0p0t1": "A", "dst-d0p0t0": "B", "dst-d0p0t1": "B"}
    own = simulate.simulate(bound, fast, mode="push", hosts=hosts)
    shared = simulate.simulate(bound, replace(fast, machine_cores=1.0), mode="push", hosts=hosts)
    assert own.transfer_seconds == pytest.approx(max(ops.values()) * op_s, rel=1e-3)
    assert shared.transfer_seconds == pytest.approx(sum(ops.values()) * op_s, rel=1e-3)


@pytest.mark.parametrize("mode", ["push", "pull"])
def test_each_executing_worker_starts_its_pairs_staggered(mode: str) -> None:
    """The i-th of n executing workers (sorted ids) runs its pairs in the bound plan's
    order rotated by i * len // n: TP2 sources into PP2 targets pair all to all, and the
    workers start on different remote workers."""
    source, target = Instance("src", 2, 1), Instance("dst", 1, 2, fill=False)
    bound, _, _ = update(source, target)
    runner = "source_worker_id" if mode == "push" else "target_worker_id"
    executors = sorted({getattr(p, runner) for p in bound.pairs})
    planned = schedule(bound, mode=mode)
    for i, worker in enumerate(executors):
        own = [p for p in bound.pairs if getattr(p, runner) == worker]
        shift = i * len(own) // len(executors)
        expected = [(p.source_worker_id, p.target_worker_id) for p in own[shift:] + own[:shift]]
        got = [(s.pair.source_worker_id, s.pair.target_worker_id) for s in planned.pairs if s.worker == worker]
        assert got == expected, worker
        # Run for this worker alone, the executor follows the same order.
        alone = schedule(bound, mode=mode, worker=worker)
        assert [(s.pair.source_worker_id, s.pair.target_worker_id) for s in alone.pairs] == expected
    firsts = {next(s.pair.source_worker_id if mode == "pull" else s.pair.target_worker_id
                   for s in planned.pairs if s.worker == w) for w in executors}
    assert len(firsts) > 1, "every worker starts on the same remote worker"


def quantized_update(target_replicas: int, split: str = "sources", one_source: bool = False) -> Any:
    """A [512, 256] bfloat16 tensor as TP2 rows (workers s0, s1) into ``target_replicas``
    block-FP8 replicas holding it whole (workers t0, t1, ...) with its [4, 2] float32
    scales (contract §17.8), planned and bound: the bound plan. ``split="targets"``: one
    source s0 holding it whole into TP2 rows (t0, t1) instead. ``one_source``: both TP
    ranks of the sources on worker s0."""
    shape, grid = [512, 256], [4, 2]

    def descriptor(tid: str, dims: list[int], dtype: str, itemsize: int) -> dict[str, Any]:
        return {"tensor_id": tid, "global_shape": dims, "dtype": dtype, "itemsize": itemsize, "partition_dim": None,
                "shard_dims": [0, 1], "layer_id": None, "expert_id": None, "layout_fingerprint": dtype}

    def fragment(fid: str, tid: str, offset: list[int], extent: list[int], itemsize: int, dp: int,
                 tp: int) -> dict[str, Any]:
        return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": offset, "local_shape": extent,
                "nbytes": itemsize * extent[0] * extent[1], "rank": {"dp": dp, "tp": tp, "pp": 0, "ep": 0},
                "aliases": []}

    def placement(tensors: list[dict[str, Any]], fragments: list[dict[str, Any]]) -> str:
        return json.dumps({"model_id": "sim/fp8", "revision": "r1", "placement_id": None, "tensors": tensors,
                           "fragments": fragments})

    if split == "sources":
        source_frags = [fragment(f"s{i}", "w.weight", [256 * i, 0], [256, 256], 2, 0, i) for i in range(2)]
        target_frags = ([fragment(f"t{d}", "w.weight", [0, 0], shape, 1, d, 0) for d in range(target_replicas)]
                        + [fragment(f"t{d}s", "w.weight_scale_inv", [0, 0], grid, 4, d, 0)
                           for d in range(target_replicas)])
    else:
        source_frags = [fragment("s0", "w.weight", [0, 0], shape, 2, 0, 0)]
        target_frags = ([fragment(f"t{i}", "w.weight", [256 * i, 0], [256, 256], 1, 0, i) for i in range(2)]
                        + [fragment(f"t{i}s", "w.weight_scale_inv", [2 * i, 0], [2, 2], 4, 0, i) for i in range(2)])
    source = placement([descriptor("w.weight", shape, "bfloat16", 2)], source_frags)
    target = placement([descriptor("w.weight", shape, "float8_e4m3fn", 1),
                        descriptor("w.weight_scale_inv", grid, "float32", 4)], target_frags)
    spec = json.dumps({"block_size": [128, 128], "fmt": "e4m3", "quant_method": "fp8",
                       "tensors": [{"scale_tensor_id": "w.weight_scale_inv", "tensor_id": "w.weight"}]})

    def binding(text: str, instance: str, worker: Any) -> str:
        doc = wm.PlacementManifest.from_json(text)
        frags, address = [], 1 << 32
        for f in json.loads(text)["fragments"]:
            frags.append({"address": address, "device": "cuda:0", "endpoint": f"{worker(f)}:1",
                          "fragment_id": "rt:" + f["placement_fragment_id"], "nbytes": f["nbytes"],
                          "placement_fragment_id": f["placement_fragment_id"], "worker_id": worker(f)})
            address += f["nbytes"] + 4096
        return json.dumps({"fragments": frags, "generation": 1, "instance_id": instance, "lease_id": "l",
                           "model_id": "sim/fp8", "placement_digest": doc.digest, "placement_id": doc.placement_id,
                           "revision": "r1"})

    planned = wm.plan(source, target, quantization=spec)
    return wm.bind_plan(planned, binding(source, "trainer", lambda f: "s0" if one_source else f"s{f['rank']['tp']}"),
                        binding(target, "engine", lambda f: f"t{f['rank']['dp'] + f['rank']['tp']}"))


@pytest.mark.parametrize("replicas", [1, 2])
def test_a_quantized_update_sends_fp8_and_scales_after_its_sources_quantize(replicas: int) -> None:
    """BF16 TP2 on host A into block-FP8 replicas on host B (one 1 Gbit/s NIC each): every
    target receives the tensor's FP8 bytes (one per element) and its scales (4 per
    128x128 block), so the floor is those bytes times the replicas over 125 MB/s. Each
    source quantizes its 256x256 bfloat16 once (also when two replicas take it) at the
    model's rate before its first pair, then the NIC carries everything: the time is
    that quantization plus the floor. Pulling is refused (the sources compute the bytes)."""
    bound = quantized_update(replicas)
    hosts = {"source": {"s0": "A", "s1": "A"}, "target": {f"t{d}": "B" for d in range(replicas)}}
    fp8, scales = 512 * 256, 4 * 2 * 4
    rate = 0.001  # GiB/s: each source's 131,072 bfloat16 bytes take 0.122 s
    got = simulate.simulate(bound, replace(flat(), quantize_gib_per_s=rate), mode="push", hosts=hosts)
    assert got.bytes == replicas * (fp8 + scales)
    assert got.floor_seconds == pytest.approx(replicas * (fp8 + scales) / 125e6, rel=1e-9)
    assert got.quantized_bytes == 2 * 512 * 256
    quantize = 256 * 256 * 2 / (rate * (1 << 30))
    assert got.quantize_seconds == pytest.approx(quantize, rel=1e-9)
    assert got.transfer_seconds == pytest.approx(quantize + got.floor_seconds, rel=1e-6)
    free = simulate.simulate(bound, flat(), mode="push", hosts=hosts)
    assert free.transfer_seconds == pytest.approx(free.floor_seconds, rel=1e-6)
    with pytest.raises(ValueError, match="push mode only"):
        simulate.simulate(bound, flat(), mode="pull", hosts=hosts)


def test_a_source_sends_a_pairs_quantized_copies_while_it_quantizes_the_next() -> None:
    """Both bfloat16 halves on one source worker into one FP8 target: one pair of two
    values copies (65,536 FP8 bytes each) and two scales copies (16 bytes each), W =
    131,104 bytes on the one link (W / 125 MB/s), each copy's 131,072 bfloat16 bytes
    quantized in q. Worked by hand for the fluid model: the pair starts after the first
    copy's quantization and then goes at the lesser of the link and the quantizer
    (W bytes per q): q + max(W / 125 MB/s, q)."""
    bound = quantized_update(1, one_source=True)
    hosts = {"source": {"s0": "A"}, "target": {"t0": "B"}}
    wire = (2 * 65536 + 32) / 125e6
    for q in (3 * wire, wire / 4):
        rate = 131072 / (q * (1 << 30))
        got = simulate.simulate(bound, replace(flat(), quantize_gib_per_s=rate), mode="push", hosts=hosts)
        assert got.pairs == 1 and got.quantized_bytes == 2 * 512 * 256
        assert got.floor_seconds == pytest.approx(wire, rel=1e-9)
        assert got.transfer_seconds == pytest.approx(q + max(wire, q), rel=1e-6)
