"""The conformance testee answers the protocol (the full corpus runs from the Rust
runner in `make test`; this checks the protocol's edges)."""

from __future__ import annotations

import json
import subprocess
import sys

from weight_manifest.testing import testee
from conftest import REFERENCE, W1_DIGEST, W1_ID


def ask(request: object) -> dict[str, object]:
    return testee.respond(json.dumps(request))


def test_success_rejection_skip_and_bad_requests() -> None:
    text = (REFERENCE / "w1.placement.json").read_text()
    ok = ask({"id": "a", "op": "placement.parse", "input": {"document": text}})
    assert ok == {"id": "a", "ok": True, "result": {"canonical": text, "placement_id": W1_ID, "digest": W1_DIGEST}}

    rejected = ask({"id": "b", "op": "placement.from_inventory", "input": {"document": "[]"}})
    assert rejected == {
        "id": "b",
        "ok": False,
        "error": {"code": "not_an_object", "message": "placement inventory must be a JSON object", "path": ""},
    }
    assert ask({"id": "c", "op": "coverage.future", "input": {}}) == {"id": "c", "skipped": True}
    missing = ask({"id": "d", "op": "bind", "input": {}})
    assert missing["ok"] is False and missing["error"]["code"] == "bad_request"  # type: ignore[index]
    assert testee.respond("not json")["error"]["code"] == "bad_request"  # type: ignore[index]


def test_process_answers_in_order_and_exits_cleanly() -> None:
    lines = "\n".join(
        json.dumps({"id": str(i), "op": "runtime.from_inventory", "input": {"document": doc}})
        for i, doc in enumerate([(REFERENCE / "w2.runtime-inventory.json").read_text(), "{", ""])
    )
    done = subprocess.run(
        [sys.executable, "-m", "weight_manifest.testing.testee"], input=lines + "\n\n", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in responses] == ["0", "1", "2"]
    assert responses[0]["ok"] is True and responses[0]["result"]["generation"] == 7
    assert [r["error"]["code"] for r in responses[1:]] == ["invalid_json", "invalid_json"]


def test_mooncake_export_answers_upstreams_bytes() -> None:
    from conftest import ROOT

    for name in ("export-given-ok-tp2", "export-reject-override-unknown-member"):
        fx = json.loads((ROOT / "tests" / "conformance" / "mooncake" / f"{name}.json").read_text())
        got = ask({"id": name, "op": fx["op"], "input": fx["input"]})
        expect = fx["expect"]
        if expect["ok"]:
            assert got["result"] == {k: expect[k] for k in ("canonical", "placement_id", "digest", "topology_id")}
        else:
            error = got["error"]
            assert isinstance(error, dict)
            assert (error["code"], error["path"]) == (expect["code"], expect["path"])


def test_mooncake_import_plan_and_binding_answer_upstreams_records() -> None:
    from conftest import ROOT

    names = ("import-ok-tp2-reordered", "import-ok-mutant-tp2-split-replica-in-two", "plan-tp2-pp1-ep1-dp1-to-tp4-pp1-ep1-dp1",
             "plan-nd-nd-tp1-ep1-to-nd-tp2-ep1", "plan-generation-gen1-to-gen2", "binding-tp2-pp1-ep1-dp2-ok",
             "binding-tp2-pp1-ep1-dp2-overlap")
    for name in names:
        fx = json.loads((ROOT / "tests" / "conformance" / "mooncake" / f"{name}.json").read_text())
        got = ask({"id": name, "op": fx["op"], "input": fx["input"]})
        expect = fx["expect"]
        assert got.get("ok") is expect["ok"], (name, got)
        if expect["ok"]:
            assert got["result"] == {k: v for k, v in expect.items() if k != "ok"}, name
        else:
            assert got["error"]["code"] == expect["code"], name
            if "path" in expect:
                assert got["error"]["path"] == expect["path"], name


def test_mooncake_plan_gives_upstreams_regions_as_objects() -> None:
    from conftest import ROOT
    from weight_manifest import mooncake

    fx = json.loads((ROOT / "tests" / "conformance" / "mooncake" / "plan-stored-to-tp2-pp1-ep1-dp1.json").read_text())
    regions = mooncake.plan(fx["input"]["source"], fx["input"]["target"])
    assert regions == json.loads(fx["expect"]["mooncake_plan"])
    assert {r["source_fragment_id"].split("#")[0] for r in regions} == {r["tensor_id"] for r in regions}
