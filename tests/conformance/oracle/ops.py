"""The expected result fields of a success case, per operation."""

from __future__ import annotations

from oracle.analysis import coverage_report, reshard_plan
from oracle.core import (bind, binding_from_inventory, cj, loads, placement_from_inventory,
                         placement_from_wire, project_binding, project_placement,
                         runtime_from_inventory, runtime_from_wire)
from oracle.plan_bind import bind_plan
from oracle.quantize import quantized_plan


def oracle(op: str, inp: dict) -> dict:
    """The expected result fields of a success case."""
    def strip(p):
        return {k: p[k] for k in ("canonical", "placement_id", "digest")}

    doc = loads(inp["document"]) if "document" in inp else None
    arg = inp.get("placement_id")
    if op == "placement.parse":
        return strip(placement_from_wire(doc))
    if op == "placement.from_inventory":
        return strip(placement_from_inventory(doc))
    if op == "runtime.from_inventory":
        rt = runtime_from_inventory(doc)
        return {"runtime": cj(rt), "generation": rt["generation"]}
    if op == "binding.from_inventory":
        return {"binding": cj(binding_from_inventory(doc))}
    if op == "project.placement":
        return strip(project_placement(runtime_from_inventory(doc), arg))
    if op == "project.binding":
        return {"binding": cj(project_binding(runtime_from_inventory(doc), arg))}
    if op == "bind":
        return {"runtime": cj(bind(loads(inp["placement"]), loads(inp["binding"])))}
    if op == "runtime.parse":
        rt = runtime_from_wire(doc)
        return {"runtime": cj(rt), "generation": rt["generation"]}
    if op == "binding.parse":
        return {"binding": cj(binding_from_inventory(doc))}
    if op == "coverage":
        report = coverage_report(doc)
        assert not inp.get("require_complete") or report["tensors_complete"] == len(report["tensors"]), "oracle: incomplete"
        return {"report": cj(report)}
    if op == "plan" and "quantization" in inp:
        return quantized_plan(loads(inp["source"]), loads(inp["target"]), inp["quantization"],
                              inp.get("max_regions"), inp.get("max_segments"))
    if op == "plan":
        return reshard_plan(loads(inp["source"]), loads(inp["target"]), inp.get("max_regions"), inp.get("max_segments"))
    if op == "plan.bind":
        return bind_plan(inp["plan"], inp["source_binding"], inp["target_binding"],
                         inp.get("source_generation"), inp.get("target_generation"))
    raise AssertionError(op)
