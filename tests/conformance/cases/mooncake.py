"""mooncake/: Mooncake's formats (contract §20) as corpus operations: `mooncake.validate`
(a `WeightPlacementManifest` read by §20.3 and written by §20.5) and `mooncake.storage` (a
Store `WeightManifest`, §20.6).

The expectations are upstream's own answers, recorded in `tests/mooncake/corpus/` by
`tests/mooncake/generate.py` with upstream's wheel (`mooncake.reshard` 0.3.13; its `--check`
runs in `make test`): for an accepted text the bytes upstream writes back and its ids, for a
rejected one the code its message maps to and, where the mutation itself says which value
it broke, the pointer. This module only renders them as fixtures (standard library only).
The text goes in the input member `mooncake` (not `document`): a rejection's pointer is
compared where upstream's record gives one.
"""

from __future__ import annotations

import json
import re

from cases.common import _add
from oracle.core import ROOT, cj
from oracle.mooncake import ImportRejected, import_placement, this_planners_form

CORPUS = ROOT / "tests" / "mooncake" / "corpus"


def _case_id(kind: str, upstream_id: str) -> str:
    name = re.sub(r"[^a-z0-9.-]+", "-", upstream_id.lower()).strip("-")
    return f"mooncake/{kind}-{name}"


def cases_mooncake() -> None:
    placement = json.loads((CORPUS / "placement.json").read_text(encoding="utf-8"))["cases"]
    storage = json.loads((CORPUS / "storage.json").read_text(encoding="utf-8"))["cases"]
    assert len(placement) >= 200 and len(storage) >= 100, "the Mooncake oracle corpus is missing"
    for kind, op, cases in (("placement", "mooncake.validate", placement), ("storage", "mooncake.storage", storage)):
        for case in cases:
            expect = case["expect"]
            if expect["ok"]:
                if op == "mooncake.validate":
                    result = {k: expect[k] for k in ("canonical", "placement_id", "digest", "topology_id")}
                else:
                    result = {"mooncake_text": expect["text"], "digest": expect["digest"]}
                out = {"ok": True, **result}
                description = f"Upstream's wheel accepts {case['id']}: the bytes it writes back and its ids."
            else:
                out = {"ok": False, "code": expect["code"]}
                if "pointer" in expect:
                    out["path"] = expect["pointer"]
                message = expect["upstream_message"].replace("\n", " ")[:160]
                description = f"Upstream's wheel rejects {case['id']} ({message!r})."
                if not description.endswith("."):
                    description += "."
            _add(_case_id(kind, case["id"]), op, description, {"mooncake": case["input"]}, out, ("mooncake",))
    cases_mooncake_export()
    cases_mooncake_export_unsupported()
    cases_mooncake_import()
    cases_mooncake_plan()
    cases_mooncake_binding()


def _ours(theirs: dict) -> str:
    """Upstream's accepted placement restated in this contract's format (an input, built here
    by the letter of §20.7, never by this implementation): resource_id is model_id, the
    descriptors and fragments are kept."""
    tensors = [
        {"tensor_id": t["tensor_id"], "global_shape": t["global_shape"], "dtype": t["dtype"],
         "itemsize": t["itemsize"], "partition_dim": t["shard_dims"][0] if len(t["shard_dims"]) == 1 else None,
         "shard_dims": t["shard_dims"], "layer_id": t["layer_id"], "expert_id": t["expert_id"],
         "layout_fingerprint": t["layout_fingerprint"]}
        for t in theirs["tensors"]
    ]
    fragments = [
        {k: f[k] for k in ("placement_fragment_id", "tensor_id", "global_offset", "local_shape", "nbytes", "rank",
                           "aliases")}
        for part in theirs["parts"] for f in part["fragments"]
    ]
    return json.dumps({"model_id": theirs["resource_id"], "revision": theirs["revision"], "placement_id": None,
                       "tensors": tensors, "fragments": fragments}, ensure_ascii=False)


def _expressible(theirs: dict) -> bool:
    """Whether our contract holds the placement too (§20.7): no stage ids (ours has none), one
    box per tensor and rank, and no cut in a dim that is not a shard dim."""
    shards = {t["tensor_id"]: (set(t["shard_dims"]), t["global_shape"]) for t in theirs["tensors"]}
    seen = set()
    for part in theirs["parts"]:
        for f in part["fragments"]:
            if f.get("pipeline_stage_id") is not None:
                return False
            key = (f["tensor_id"], tuple(sorted(f["rank"].items())))
            if key in seen:
                return False
            seen.add(key)
            dims, shape = shards[f["tensor_id"]]
            if any(d not in dims and (f["global_offset"][d] != 0 or f["local_shape"][d] != shape[d])
                   for d in range(len(shape))):
                return False
    return True


def cases_mooncake_export() -> None:
    """`mooncake.export` on every placement upstream accepted that ours can hold: with
    upstream's topology, names, generation, set id and axes as overrides the export is
    upstream's own bytes; for the placements upstream's constructors built (not the
    mutants, whose axes upstream accepts in more than one spelling) also with the axes
    inferred."""
    placement = json.loads((CORPUS / "placement.json").read_text(encoding="utf-8"))["cases"]
    count = 0
    for case in placement:
        expect = case["expect"]
        if not expect["ok"]:
            continue
        theirs = json.loads(case["input"])
        if not _expressible(theirs):
            continue
        t = theirs["topology"]
        overrides = {
            "weight_generation": theirs["weight_generation"],
            "placement_set_id": theirs["placement_set_id"],
            "sizes": {k: t[f"{k}_size"] for k in ("tp", "pp", "ep", "dp")},
            "participants": t["participants"],
        }
        out = {"ok": True, **{k: expect[k] for k in ("canonical", "placement_id", "digest", "topology_id")}}
        given = {**overrides, "parallel_axes": {x["tensor_id"]: x["parallel_axes"] for x in theirs["tensors"]}}
        variants = [("given", given, "upstream's topology, names, generation, set id and axes given")]
        if not case["id"].startswith("ok/mutant/"):
            variants.append(("inferred", overrides, "the axes inferred"))
        for name, given_overrides, how in variants:
            _add(_case_id(f"export-{name}", case["id"]), "mooncake.export",
                 f"Exporting {case['id']} restated in this contract's format, with {how}, writes upstream's bytes.",
                 {"document": _ours(theirs), "overrides": json.dumps(given_overrides, ensure_ascii=False)},
                 out, ("mooncake",))
            count += 1
    assert count >= 100, f"only {count} export fixtures"
    # Overrides that §20.7 rejects (mooncake_export_override_invalid, at the override): a
    # member the overrides document does not have, an axis Mooncake does not have.
    first = next(c for c in placement if c["id"] == "ok/tp2")
    for name, overrides, pointer in (("unknown-member", {"tp_size": 2}, "/tp_size"),
                                     ("unknown-axis", {"sizes": {"cp": 2}}, "/sizes/cp")):
        _add(f"mooncake/export-reject-override-{name}", "mooncake.export",
             f"§20.7: the override {json.dumps(overrides)} is not one the export knows.",
             {"document": _ours(json.loads(first["input"])), "overrides": json.dumps(overrides)},
             {"ok": False, "code": "mooncake_export_override_invalid", "path": pointer}, ("mooncake",))


def _regions(regions: list[dict]) -> str:
    """The regions as `mooncake.plan` gives them: canonical JSON, by target_fragment_id, then
    overlap_offset (upstream's own order)."""
    return cj(sorted(regions, key=lambda r: (r["target_fragment_id"], r["overlap_offset"])))


def cases_mooncake_plan() -> None:
    """`mooncake.plan`: upstream's `plan_placement_transfer` (and, from a Store manifest,
    `plan_stored_transfer_to_target_placement`) between the layouts of
    `tests/mooncake/corpus/plans.json`: its regions, its generation rejections, and its
    readers' rejections of either side. For the 3-D and 4-D tensors of `nd_cases` the loops
    are upstream's rewritten in this planner's form (§20.9; `oracle.mooncake`)."""
    doc = json.loads((CORPUS / "plans.json").read_text(encoding="utf-8"))
    layouts = doc["layouts"]
    count = 0
    for kind, cases, form in (("plan", doc["cases"], lambda r: r), ("plan-nd", doc["nd_cases"], this_planners_form)):
        for case in cases:
            how = "upstream's regions" if form is not this_planners_form else \
                "upstream's regions, their loops in this planner's form (§20.9)"
            _add(_case_id(kind, case["id"].replace("->", "-to-")), "mooncake.plan",
                 f"Planning {case['source']} -> {case['target']} gives {how}.",
                 {"source": layouts[case["source"]], "target": layouts[case["target"]]},
                 {"ok": True, "mooncake_plan": _regions([form(r) for r in case["regions"]])}, ("mooncake",))
            count += 1
    for name, case in sorted(doc["generations"].items()):
        expect = case["expect"]
        if expect["ok"]:
            continue  # the same pairs as cases above, whose regions are recorded there
        _add(_case_id("plan-generation", name.replace("->", "-to-")), "mooncake.plan",
             f"Upstream rejects planning {case['source']} -> {case['target']}: the weight generations differ.",
             {"source": layouts[case["source"]], "target": layouts[case["target"]]},
             {"ok": False, "code": expect["code"], "path": expect["pointer"]}, ("mooncake",))
        count += 1
    # A side upstream's reader rejects: its code and pointer (the source is read first).
    placement = json.loads((CORPUS / "placement.json").read_text(encoding="utf-8"))["cases"]
    good = layouts["tp2-pp1-ep1-dp1"]
    for case in [c for c in placement if not c["expect"]["ok"] and "pointer" in c["expect"]][:6:2]:
        expect = case["expect"]
        for side, inputs in (("source", {"source": case["input"], "target": good}),
                             ("target", {"source": good, "target": case["input"]})):
            _add(_case_id(f"plan-reject-{side}", case["id"]), "mooncake.plan",
                 f"A {side} upstream's reader rejects ({case['id']}) is rejected with its code and pointer.",
                 inputs, {"ok": False, "code": expect["code"], "path": expect["pointer"]}, ("mooncake",))
            count += 1
    assert count >= 60, f"only {count} plan fixtures"


def cases_mooncake_import() -> None:
    """`mooncake.import` (§20.7): every placement upstream accepted, imported by the
    oracle's mapping written from §20.7 and §8.2 (`oracle.mooncake.import_placement`), or
    rejected with this contract's code where our placement cannot hold it; two of upstream's
    rejections of each code (the import reads by §20.3 first); and this contract's own
    placement, which is not Mooncake's (§20.1)."""
    placement = json.loads((CORPUS / "placement.json").read_text(encoding="utf-8"))["cases"]
    count = 0
    per_code: dict[str, int] = {}
    for case in placement:
        expect = case["expect"]
        if expect["ok"]:
            try:
                ours = import_placement(json.loads(case["input"]))
                out = {"ok": True, **{k: ours[k] for k in ("canonical", "placement_id", "digest")}}
                description = f"Importing {case['id']}, which upstream accepts, gives this contract's placement."
            except ImportRejected as e:
                out = {"ok": False, "code": e.code}
                description = (f"Upstream accepts {case['id']}, but this contract's placement cannot hold it "
                               f"(§8.2, {e.code}).")
        else:
            if per_code.get(expect["code"], 0) >= 2:
                continue
            per_code[expect["code"]] = per_code.get(expect["code"], 0) + 1
            out = {"ok": False, "code": expect["code"]}
            if "pointer" in expect:
                out["path"] = expect["pointer"]
            description = f"Upstream's wheel rejects {case['id']}: so does the import, read by §20.3 first."
        _add(_case_id("import", case["id"]), "mooncake.import", description, {"mooncake": case["input"]}, out,
             ("mooncake",))
        count += 1
    first = next(c for c in placement if c["id"] == "ok/tp2")
    _add("mooncake/import-reject-our-format", "mooncake.import",
         "This contract's placement given to the import is not Mooncake's (§20.1: fields_mismatch at the root).",
         {"mooncake": _ours(json.loads(first["input"]))}, {"ok": False, "code": "fields_mismatch", "path": ""},
         ("mooncake",))
    assert count >= 100, f"only {count} import fixtures"


def cases_mooncake_binding() -> None:
    """`mooncake.binding` (§20.10): every set of runtime bindings of
    `tests/mooncake/corpus/bindings.json` checked against its placement, with upstream's
    answer (`validate_runtime_bindings`: accepted, or the code its message maps to)."""
    doc = json.loads((CORPUS / "bindings.json").read_text(encoding="utf-8"))
    for case in doc["cases"]:
        expect = case["expect"]
        if expect["ok"]:
            out = {"ok": True}
            description = f"Upstream's wheel accepts the bindings {case['id']}."
        else:
            out = {"ok": False, "code": expect["code"]}
            message = expect["upstream_message"].replace("\n", " ")[:120]
            description = f"Upstream's wheel rejects the bindings {case['id']} ({message!r})."
        _add(_case_id("binding", case["id"]), "mooncake.binding", description,
             {"mooncake": case["input"], "placement": doc["placements"][case["placement"]]}, out, ("mooncake",))
    assert len(doc["cases"]) >= 25


def cases_mooncake_export_unsupported() -> None:
    """`mooncake.export` of placements Mooncake cannot say (§20.7: "a shard dim that no tp
    or ep coordinate decides ... is mooncake_export_unsupported", at `/tensors/i`, the same
    tensor in both documents): a dim-1 shard split over ep (Mooncake splits ep only on dim 0)
    and a dim-0 shard split over dp. The tensors are listed in tensor_id order, so the
    pointer names the same tensor in the input."""
    def tensor(tid, shape, shard_dims):
        return {"tensor_id": tid, "global_shape": shape, "dtype": "bfloat16", "itemsize": 2,
                "partition_dim": shard_dims[0] if len(shard_dims) == 1 else None, "shard_dims": shard_dims,
                "layer_id": None, "expert_id": None, "layout_fingerprint": "row-major"}

    def fragment(fid, tid, offset, shape, **rank):
        return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": offset, "local_shape": shape,
                "nbytes": 2 * shape[0] * (shape[1] if len(shape) > 1 else 1),
                "rank": {"dp": 0, "tp": 0, "pp": 0, "ep": 0, **rank}, "aliases": []}

    ep_dim1 = {"model_id": "m", "revision": "r", "placement_id": None,
               "tensors": [tensor("a", [4], []), tensor("w", [4, 8], [1])],
               "fragments": [fragment("a0", "a", [0], [4], ep=0), fragment("a1", "a", [0], [4], ep=1),
                             fragment("w0", "w", [0, 0], [4, 4], ep=0), fragment("w1", "w", [0, 4], [4, 4], ep=1)]}
    dp_dim0 = {"model_id": "m", "revision": "r", "placement_id": None,
               "tensors": [tensor("w", [8, 4], [0])],
               "fragments": [fragment("w0", "w", [0, 0], [4, 4], dp=0), fragment("w1", "w", [4, 0], [4, 4], dp=1)]}
    for name, doc, pointer, how in (("ep-on-dim-1", ep_dim1, "/tensors/1", "dim 1 split over ep"),
                                    ("dp-split", dp_dim0, "/tensors/0", "dim 0 split over dp")):
        _add(f"mooncake/export-reject-unsupported-{name}", "mooncake.export",
             f"§20.7: a shard dim that no tp or ep coordinate decides ({how}) is not Mooncake's.",
             {"document": json.dumps(doc)}, {"ok": False, "code": "mooncake_export_unsupported", "path": pointer},
             ("mooncake",))
