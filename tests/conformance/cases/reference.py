"""reference/ : every reference vector through every operation that applies."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# reference/ : every reference vector through every operation that applies

def cases_reference():
    g = "reference/"
    for mname in MODELS:
        short = mname.replace("_", "-")
        wire = ref_text(f"{mname}.placement.json")
        ids = ref_json("ids.json")[mname]
        pexp = {"canonical": wire, "placement_id": ids["placement_id"], "digest": ids["digest"]}
        rinv, binv = ref_text(f"{mname}.runtime-inventory.json"), ref_text(f"{mname}.binding-inventory.json")
        runtime, binding = ref_text(f"derived/{mname}.runtime.json"), ref_text(f"derived/{mname}.binding.json")
        bound = ref_text(f"derived/{mname}.bound-runtime.json")
        tags = ["reference", "realistic"]
        ok(f"{g}{short}-placement-parse", "placement.parse", f"Reference placement {mname} parses to its own bytes, id and digest.", tags, pexp, document=wire)
        ok(f"{g}{short}-placement-parse-pretty", "placement.parse", f"The indented reference placement {mname} gives the canonical bytes, id and digest.", tags, pexp,
           document=ref_text(f"{mname}.placement.pretty.json"))
        ok(f"{g}{short}-runtime-from-inventory", "runtime.from_inventory", f"The reference runtime inventory {mname} gives the derived runtime JSON.", tags,
           {"runtime": runtime}, document=rinv)
        ok(f"{g}{short}-project-placement", "project.placement", f"Projecting the reference runtime inventory {mname} gives the reference placement.", tags, pexp, document=rinv)
        ok(f"{g}{short}-project-placement-with-id", "project.placement", f"Projecting {mname} with its placement_id as argument gives the reference placement.", tags, pexp,
           document=rinv, placement_id=ids["placement_id"])
        ok(f"{g}{short}-project-binding", "project.binding", f"The binding projection of {mname} gives the derived binding JSON.", tags, {"binding": binding}, document=rinv)
        ok(f"{g}{short}-binding-from-inventory", "binding.from_inventory", f"The reference binding inventory {mname} gives the derived binding JSON.", tags,
           {"binding": binding}, document=binv)
        ok(f"{g}{short}-bind", "bind", f"Binding the reference placement {mname} to its binding inventory gives the derived bound runtime JSON.", tags,
           {"runtime": bound}, placement=wire, binding=binv)
        ok(f"{g}{short}-runtime-parse", "runtime.parse", f"The derived runtime JSON of {mname} parses back to itself.", tags, {"runtime": runtime}, document=runtime)
        ok(f"{g}{short}-bound-runtime-parse", "runtime.parse", f"The derived bound runtime JSON of {mname} parses back to itself.", tags, {"runtime": bound}, document=bound)
        ok(f"{g}{short}-binding-parse", "binding.parse", f"The derived binding JSON of {mname} parses back to itself.", tags, {"binding": binding}, document=binding)
    ok(f"{g}01-tp-sharded-2d-placement-from-inventory", "placement.from_inventory",
       "The 01 runtime inventory read as a placement inventory gives the reference placement (§10.5 note).", ["reference"],
       {"canonical": ref_text("01_tp_sharded_2d.placement.json"), "placement_id": ID01["placement_id"], "digest": ID01["digest"]},
       document=ref_text("01_tp_sharded_2d.runtime-inventory.json"))
    for w in WORKED:
        e = ref_json(f"{w}.expected.json")
        pexp = {"canonical": e["digest_payload"], "placement_id": e["placement_id"], "digest": e["digest"]}
        ok(f"{g}{w}-placement-parse", "placement.parse", f"Worked example {w} parses to its own bytes, id and digest.", ["reference"], pexp,
           document=ref_text(f"{w}.placement.json"))
    for w in ("w2", "w3"):
        e = ref_json(f"{w}.expected.json")
        pexp = {"canonical": e["digest_payload"], "placement_id": e["placement_id"], "digest": e["digest"]}
        rinv = ref_text(f"{w}.runtime-inventory.json")
        ok(f"{g}{w}-runtime-from-inventory", "runtime.from_inventory", f"The {w} runtime inventory gives the derived runtime JSON.", ["reference"],
           {"runtime": ref_text(f"derived/{w}.runtime.json")}, document=rinv)
        ok(f"{g}{w}-project-placement", "project.placement", f"Projecting the {w} runtime inventory gives the {w} placement with generated logical ids.", ["reference"], pexp, document=rinv)
        ok(f"{g}{w}-project-binding", "project.binding", f"The binding projection of {w} gives the derived binding JSON.", ["reference"],
           {"binding": ref_text(f"derived/{w}.binding.json")}, document=rinv)
