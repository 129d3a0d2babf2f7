#!/usr/bin/env python3
"""Generate the Mooncake oracle corpus (tests/mooncake/corpus/*.json) with upstream's own code.

    python tests/mooncake/generate.py          # (re)write the corpus
    python tests/mooncake/generate.py --check  # exit 1 if any file would change

Needs the wheel `mooncake-transfer-engine-non-cuda==0.3.13.post1` (its `mooncake.reshard` is
pure Python). Every expectation is what upstream does with the case's input text:
`weight_placement_from_json` accepts it (then its `weight_placement_to_json` bytes,
`placement_id`, `digest`, `topology_id` are recorded) or rejects it (then its message is
recorded and mapped to this project's code by the table CODES below, one upstream message
family per code). Pointers are written down with the mutation that breaks a value, never
taken from this project's output. The corpus is data only: tests/mooncake_oracle.rs runs it
without the wheel.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mooncake.reshard import weight as mw

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
OUT = HERE / "corpus"
sys.path.insert(0, str(HERE))

from cases.build import bases  # noqa: E402
from cases.common import CASES, RULE_CODES  # noqa: E402
from cases.placement import cases_accepted, cases_coverage, cases_rejected, cases_rules  # noqa: E402
from cases.bindings import BINDINGS, PLACEMENTS, cases_bindings  # noqa: E402
from cases.plans import GENERATIONS, LAYOUTS, ND_PLANS, PLANS, cases_generations, cases_nd_plans, cases_plans  # noqa: E402
from cases.storage import STORAGE, cases_storage  # noqa: E402


def generate() -> dict[str, str]:
    placements = bases()
    cases_accepted(placements)
    cases_rejected(placements, "tp2")
    cases_rejected(placements, "tp2b")
    cases_coverage(placements)
    cases_rules()
    seen = {}
    for cid, case in CASES.items():
        e = case["expect"]
        key = "ok" if e["ok"] else e["code"]
        seen.setdefault(key, []).append(cid)
    lacking = [code for code in RULE_CODES + ["ok"] if len(seen.get(code, [])) < 2]
    assert not lacking, f"fewer than two cases: {lacking}; counts {dict((k, len(v)) for k, v in seen.items())}"
    assert len(CASES) >= 200, len(CASES)
    cases = [dict(id=cid, **case) for cid, case in sorted(CASES.items())]
    counts = {k: len(v) for k, v in sorted(seen.items())}
    text = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 mooncake.reshard",
                       "counts": counts, "cases": cases}, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    cases_storage()
    scodes = {}
    for cid, case in STORAGE.items():
        e = case["expect"]
        scodes.setdefault("ok" if e["ok"] else e["code"], []).append(cid)
    for code in ["ok", "mooncake_storage_key", "mooncake_storage_duplicate_geometry", "mooncake_storage_not_covered",
                 "mooncake_storage_alias", "mooncake_storage_object_overlap", "mooncake_resource_kind"]:
        assert len(scodes.get(code, [])) >= 2, f"storage {code}: {scodes.get(code)}"
    stext = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 mooncake.reshard.weight.storage_manifest",
                        "counts": {k: len(v) for k, v in sorted(scodes.items())},
                        "cases": [dict(id=cid, **case) for cid, case in sorted(STORAGE.items())]},
                       indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    cases_plans()
    cases_generations()
    cases_nd_plans()
    assert sorted(g["expect"]["ok"] for g in GENERATIONS.values()) == [False] * 3 + [True] * 3, GENERATIONS
    ptext = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 plan_placement_transfer",
                        "layouts": LAYOUTS, "generations": GENERATIONS,
                        "cases": [dict(id=cid, **case) for cid, case in sorted(PLANS.items())],
                        "nd_cases": [dict(id=cid, **case) for cid, case in sorted(ND_PLANS.items())]},
                       indent=None, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    cases_bindings()
    bcodes = sorted({c["expect"].get("code", "ok") for c in BINDINGS.values()})
    assert len(BINDINGS) >= 25 and "ok" in bcodes, bcodes
    btext = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 validate_runtime_bindings",
                        "placements": {n: mw.weight_placement_to_json(p) for n, p in PLACEMENTS.items()},
                        "cases": [dict(id=cid, **case) for cid, case in sorted(BINDINGS.items())]},
                       indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    return {"placement.json": text, "storage.json": stext, "plans.json": ptext, "bindings.json": btext}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if any file would change")
    args = parser.parse_args()
    files = generate()
    bad = []
    for name, text in files.items():
        path = OUT / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                bad.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if bad:
        print("tests/mooncake/generate.py --check: would change: " + ", ".join(bad), file=sys.stderr)
        return 1
    print(f"mooncake corpus: {len(CASES)} placement cases, {len(STORAGE)} storage cases, "
          f"{len(PLANS)} plans ({sum(len(c['regions']) for c in PLANS.values())} regions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
