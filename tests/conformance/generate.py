#!/usr/bin/env python3
"""Generate the language-neutral conformance corpus (tests/conformance/<group>/<case>.json).

    python3 tests/conformance/generate.py          # (re)write every fixture, coverage.json
    python3 tests/conformance/generate.py --check  # exit 1 if any file differs, is missing or extra

Python 3.11 standard library only. The generator is split in three parts: `oracle/` (the
independent Python implementation of the contract), `cases/` (one module per group of
fixtures, building the cases) and this file (the registry's checks, the fixture schema check,
writing and --check). Expected values are derived independently of any implementation of the
contract (docs/contract.md):

* a rejection's `code` and `path` come from reading the contract (rule, evaluation order,
  §15 error locations) and are written down by hand in each case below;
* a success's `canonical`, `placement_id`, `digest`, `runtime`, `binding` and `generation`
  come from the oracle (`oracle/`), which only has to handle VALID inputs. The oracle
  is checked against every reference vector in tests/vectors/reference/ on every run.

Documents are built as Python values and rendered with `render()`, which can splice raw
JSON text (`Raw`) and write objects member by member (`Pairs`, for duplicate keys), so every
byte that matters (number spelling, escapes, duplicates) is explicit in the case.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ next to the corpus
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases.analysis import cases_coverage, cases_plan  # noqa: E402
from cases.common import CASES  # noqa: E402
from cases.content import cases_content  # noqa: E402
from cases.mooncake import cases_mooncake  # noqa: E402
from cases.inventories import cases_binding_inventory, cases_placement_inventory  # noqa: E402
from cases.limits import cases_limits  # noqa: E402
from cases.manifests import cases_binding, cases_runtime  # noqa: E402
from cases.placement import cases_placement  # noqa: E402
from cases.plan_bind import cases_plan_bind, derived_vectors  # noqa: E402
from cases.project_bind import cases_bind, cases_project  # noqa: E402
from cases.quantize import cases_quantize  # noqa: E402
from cases.reader import cases_reader  # noqa: E402
from cases.reference import cases_reference  # noqa: E402
from cases.runtime_inventory import cases_runtime_inventory  # noqa: E402
from oracle.adapter import minilm_vectors  # noqa: E402
from oracle.analysis import ADDED_CODES  # noqa: E402
from oracle.core import ROOT, U64, codes_file  # noqa: E402
from oracle.locate import EXEMPT  # noqa: E402
from oracle.reference import check_oracle_against_reference  # noqa: E402


# ----------------------------------------------------------------------------------------
# Coverage, schema check, writing

GROUPS = ("placement", "placement_inventory", "runtime_inventory", "binding_inventory", "project",
          "bind", "runtime", "binding", "reader", "reference", "coverage", "plan", "quantize", "plan_bind", "content", "mooncake")
BUILDERS = {
    "placement": cases_placement, "placement_inventory": cases_placement_inventory,
    "runtime_inventory": cases_runtime_inventory, "binding_inventory": cases_binding_inventory,
    "project": cases_project, "bind": cases_bind, "runtime": cases_runtime, "binding": cases_binding,
    "reader": cases_reader, "reference": cases_reference, "coverage": cases_coverage, "plan": cases_plan,
    "quantize": cases_quantize, "plan_bind": cases_plan_bind, "content": cases_content, "mooncake": cases_mooncake,
}


def contract_table() -> list[str]:
    """Every code of the §18 table of docs/contract.md, the contract's and then this
    implementation's (after "### Codes added by this implementation")."""
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    table = text[text.index("## 18. Error codes"):]
    return re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M)


def api_only_codes() -> dict[str, str]:
    """The codes no conformance operation can raise, with the reason."""
    return {c["code"]: c["api_only"] for c in codes_file() if "api_only" in c}


OPS = {"placement.parse", "placement.from_inventory", "runtime.from_inventory", "binding.from_inventory",
       "project.placement", "project.binding", "bind", "runtime.parse", "binding.parse", "coverage", "plan",
       "plan.bind", "content.partial", "content.block_values", "content.combine", "content.manifest",
       "mooncake.validate", "mooncake.storage", "mooncake.export", "mooncake.import", "mooncake.plan",
       "mooncake.binding"}
INPUT_KEYS = {"document", "placement", "binding", "address_semantics", "placement_id", "source", "target",
              "require_complete", "max_regions", "max_segments", "plan", "source_binding", "target_binding",
              "source_generation", "target_generation", "tensor_id", "global_shape", "itemsize", "block_elements",
              "global_offset", "local_shape", "bytes", "fragments", "mooncake", "overrides", "quantization"}
EXPECT_KEYS = {"ok", "code", "path", "canonical", "placement_id", "digest", "runtime", "binding", "generation",
               "report", "plan", "plan_id", "bound_plan", "bound_plan_id", "partial", "values", "content_manifest",
               "topology_id", "mooncake_text", "mooncake_plan"}


# The codes whose rejection of a document has no pointer into it; the fixture schema's
# top-level `if` lists the same (checked in main).
UNLOCATED_CODES = set(EXEMPT)


def check_schema_lists_unlocated_codes() -> None:
    schema = json.loads((ROOT / "schema" / "conformance-fixture.schema.json").read_text(encoding="utf-8"))
    listed = set(schema["if"]["properties"]["expect"]["properties"]["code"]["not"]["enum"])
    if listed != UNLOCATED_CODES:
        sys.exit(f"generate.py: the fixture schema lists {sorted(listed)} as unlocated, oracle/locate.py {sorted(UNLOCATED_CODES)}")


def check_fixture(cid: str, fx: dict) -> None:
    """A hand-written check of schema/conformance-fixture.schema.json."""
    def need(cond, what):
        if not cond:
            sys.exit(f"generate.py: {cid}: not valid against the fixture schema: {what}")
    need(set(fx) <= {"description", "op", "input", "expect", "tags"}, "top-level keys")
    need({"description", "op", "input", "expect"} <= set(fx), "required keys")
    need(isinstance(fx["description"], str), "description")
    need(fx["op"] in OPS, "op")
    need(set(fx["input"]) <= INPUT_KEYS, "input keys")
    for k, v in fx["input"].items():
        if k == "require_complete":
            need(v is None or isinstance(v, bool), f"input.{k}")
        elif k in ("max_regions", "max_segments", "source_generation", "target_generation"):
            need(v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64), f"input.{k}")
        elif k in ("itemsize", "block_elements"):
            need(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64, f"input.{k}")
        elif k in ("global_shape", "global_offset", "local_shape"):
            need(isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= U64
                                             for x in v), f"input.{k}")
        elif k == "bytes":
            need(isinstance(v, str) and re.fullmatch(r"([0-9a-f]{2})*", v), f"input.{k}")
        else:
            need(isinstance(v, str) or (v is None and k in ("address_semantics", "placement_id")), f"input.{k}")
    if fx["op"] == "bind":
        need("placement" in fx["input"] and "binding" in fx["input"], "op inputs")
    elif fx["op"] == "plan":
        need("source" in fx["input"] and "target" in fx["input"], "op inputs")
    elif fx["op"] == "plan.bind":
        need({"plan", "source_binding", "target_binding"} <= set(fx["input"]), "op inputs")
    elif fx["op"] in ("content.partial", "content.block_values"):
        need({"tensor_id", "global_shape", "itemsize", "block_elements", "global_offset", "local_shape",
              "bytes"} <= set(fx["input"]), "op inputs")
    elif fx["op"] in ("mooncake.validate", "mooncake.storage", "mooncake.import"):
        need("mooncake" in fx["input"], "op inputs")
    elif fx["op"] == "mooncake.plan":
        need("source" in fx["input"] and "target" in fx["input"], "op inputs")
    elif fx["op"] == "mooncake.binding":
        need("mooncake" in fx["input"] and "placement" in fx["input"], "op inputs")
    elif fx["op"] == "mooncake.export":
        need("document" in fx["input"], "op inputs")
    elif fx["op"] == "content.combine":
        need({"tensor_id", "global_shape", "itemsize", "block_elements", "fragments"} <= set(fx["input"]), "op inputs")
    else:
        need("document" in fx["input"], "op inputs")
    e = fx["expect"]
    need(set(e) <= EXPECT_KEYS and isinstance(e.get("ok"), bool), "expect keys")
    if e["ok"]:
        need("code" not in e and "path" not in e, "ok forbids code/path")
    else:
        need(isinstance(e.get("code"), str) and re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", e["code"]), "code")
    for k in ("path", "canonical", "placement_id", "digest", "runtime", "binding", "report", "plan", "plan_id",
              "bound_plan", "bound_plan_id", "partial", "values", "content_manifest", "topology_id", "mooncake_text",
              "mooncake_plan"):
        need(k not in e or isinstance(e[k], str), k)
    need("generation" not in e or e["generation"] is None or (isinstance(e["generation"], int) and 0 <= e["generation"] <= U64), "generation")
    need("tags" not in fx or all(isinstance(t, str) for t in fx["tags"]), "tags")
    located = "document" in fx["input"] and fx["input"].get("placement_id") is None and not e["ok"] \
        and e["code"] not in UNLOCATED_CODES
    need(not located or "path" in e, "a rejection of a document carries its path")


def build() -> dict[str, str]:
    """All output files (path relative to tests/conformance -> text)."""
    check_oracle_against_reference()
    CASES.clear()
    for group in GROUPS:
        BUILDERS[group]()
    cases_limits()
    files = {}
    coverage: dict[str, list[str]] = {}
    ops_seen: dict[str, set] = {op: set() for op in OPS}
    for cid, fx in sorted(CASES.items()):
        assert cid.split("/")[0] in GROUPS, cid
        check_fixture(cid, fx)
        ops_seen[fx["op"]].add(fx["expect"]["ok"])
        if not fx["expect"]["ok"]:
            coverage.setdefault(fx["expect"]["code"], []).append(cid)
        files[cid + ".json"] = json.dumps(fx, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    for op, seen in ops_seen.items():
        assert seen == {True, False}, f"op {op} lacks accepting or rejecting cases"
    listed, api_only = codes_file(), api_only_codes()
    codes = [c["code"] for c in listed if c["origin"] == "contract"]
    assert len(codes) == 57, f"expected the 57 codes of §18, found {len(codes)}"
    assert contract_table() == [c["code"] for c in listed], "docs/contract.md §18 rows are not schema/codes.json's codes in order"
    raised_by = {c["code"]: set(c["raised_by"]) for c in listed}
    for cid, fx in ((cid, fx) for cid, fx in CASES.items() if not fx["expect"]["ok"]):
        code = fx["expect"]["code"]
        assert code in raised_by, f"{cid}: {code} is not a code of schema/codes.json"
        assert fx["op"] in raised_by[code], f"{cid}: schema/codes.json does not list {fx['op']} as raising {code}"
    codes = codes + ADDED_CODES
    for code in coverage:
        assert code in codes, f"fixture code {code} is not in contract §18 nor added by this implementation"
    for code in codes:
        if code in api_only:
            assert code not in coverage, f"{code} is listed as API-only but a fixture expects it"
        else:
            assert len(coverage.get(code, [])) >= 2, f"code {code} has fewer than two fixtures: {coverage.get(code)}"
    cov = {"api_only": api_only, "codes": {c: coverage.get(c, []) for c in codes}}
    files["coverage.json"] = json.dumps(cov, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return files


def existing_files() -> set[str]:
    out = {"coverage.json"} if (HERE / "coverage.json").exists() else set()
    for group in GROUPS:
        d = HERE / group
        if d.is_dir():
            out |= {f"{group}/{p.name}" for p in d.iterdir() if p.suffix == ".json"}
    return out


def vectors() -> dict[str, str]:
    """The oracle-derived vector files outside the corpus (path from the repository root ->
    text): the plan-bind vectors' plan and bound plan, and the MiniLM adapter ids."""
    return {**derived_vectors(), **minilm_vectors()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the checked-in files differ from what would be generated")
    args = ap.parse_args()
    check_schema_lists_unlocated_codes()
    files = build()
    derived = vectors()
    have = existing_files()
    if args.check:
        bad_files = [f"tests/conformance/{p}" for p in sorted(files)
                     if not (HERE / p).exists() or (HERE / p).read_text(encoding="utf-8") != files[p]]
        bad_files += [p for p in sorted(derived)
                      if not (ROOT / p).exists() or (ROOT / p).read_text(encoding="utf-8") != derived[p]]
        extra = sorted(have - set(files))
        for p in bad_files:
            print(f"differs or missing: {p}")
        for p in extra:
            print(f"extra: tests/conformance/{p}")
        if bad_files or extra:
            print("run: python3 tests/conformance/generate.py")
            return 1
        print(f"{len(files) - 1} fixtures and {len(derived)} derived vectors up to date")
        return 0
    for p in sorted(have - set(files)):
        (HERE / p).unlink()
    outputs = {HERE / p: text for p, text in files.items()} | {ROOT / p: text for p, text in derived.items()}
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    counts = {}
    for p in files:
        if "/" in p:
            counts[p.split("/")[0]] = counts.get(p.split("/")[0], 0) + 1
    print(", ".join(f"{g}: {counts.get(g, 0)}" for g in GROUPS) + f"; total {len(files) - 1}; {len(derived)} derived vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
