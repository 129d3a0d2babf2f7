"""A trainer's DTensors as live shards (weight_manifest_runtime.dtensor), on real gloo process groups:
2 ranks on a 1-D mesh, 4 ranks on a 2-D (dp, tp) mesh with FSDP2 over tensor parallelism.

The oracle is torch: each rank reports, for every tensor, what torch says it holds
(``compute_local_shape_and_global_offset``) and, for every box our inventory records, the
bytes at the record's address next to the same box of ``full_tensor()``; the parent
checks those and counts, element by element, how often the boxes of all ranks cover each
tensor. Each scenario runs once per module (spawning costs seconds) and the tests read its
results.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import socket
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import weight_manifest as wm
from no_skip import require
from weight_manifest import live

torch = require("torch")
mp = require("torch.multiprocessing")

from weight_manifest_runtime import dtensor  # noqa: E402  (after torch: a missing torch fails above)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn(scenario: Callable[[int, Any], dict[str, Any]], world: int, out: Path) -> list[dict[str, Any]]:
    """Run ``scenario(rank, mesh_factory)`` on ``world`` gloo ranks (127.0.0.1) and
    return each rank's result."""
    mp.spawn(_run, args=(scenario, world, free_port(), str(out)), nprocs=world, join=True)
    return [pickle.loads((out / f"{r}.pkl").read_bytes()) for r in range(world)]


def _run(rank: int, scenario: Callable[[int], dict[str, Any]], world: int, port: int, out: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        result = scenario(rank)
        # Every rank done before rank 0's store (which every rank's teardown still talks
        # to) goes away.
        dist.barrier()
    finally:
        dist.destroy_process_group()
    (Path(out) / f"{rank}.pkl").write_bytes(pickle.dumps(result))
    # The result is written: leave without the interpreter's teardown, where a torch
    # background thread still joinable aborts the process now and then ("terminate called
    # without an active exception", both ranks, seen once in CI).
    os._exit(0)


def _bytes_at(address: int, nbytes: int) -> bytes:
    return ctypes.string_at(address, nbytes)


def _report(shards: dtensor.LocalShards, state: dict[str, Any]) -> dict[str, Any]:
    """What the parent checks: the inventory, torch's own box of each DTensor, and for
    each record the bytes at its address and the same box of the full tensor."""
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

    inventory = shards.inventory(worker_id=f"w{torch.distributed.get_rank()}", endpoint="e", instance_id="trainer",
                                 generation=1, lease_id="l")
    torch_boxes, full = {}, {}
    for name, value in state.items():
        if isinstance(value, DTensor):
            shape, offset = compute_local_shape_and_global_offset(value.shape, value.device_mesh, value.placements)
            torch_boxes[name] = (list(offset), list(shape))
            full[name] = value.full_tensor()
        else:
            full[name] = value.detach()
    pairs = []
    for record in inventory["tensors"]:
        index = tuple(slice(o, o + n) for o, n in zip(record["global_offset"], record["local_shape"]))
        expected = full[record["tensor_id"]][index].contiguous()
        pairs.append((_bytes_at(record["address"], record["nbytes"]), expected.numpy().tobytes()))
    return {"inventory": inventory, "torch_boxes": torch_boxes, "pairs": pairs, "rank": shards.rank,
            "shapes": {n: list(v.shape) for n, v in state.items()}}


# ---- 2 ranks, 1-D mesh ---------------------------------------------------------------


def one_dim(rank: int) -> dict[str, Any]:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.placement_types import _StridedShard

    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))
    counter = iter(range(1, 1 << 20))

    def values(*shape: int) -> Any:
        start = next(counter) * 1000
        return torch.arange(start, start + int(np.prod(shape)), dtype=torch.float32).reshape(shape)

    strided = _StridedShard(0, split_factor=2)
    seven = values(7, 3)
    state = {
        "model.layers.0.rows": distribute_tensor(values(5, 3), mesh, [Shard(0)]),  # 3 + 2
        "model.layers.0.cols": distribute_tensor(values(4, 7), mesh, [Shard(1)]),  # 4 + 3
        "model.layers.1.mlp.experts.3.one_row": distribute_tensor(values(1, 4), mesh, [Shard(0)]),  # 1 + 0
        "model.norm.replicated": distribute_tensor(values(3, 2), mesh, [Replicate()]),
        "lm_head.plain": values(2, 2),
        # torch's own split of a strided shard: rank 0 rows 0,1,4,5; rank 1 rows 2,3,6.
        "strided": DTensor.from_local(strided._split_tensor(seven, 2, with_padding=False)[0][rank], mesh,
                                      [strided], shape=seven.shape, stride=seven.stride()),
    }
    shards = dtensor.local_shards(state, mesh, model_id="m", revision="r")
    result = _report(shards, state)
    result["as_dp"] = dtensor.mesh_rank(mesh, {"tp": "dp"})
    result["errors"] = {}
    partial = {"p": DTensor.from_local(torch.ones(2), mesh, [Partial()])}
    for label, call in {
        "partial": lambda: dtensor.local_shards(partial, mesh, model_id="m", revision="r"),
        "not_a_tensor": lambda: dtensor.local_shards({"x": b"extra state"}, mesh, model_id="m", revision="r"),
        "unknown_axis": lambda: dtensor.mesh_rank(mesh, {"tp": "sp"}),
        "dim_left_out": lambda: dtensor.mesh_rank(mesh, {}),
        "unknown_dim": lambda: dtensor.mesh_rank(mesh, {"tp": "tp", "dp": "dp"}),
    }.items():
        try:
            call()
            result["errors"][label] = None
        except wm.ManifestError as error:
            result["errors"][label] = (error.code, error.path, str(error))
    return result


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return spawn(one_dim, 2, tmp_path_factory.mktemp("dtensor2"))


def records(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for result in results for r in result["inventory"]["tensors"]]


def test_each_single_box_is_torchs_and_empty_chunks_hold_nothing(two_ranks: list[dict[str, Any]]) -> None:
    for result in two_ranks:
        held = {r["tensor_id"]: (r["global_offset"], r["local_shape"]) for r in result["inventory"]["tensors"]
                if r["tensor_id"] != "strided"}
        expected = {n: box for n, box in result["torch_boxes"].items() if n != "strided" and 0 not in box[1]}
        expected["lm_head.plain"] = ([0, 0], [2, 2])
        assert held == expected
    # torch gives rank 1 no row of the one-row tensor, and so do we.
    assert two_ranks[1]["torch_boxes"]["model.layers.1.mlp.experts.3.one_row"][1] == [0, 4]


def test_every_record_addresses_the_bytes_of_its_box_of_the_full_tensor(two_ranks: list[dict[str, Any]]) -> None:
    for result in two_ranks:
        assert result["pairs"] and all(got == expected for got, expected in result["pairs"])


def test_a_strided_shard_is_one_box_per_run_of_rows(two_ranks: list[dict[str, Any]]) -> None:
    boxes = [sorted((r["global_offset"], r["local_shape"]) for r in result["inventory"]["tensors"]
                    if r["tensor_id"] == "strided") for result in two_ranks]
    # torch's split: rank 0 holds rows 0, 1, 4, 5 and rank 1 rows 2, 3, 6 (full_tensor agrees:
    # the bytes test above compares every box with it).
    assert boxes == [[([0, 0], [2, 3]), ([4, 0], [2, 3])], [([2, 0], [2, 3]), ([6, 0], [1, 3])]]
    fragment_ids = {r["fragment_id"] for r in two_ranks[0]["inventory"]["tensors"] if r["tensor_id"] == "strided"}
    assert len(fragment_ids) == 2


def coverage_counts(results: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """How many records of all ranks hold each element of each tensor (brute force)."""
    counts = {n: np.zeros(s, dtype=np.int64) for n, s in results[0]["shapes"].items()}
    for record in records(results):
        index = tuple(slice(o, o + n) for o, n in zip(record["global_offset"], record["local_shape"]))
        counts[record["tensor_id"]][index] += 1
    return counts


def test_the_ranks_boxes_tile_each_tensor(two_ranks: list[dict[str, Any]]) -> None:
    counts = coverage_counts(two_ranks)
    for name in ("model.layers.0.rows", "model.layers.0.cols", "strided", "model.layers.1.mlp.experts.3.one_row"):
        assert (counts[name] == 1).all(), name
    assert (counts["model.norm.replicated"] == 2).all() and (counts["lm_head.plain"] == 2).all()


def test_descriptors_ranks_and_the_core_reading_them(two_ranks: list[dict[str, Any]]) -> None:
    assert [r["rank"] for r in two_ranks] == [wm.ParallelRank(tp=0), wm.ParallelRank(tp=1)]
    assert [r["as_dp"] for r in two_ranks] == [wm.ParallelRank(dp=0), wm.ParallelRank(dp=1)]
    by_name = {r["tensor_id"]: r for r in records(two_ranks)}
    assert (by_name["model.layers.0.cols"]["partition_dim"], by_name["model.layers.0.cols"]["shard_dims"]) == (1, [1])
    assert (by_name["model.norm.replicated"]["partition_dim"], by_name["model.norm.replicated"]["shard_dims"]) == (None, [])
    expert = by_name["model.layers.1.mlp.experts.3.one_row"]
    assert (expert["layer_id"], expert["expert_id"], expert["dtype"], expert["global_shape"]) == (1, 3, "float32", [1, 4])
    manifest = live.read_inventory(live.combine([r["inventory"] for r in two_ranks]))
    placement = wm.placement_manifest_from_runtime_manifest(manifest)
    report = wm.coverage(placement)
    assert report.tensors_complete == len(placement.tensors) == 6


def test_what_cannot_be_described_is_refused_with_a_code(two_ranks: list[dict[str, Any]]) -> None:
    errors = two_ranks[0]["errors"]
    assert errors["partial"][:2] == ("dtensor_placement_unsupported", "/tensors/p") and "Partial" in errors["partial"][2]
    assert errors["not_a_tensor"][:2] == ("dtensor_placement_unsupported", "/tensors/x")
    for label in ("unknown_axis", "dim_left_out", "unknown_dim"):
        assert errors[label][:2] == ("dtensor_axes_invalid", None), label


# ---- 4 ranks, 2-D mesh: FSDP2 over tensor parallelism ---------------------------------


def two_dim(rank: int) -> dict[str, Any]:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 10, bias=False), torch.nn.Linear(10, 6, bias=False),
                                torch.nn.LayerNorm(6))
    parallelize_module(model, mesh["tp"], {"0": ColwiseParallel(), "1": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])
    state = dict(model.state_dict())
    state.update({
        "both_dims": distribute_tensor(torch.arange(35.0).reshape(5, 7), mesh, [Shard(0), Shard(1)]),
        "rows_over_tp": distribute_tensor(torch.arange(12.0).reshape(6, 2), mesh, [Replicate(), Shard(0)]),
        "rows_twice": distribute_tensor(torch.arange(21.0).reshape(7, 3), mesh, [Shard(0), Shard(0)]),
    })
    shards = dtensor.local_shards(state, mesh, model_id="m", revision="r")
    result = _report(shards, state)
    result["placements"] = {n: [repr(p) for p in v.placements] for n, v in state.items() if hasattr(v, "placements")}
    result["custom"] = dtensor.mesh_rank(mesh, {"dp": "pp", "tp": "ep"})
    result["combined"] = dtensor.mesh_rank(mesh, {"dp": "dp", "tp": "dp"})
    return result


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return spawn(two_dim, 4, tmp_path_factory.mktemp("dtensor4"))


def test_fsdp2_over_tp_is_a_strided_shard_described_as_torch_holds_it(four_ranks: list[dict[str, Any]]) -> None:
    assert four_ranks[0]["placements"]["0.weight"][0].startswith("_StridedShard(dim=0")
    for result in four_ranks:
        assert all(got == expected for got, expected in result["pairs"])
        for record in result["inventory"]["tensors"]:
            assert (record["global_offset"], record["local_shape"]) == tuple(result["torch_boxes"][record["tensor_id"]])
    counts = coverage_counts(four_ranks)
    for name in ("0.weight", "1.weight", "both_dims", "rows_twice"):
        assert (counts[name] == 1).all(), name
    assert (counts["rows_over_tp"] == 2).all()


def test_mesh_coordinates_become_the_ranks(four_ranks: list[dict[str, Any]]) -> None:
    # init_device_mesh lays the ranks out row-major: rank r is at (r // 2, r % 2).
    assert [r["rank"] for r in four_ranks] == [wm.ParallelRank(dp=r // 2, tp=r % 2) for r in range(4)]
    assert [r["custom"] for r in four_ranks] == [wm.ParallelRank(pp=r // 2, ep=r % 2) for r in range(4)]
    # Two mesh dims on one axis combine row-major: (d, t) is dp 2d + t.
    assert [r["combined"] for r in four_ranks] == [wm.ParallelRank(dp=r) for r in range(4)]
    manifest = live.read_inventory(live.combine([r["inventory"] for r in four_ranks]))
    report = wm.coverage(wm.placement_manifest_from_runtime_manifest(manifest))
    assert report.tensors_complete == len(four_ranks[0]["shapes"])
