"""The oracle of plan binding (contract §17.3 "Reading a plan" and §17.4 "Bound plan"),
written from the contract text: reading a reshard plan document strictly, then binding it
to the runtime binding manifests of its source and target placements.

Reader errors of the documents (invalid_json, duplicate_key, limit_exceeded) and the
rejections of the binding manifests' own parse (§9.2) are not modelled: those cases are
written down by hand from the contract, as for every other operation. What this module
decides is the plan's shape and id, the binding's fences, and every region's bytes.
"""

from __future__ import annotations

import json

from oracle.core import U64, binding_from_inventory, cj, sha

PLAN_TAG = "weight-plan"
BOUND_PLAN_TAG = "weight-bound-plan"


class PlanBindError(Exception):
    """A rejection; the message is the code."""


# The plan schema's members and JSON types at every level (schema/plan.schema.json):
# "str" a string, "u64" an integer in 0..2^64-1, [spec] an array of spec, {..} an object
# with exactly these members.
_LOOP = {"count": "u64", "source_stride": "u64", "target_stride": "u64"}
_REGION = {"global_offset": ["u64"], "loops": [_LOOP], "nbytes": "u64", "run_bytes": "u64",
           "shape": ["u64"], "source_fragment_id": "str", "source_offset": "u64",
           "target_fragment_id": "str", "target_offset": "u64", "tensor_id": "str"}
_PLACEMENT = {"digest": "str", "placement_id": "str"}
PLAN_SHAPE = {"model_id": "str", "plan_id": "str", "regions": [_REGION], "revision": "str",
              "source": _PLACEMENT, "target": _PLACEMENT}


# A region's optional member (§17.8) and its values.
_TRANSFORMS = ("fp8_e4m3_block_scales", "fp8_e4m3_block_values")


def _fits(value, spec) -> bool:
    if spec == "str":
        return isinstance(value, str)
    if spec == "u64":  # bool is not an integer; 2.0 reads as a float
        return type(value) is int and 0 <= value <= U64
    if isinstance(spec, list):
        return isinstance(value, list) and all(_fits(v, spec[0]) for v in value)
    if spec is _REGION and isinstance(value, dict) and "transform" in value:
        return value["transform"] in _TRANSFORMS and _fits({k: v for k, v in value.items() if k != "transform"}, spec)
    return (isinstance(value, dict) and set(value) == set(spec)
            and all(_fits(value[k], s) for k, s in spec.items()))


def plan_id_of(plan: dict) -> str:
    """The plan_id of a plan's contents (§17.3): its members but plan_id, plus the schema tag."""
    payload = {k: v for k, v in plan.items() if k != "plan_id"}
    payload["schema"] = PLAN_TAG
    return "sha256:" + sha(cj(payload))


def read_plan(text: str) -> dict:
    """§17.3 "Reading a plan", steps 2-4, on a document the reader accepts."""
    plan = json.loads(text)
    if not isinstance(plan, dict) or not _fits(plan, PLAN_SHAPE):
        raise PlanBindError("plan_document_invalid")
    if plan_id_of(plan) != plan["plan_id"]:
        raise PlanBindError("plan_id_mismatch")
    return plan


def _side(plan_side: dict, binding: dict, fence) -> dict:
    """§17.4 steps 1-2 for one side; the side's fences."""
    if binding["placement_id"] != plan_side["placement_id"]:
        raise PlanBindError("plan_binding_placement_id_mismatch")
    if binding["placement_digest"] != plan_side["digest"]:
        raise PlanBindError("plan_binding_digest_mismatch")
    if fence is not None and binding["generation"] != fence:
        raise PlanBindError("plan_binding_generation_mismatch")
    return {k: binding[k] for k in ("generation", "instance_id", "lease_id", "placement_digest",
                                    "placement_id")}


def _size_ok(region: dict) -> bool:
    """§17.4 step 3.1: nbytes = run_bytes x the loop counts, run_bytes >= 1, no overflow."""
    product = region["run_bytes"]
    for loop in region["loops"]:
        product *= loop["count"]
        if product > U64:
            return False
    return region["run_bytes"] >= 1 and product == region["nbytes"]


def _located(region: dict, fragment: dict, offset: int, stride: str) -> dict:
    """§17.4 step 3.3 for one side: the region's last byte inside the fragment, the first
    byte's absolute address a u64; the copy's location."""
    if any(loop["count"] == 0 for loop in region["loops"]):
        raise PlanBindError("plan_binding_range_invalid")
    # Every term is non-negative, so an exact sum above nbytes (<= 2^64-1) is also where a
    # checked u64 sum would overflow.
    end = offset + region["run_bytes"] + sum((l["count"] - 1) * l[stride] for l in region["loops"])
    if end > fragment["nbytes"] or fragment["address"] + offset > U64:
        raise PlanBindError("plan_binding_range_invalid")
    return {"address": fragment["address"] + offset, "device": fragment["device"],
            "endpoint": fragment["endpoint"], "worker_id": fragment["worker_id"]}


def _located_quantized(region: dict, fragment: dict) -> dict:
    """§17.4 step 3.3 for the source of a transformed region (§17.8): the last byte inside
    the largest quantized form of the bfloat16 fragment (values: nbytes // 2 bytes, one
    per element; scales: 4 bytes per block, at most one block per element: 2 * nbytes),
    the location's address the offset in that form."""
    if any(loop["count"] == 0 for loop in region["loops"]):
        raise PlanBindError("plan_binding_range_invalid")
    values = region["transform"] == "fp8_e4m3_block_values"
    limit = fragment["nbytes"] // 2 if values else 2 * fragment["nbytes"]
    end = region["source_offset"] + region["run_bytes"] + sum((l["count"] - 1) * l["source_stride"] for l in region["loops"])
    if end > limit or end > U64:
        raise PlanBindError("plan_binding_range_invalid")
    return {"address": region["source_offset"], "device": fragment["device"],
            "endpoint": fragment["endpoint"], "worker_id": fragment["worker_id"]}


def bind_plan(plan_text: str, source_text: str, target_text: str, source_generation=None,
              target_generation=None) -> dict:
    """The `plan.bind` operation on valid binding manifests: the bound plan's canonical
    text and id, or PlanBindError with the code."""
    plan = read_plan(plan_text)
    source = binding_from_inventory(json.loads(source_text))  # §9.2: same members as §10.4
    target = binding_from_inventory(json.loads(target_text))
    sides = {"source": _side(plan["source"], source, source_generation),
             "target": _side(plan["target"], target, target_generation)}
    held = {name: {f["placement_fragment_id"]: f for f in b["fragments"]}
            for name, b in (("source", source), ("target", target))}
    pairs: dict[tuple[str, str], list] = {}
    for region in plan["regions"]:
        if not _size_ok(region):
            raise PlanBindError("plan_document_invalid")
        frags = []
        for name in ("source", "target"):
            fragment = held[name].get(region[f"{name}_fragment_id"])
            if fragment is None:
                raise PlanBindError("plan_binding_fragment_missing")
            frags.append(fragment)
        at = [_located(region, frags[0], region["source_offset"], "source_stride") if "transform" not in region
              else _located_quantized(region, frags[0]),
              _located(region, frags[1], region["target_offset"], "target_stride")]
        pair = pairs.setdefault((frags[0]["worker_id"], frags[1]["worker_id"]), [0, []])
        pair[0] += region["nbytes"]
        if pair[0] > U64:
            raise PlanBindError("plan_binding_range_invalid")
        pair[1].append({"loops": region["loops"], "nbytes": region["nbytes"],
                        "run_bytes": region["run_bytes"], "source": at[0],
                        "source_fragment_id": region["source_fragment_id"], "target": at[1],
                        "target_fragment_id": region["target_fragment_id"],
                        "tensor_id": region["tensor_id"],
                        **({"transform": region["transform"]} if "transform" in region else {})})
    bound = {
        # Python orders str tuples by code point, as the contract sorts the pairs.
        "pairs": [{"bytes": total, "copies": copies, "source_worker_id": s, "target_worker_id": t}
                  for (s, t), (total, copies) in sorted(pairs.items())],
        "plan_id": plan["plan_id"], **sides,
    }
    bound_id = "sha256:" + sha(cj(dict(bound, schema=BOUND_PLAN_TAG)))
    return {"bound_plan": cj(dict(bound, bound_plan_id=bound_id)), "bound_plan_id": bound_id}
