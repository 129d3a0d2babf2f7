"""The reference vectors (tests/vectors/reference/): loading them, and the proof that the
oracle reproduces every one."""

from __future__ import annotations

import json
import sys

from oracle.core import (ROOT, bind, binding_from_inventory, cj, placement_from_inventory,
                         placement_from_wire, project_binding, project_placement,
                         runtime_from_inventory, runtime_from_wire, sha)

REF = ROOT / "tests" / "vectors" / "reference"


def ref_text(name: str) -> str:
    return (REF / name).read_text(encoding="utf-8")


def ref_json(name: str):
    return json.loads(ref_text(name))


MODELS = ("01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases")
WORKED = ("w1", "w2", "w3", "empty")


def check_oracle_against_reference() -> None:
    ids = ref_json("ids.json")

    def expect(cond, what):
        if not cond:
            sys.exit(f"generate.py: oracle does not reproduce the reference vector: {what}")

    for m in MODELS:
        wire = ref_text(f"{m}.placement.json")
        for src in (f"{m}.placement.json", f"{m}.placement.pretty.json"):
            p = placement_from_wire(ref_json(src))
            expect(p["canonical"] == wire, f"{src} canonical")
            expect(p["placement_id"] == ids[m]["placement_id"], f"{src} placement_id")
            expect(p["digest"] == ids[m]["digest"], f"{src} digest")
            expect(p["_payload"] == ref_text(f"{m}.placement-id-payload.json"), f"{src} payload")
        rt = runtime_from_inventory(ref_json(f"{m}.runtime-inventory.json"))
        expect(cj(rt) == ref_text(f"derived/{m}.runtime.json"), f"{m} runtime.from_inventory")
        expect(cj(runtime_from_wire(json.loads(cj(rt)))) == cj(rt), f"{m} runtime.parse")
        expect(project_placement(rt)["canonical"] == wire, f"{m} project.placement")
        binding = ref_text(f"derived/{m}.binding.json")
        expect(cj(project_binding(rt)) == binding, f"{m} project.binding")
        binv = ref_json(f"{m}.binding-inventory.json")
        expect(cj(binding_from_inventory(binv)) == binding, f"{m} binding.from_inventory")
        bound = cj(bind(json.loads(wire), binv))
        expect(bound == ref_text(f"derived/{m}.bound-runtime.json"), f"{m} bind")
        expect(project_placement(json.loads(bound))["canonical"] == wire, f"{m} re-project")
        for f in ids[m]["fragments"]:
            if f["generated"]:
                expect("logical:" + sha(f["id_payload"]) == f["placement_fragment_id"], f"{m} logical id")
    p01 = placement_from_inventory(ref_json("01_tp_sharded_2d.runtime-inventory.json"))
    expect(p01["canonical"] == ref_text("01_tp_sharded_2d.placement.json"), "01 as placement inventory")
    for w in WORKED:
        e = ref_json(f"{w}.expected.json")
        p = placement_from_wire(ref_json(f"{w}.placement.json"))
        expect(p["canonical"] == ref_text(f"{w}.placement.json") == e["digest_payload"], f"{w} canonical")
        expect((p["placement_id"], p["digest"]) == (e["placement_id"], e["digest"]), f"{w} ids")
        expect(p["_payload"] == e["placement_id_payload"], f"{w} payload")
        for fp in e.get("fragment_id_payloads", []):
            expect("logical:" + sha(fp["payload"]) == fp["placement_fragment_id"], f"{w} logical")
    for w in ("w2", "w3"):
        rt = runtime_from_inventory(ref_json(f"{w}.runtime-inventory.json"))
        expect(cj(rt) == ref_text(f"derived/{w}.runtime.json"), f"{w} runtime")
        expect(project_placement(rt)["canonical"] == ref_text(f"{w}.placement.json"), f"{w} project")
        expect(cj(project_binding(rt)) == ref_text(f"derived/{w}.binding.json"), f"{w} binding")
