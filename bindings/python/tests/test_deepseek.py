"""The analysis API on the DeepSeek-V3-like workload is the CLI byte for byte.

The debug CLI writes the DeepSeek-V3 placement (61 layers, 256 experts, TP8/EP8/PP4) at
DP2 and DP1 and their runtime inventories (``bench-data``), and projects each inventory to
its binding (``project binding``). Then ``coverage()``, ``plan()`` (DP2 -> DP1 and
DP1 -> DP2) and ``bind_plan()`` give the same JSON as ``coverage -o``, ``plan -o`` and
``plan-bind -o``, and the same plan_id and bound_plan_id as the CLI's ``--format json``
report. The whole model is used (102,704 fragments at DP2): about 20 s with the dev wheel
and the debug CLI on 2 cores. Every file is written under pytest's temporary directory and
removed afterwards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import weight_manifest as wm


class Workload:
    def __init__(self, cli: Path, folder: Path) -> None:
        self.cli = cli
        self.folder = folder

    def path(self, name: str) -> Path:
        return self.folder / name

    def run(self, *args: str | Path) -> dict[str, Any]:
        """Runs the CLI with ``--format json`` and returns its report."""
        done = subprocess.run(
            [str(self.cli), *map(str, args), "--format", "json"], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report: dict[str, Any] = json.loads(done.stdout)
        assert report["ok"] is True
        return report

    def text(self, name: str) -> str:
        return self.path(name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dsv3(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workload]:
    workload = Workload(cli, tmp_path_factory.mktemp("deepseek"))
    for dp in (1, 2):
        for kind, name in (("placement", f"placement-dp{dp}.json"), ("runtime-inventory", f"inventory-dp{dp}.json")):
            subprocess.run(
                [str(cli), "-q", "bench-data", "--model", "deepseek-v3", "--kind", kind, "--dp", str(dp)]
                + ["-o", str(workload.path(name))],
                check=True,
            )
        # Not through run(): with --format json, `project binding` reports the binding on
        # standard output and writes no -o file.
        subprocess.run(
            [str(cli), "-q", "project", "binding", str(workload.path(f"inventory-dp{dp}.json"))]
            + ["-o", str(workload.path(f"binding-dp{dp}.json"))],
            check=True,
        )
    yield workload
    shutil.rmtree(workload.folder)


def test_coverage_is_the_cli_report(dsv3: Workload) -> None:
    report = dsv3.run("coverage", dsv3.path("placement-dp2.json"), "-o", dsv3.path("coverage.json"))
    ours = wm.coverage(dsv3.path("placement-dp2.json"))
    assert ours.to_json() == dsv3.text("coverage.json")
    assert report["tensors"] == report["tensors_complete"] == 45395


@pytest.mark.parametrize(("source", "target"), [(2, 1), (1, 2)])
def test_plan_and_bound_plan_are_the_cli_output(dsv3: Workload, source: int, target: int) -> None:
    src, tgt = dsv3.path(f"placement-dp{source}.json"), dsv3.path(f"placement-dp{target}.json")
    plan_file = dsv3.path(f"plan-{source}-{target}.json")
    planned = dsv3.run("plan", src, tgt, "-o", plan_file)
    plan = wm.plan(src, tgt)
    assert plan.to_json() == plan_file.read_text(encoding="utf-8")
    assert plan.plan_id == planned["plan_id"]

    bound_file = dsv3.path(f"bound-{source}-{target}.json")
    src_binding, tgt_binding = dsv3.path(f"binding-dp{source}.json"), dsv3.path(f"binding-dp{target}.json")
    bound_report = dsv3.run("plan-bind", plan_file, src_binding, tgt_binding, "-o", bound_file)
    bound = wm.bind_plan(plan, src_binding, tgt_binding)
    assert bound.to_json() == bound_file.read_text(encoding="utf-8")
    assert bound.bound_plan_id == bound_report["bound_plan_id"]
    assert bound.plan_id == plan.plan_id
