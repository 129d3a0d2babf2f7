"""``coverage``, ``plan`` and ``bind_plan`` from Python: on every coverage, plan and
plan.bind conformance fixture, the result equals the fixture's expectation (computed by the
Python oracle) and the Rust CLI's output byte for byte, and a rejection has the same code
in both. The segments of a bound plan move exactly the bytes a brute-force expansion of its
copies moves."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm
from conftest import ROOT

CONFORMANCE = ROOT / "tests" / "conformance"
VECTORS = ROOT / "tests" / "vectors" / "plan_bind"


def fixtures(folder: str) -> list[Path]:
    return sorted((CONFORMANCE / folder).glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def cli_run(cli: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, check=False)


def cli_code(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    code: str = json.loads(done.stdout)["error"]["code"]
    return code


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fixture", fixtures("coverage"), ids=lambda p: p.stem)
def test_coverage_fixture(fixture: Path, cli: Path, tmp_path: Path) -> None:
    case = load(fixture)
    document = case["input"]["document"]
    source = write(tmp_path, "placement.json", document)
    args: list[object] = ["coverage", source, "--format", "json", "-o", tmp_path / "cli.json"]
    if case["input"].get("require_complete"):
        args.insert(2, "--require-complete")
    done = cli_run(cli, *args)
    expect = case["expect"]
    try:
        report = wm.coverage(document)
        if case["input"].get("require_complete"):
            report.require_complete()
    except wm.ManifestError as e:
        assert not expect["ok"], f"rejected: {e}"
        assert e.code == expect["code"] == cli_code(done)
        if "path" in expect:
            assert e.path == expect["path"]
        return
    assert expect["ok"], "accepted a rejected document"
    assert done.returncode == 0, done.stderr
    assert report.to_json() == expect["report"] == (tmp_path / "cli.json").read_text()
    oracle = json.loads(expect["report"])
    assert report.is_complete == (oracle["tensors_complete"] == len(oracle["tensors"]))
    assert (report.tensors_complete, report.tensors_with_gaps, report.tensors_ambiguous) == (
        oracle["tensors_complete"],
        oracle["tensors_with_gaps"],
        oracle["tensors_ambiguous"],
    )
    assert report.tensors == oracle["tensors"]
    assert report.placement_id == oracle["placement_id"]
    assert wm.CoverageReport.from_json(report.to_json()).to_json() == report.to_json()
    assert wm.coverage(wm.PlacementManifest.from_json(document)).to_json() == report.to_json()
    assert wm.coverage(source).to_json() == report.to_json()


@pytest.mark.parametrize("fixture", fixtures("plan"), ids=lambda p: p.stem)
def test_plan_fixture(fixture: Path, cli: Path, tmp_path: Path) -> None:
    case = load(fixture)
    given = case["input"]
    source = write(tmp_path, "source.json", given["source"])
    target = write(tmp_path, "target.json", given["target"])
    limits = wm.PlanLimits(
        **{k: given[k] for k in ("max_regions", "max_segments") if k in given},
    )
    flags = [f"--{k.replace('_', '-')}={given[k]}" for k in ("max_regions", "max_segments") if k in given]
    done = cli_run(cli, "plan", source, target, *flags, "--format", "json", "-o", tmp_path / "cli.json")
    expect = case["expect"]
    try:
        plan = wm.plan(given["source"], given["target"], limits=limits)
    except wm.ManifestError as e:
        assert not expect["ok"], f"rejected: {e}"
        assert e.code == expect["code"] == cli_code(done)
        return
    assert expect["ok"], "accepted a rejected pair"
    assert done.returncode == 0, done.stderr
    assert plan.to_json() == expect["plan"] == (tmp_path / "cli.json").read_text()
    assert plan.plan_id == expect["plan_id"]
    oracle = json.loads(expect["plan"])
    assert len(plan) == len(oracle["regions"])
    for region, wanted in zip(plan.regions, oracle["regions"]):
        assert region.tensor_id == wanted["tensor_id"]
        assert (region.source_fragment_id, region.target_fragment_id) == (
            wanted["source_fragment_id"],
            wanted["target_fragment_id"],
        )
        assert (region.source_offset, region.target_offset) == (wanted["source_offset"], wanted["target_offset"])
        assert region.global_offset == tuple(wanted["global_offset"])
        assert region.shape == tuple(wanted["shape"])
        assert (region.nbytes, region.run_bytes) == (wanted["nbytes"], wanted["run_bytes"])
        assert region.loops == tuple((l["count"], l["source_stride"], l["target_stride"]) for l in wanted["loops"])
    assert (plan.source_placement_id, plan.target_placement_id) == (
        oracle["source"]["placement_id"],
        oracle["target"]["placement_id"],
    )
    # Objects, files and text give the same plan; a plan read back is equal.
    from_objects = wm.plan(wm.PlacementManifest.from_json(given["source"]), target)
    assert from_objects == plan and hash(from_objects) == hash(plan)
    assert wm.Plan.from_json(plan.to_json()) == plan
    stats = json.loads(cli_run(cli, "plan", source, target, "--stats", "--format", "json").stdout)["stats"]
    mine = plan.stats
    for entry in mine["sources"]:
        rank = entry["rank"]
        entry["rank"] = {"dp": rank.dp, "ep": rank.ep, "pp": rank.pp, "tp": rank.tp}
    assert dict(mine) == stats


def bound_case(case: dict[str, Any]) -> wm.BoundPlan:
    given = case["input"]
    return wm.bind_plan(
        given["plan"],
        given["source_binding"],
        given["target_binding"],
        source_generation=given.get("source_generation"),
        target_generation=given.get("target_generation"),
    )


@pytest.mark.parametrize("fixture", fixtures("plan_bind"), ids=lambda p: p.stem)
def test_plan_bind_fixture(fixture: Path, cli: Path, tmp_path: Path) -> None:
    case = load(fixture)
    given = case["input"]
    paths = [write(tmp_path, f"{k}.json", given[k]) for k in ("plan", "source_binding", "target_binding")]
    flags = [f"--{k.replace('_', '-')}={given[k]}" for k in ("source_generation", "target_generation") if given.get(k) is not None]
    done = cli_run(cli, "plan-bind", *paths, *flags, "--format", "json", "-o", tmp_path / "cli.json")
    expect = case["expect"]
    try:
        bound = bound_case(case)
    except wm.ManifestError as e:
        assert not expect["ok"], f"rejected: {e}"
        assert e.code == expect["code"] == cli_code(done)
        if "path" in expect:
            assert e.path == expect["path"]
        return
    assert expect["ok"], "accepted a rejected binding"
    assert done.returncode == 0, done.stderr
    assert bound.to_json() == expect["bound_plan"] == (tmp_path / "cli.json").read_text()
    assert bound.bound_plan_id == expect["bound_plan_id"]
    oracle = json.loads(expect["bound_plan"])
    assert [(g.source_worker_id, g.target_worker_id, g.bytes, len(g)) for g in bound.pairs] == [
        (p["source_worker_id"], p["target_worker_id"], p["bytes"], len(p["copies"])) for p in oracle["pairs"]
    ]
    assert [g.copies for g in bound.pairs] == [p["copies"] for p in oracle["pairs"]]
    assert (bound.source, bound.target, bound.plan_id) == (oracle["source"], oracle["target"], oracle["plan_id"])
    assert wm.BoundPlan.from_json(bound.to_json()).to_json() == bound.to_json()
    assert bound_with_plan_object(case).to_json() == bound.to_json()
    for group, pair in zip(bound.pairs, oracle["pairs"]):
        assert_segments_move_the_copies(group, pair["copies"])


def bound_with_plan_object(case: dict[str, Any]) -> wm.BoundPlan:
    given = dict(case["input"])
    given["plan"] = wm.Plan.from_json(given["plan"])
    return bound_case({"input": given})


Run = tuple[str, str, int, int, int]  # (source device, target device, source, target, length)


def expand(copies: list[dict[str, Any]]) -> list[Run]:
    """Brute force: every contiguous run the copies move, in copy and loop order."""
    runs: list[Run] = []
    for copy in copies:
        starts = [(copy["source"]["address"], copy["target"]["address"])]
        for loop in copy["loops"]:
            starts = [
                (s + i * loop["source_stride"], t + i * loop["target_stride"])
                for s, t in starts
                for i in range(loop["count"])
            ]
        devices = (copy["source"]["device"], copy["target"]["device"])
        runs += [(*devices, s, t, copy["run_bytes"]) for s, t in starts]
    return runs


def by_byte(runs: list[Run]) -> dict[tuple[str, int], tuple[str, int]]:
    """Each moved byte, (target device, address) -> (source device, address), for runs of
    a few bytes; a byte written twice fails."""
    moved: dict[tuple[str, int], tuple[str, int]] = {}
    for sd, td, s, t, n in runs:
        for b in range(n):
            assert (td, t + b) not in moved, "a target byte is written twice"
            moved[(td, t + b)] = (sd, s + b)
    return moved


def assert_segments_move_the_copies(group: wm.CopyGroup, copies: list[dict[str, Any]]) -> None:
    lowered = group.segments()
    assert (lowered.source.dtype.name, lowered.length.dtype.name, lowered.device.dtype.name) == (
        "uint64",
        "uint64",
        "uint32",
    )
    columns = [c.tolist() for c in (lowered.source, lowered.target, lowered.length, lowered.device)]
    segments: list[Run] = [(*lowered.devices[d], s, t, n) for s, t, n, d in zip(*columns)]
    runs = expand(copies)
    assert sum(r[4] for r in segments) == group.bytes == sum(c["nbytes"] for c in copies)
    if group.bytes < 1 << 16:
        assert by_byte(segments) == by_byte(runs)
    # Each segment is a concatenation of consecutive runs, and no segment continues the
    # previous one on both sides between the same devices.
    at = 0
    for sd, td, s, t, n in segments:
        covered = 0
        while covered < n:
            rsd, rtd, rs, rt, rn = runs[at]
            assert (rsd, rtd, rs, rt) == (sd, td, s + covered, t + covered)
            covered, at = covered + rn, at + 1
        assert covered == n
    assert at == len(runs)
    for (sd0, td0, s0, t0, n0), (sd1, td1, s1, t1, _) in zip(segments, segments[1:]):
        assert not (s0 + n0 == s1 and t0 + n0 == t1 and (sd0, td0) == (sd1, td1))


def test_segments_are_limited_before_they_are_built() -> None:
    bound = wm.bind_plan(
        (VECTORS / "plan.json").read_text(),
        (VECTORS / "source-binding.json").read_text(),
        (VECTORS / "target-binding.json").read_text(),
    )
    group = bound.pairs[0]
    runs = sum(math.prod(loop["count"] for loop in c["loops"]) for c in group.copies)
    assert len(group.segments(max_segments=runs)) <= runs
    with pytest.raises(wm.ManifestError) as raised:
        group.segments(max_segments=runs - 1)
    assert raised.value.code == "plan_limit_exceeded"


def test_arguments_of_the_wrong_kind_are_type_errors() -> None:
    with pytest.raises(TypeError):
        wm.coverage(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wm.plan(object(), object())  # type: ignore[arg-type]


def test_rejected_documents_raise_manifest_error_with_a_pointer() -> None:
    with pytest.raises(wm.ManifestError) as raised:
        wm.coverage('{"model_id": "m"}')
    assert raised.value.code == "fields_mismatch"
    with pytest.raises(wm.ManifestError) as raised:
        wm.Plan.from_json("[1")
    assert raised.value.code == "invalid_json" and raised.value.line == 1
    with pytest.raises(wm.ManifestError) as raised:
        wm.BoundPlan.from_json("{}")
    assert raised.value.code == "bound_plan_document_invalid"


def test_plan_reports_the_sources_rejection_first_as_the_cli_does(cli: Path, tmp_path: Path) -> None:
    # The two documents are read at once; when both are rejected, the source's rejection
    # is the one reported, in Python as in the CLI (the oracle).
    cases = [("[1", '{"model_id": "m"}'), ('{"model_id": "m"}', "[1")]
    for source, target in cases:
        (tmp_path / "s.json").write_text(source)
        (tmp_path / "t.json").write_text(target)
        with pytest.raises(wm.ManifestError) as raised:
            wm.plan(source, target)
        done = subprocess.run(
            [cli, "plan", tmp_path / "s.json", tmp_path / "t.json"],
            capture_output=True, text=True,
        )
        assert done.returncode != 0
        assert f"error[{raised.value.code}]" in done.stderr, (source, target, done.stderr)
        assert raised.value.code == ("invalid_json" if source == "[1" else "fields_mismatch")


def replicated(copies: int) -> str:
    """A placement of one 8x4 u16 tensor held whole by DP ranks 0..copies, rows cut in 8."""
    fragments = [{"aliases": [], "global_offset": [i, 0], "local_shape": [1, 4], "nbytes": 8,
                  "placement_fragment_id": f"d{dp}/{i}", "rank": {"dp": dp, "ep": 0, "pp": 0, "tp": 0},
                  "tensor_id": "w"} for dp in range(copies) for i in range(8)]
    tensor = {"dtype": "u16", "expert_id": None, "global_shape": [8, 4], "itemsize": 2, "layer_id": None,
              "layout_fingerprint": "fp", "partition_dim": 0, "shard_dims": [0], "tensor_id": "w"}
    return json.dumps({"fragments": fragments, "model_id": "m", "placement_id": None, "revision": "r",
                       "tensors": [tensor]})


def test_spread_reads_every_source_replica_and_balances_hosts_first() -> None:
    # Four whole copies into two: balanced reads DP 0 and 1 only; spread reads each copy
    # for a quarter; with DP 0-2 on host "a" and DP 3 on "b", hosts send 32 bytes each.
    source, target = replicated(4), replicated(2)

    def sent(reshard: wm.Plan) -> dict[int, int]:
        by_dp: dict[int, int] = {}
        for region in reshard.regions:
            dp = int(region.source_fragment_id[1])
            by_dp[dp] = by_dp.get(dp, 0) + region.nbytes
        return by_dp

    assert sent(wm.plan(source, target)) == {0: 64, 1: 64}
    assert sent(wm.plan(source, target, replica_choice="spread")) == {0: 32, 1: 32, 2: 32, 3: 32}
    hosts = {(dp, 0, 0, 0): "a" if dp < 3 else "b" for dp in range(4)}
    by_dp = sent(wm.plan(source, target, replica_choice="spread", source_hosts=hosts))
    assert by_dp[3] == 64 and sum(by_dp[dp] for dp in range(3)) == 64, by_dp
    with pytest.raises(ValueError, match="replica_choice"):
        wm.plan(source, target, replica_choice="nearest")
    with pytest.raises(ValueError, match="source_hosts"):
        wm.plan(source, target, source_hosts=hosts)
