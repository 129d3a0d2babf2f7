"""Plans: upstream's plan_placement_transfer between layouts of one model, and its
plan_stored_transfer_to_target_placement from a Store manifest of it."""

from __future__ import annotations

from mooncake.reshard import weight as mw

from .build import layout, nd_layout, one
from .common import code_of


PLANS: dict[str, dict] = {}
LAYOUTS: dict[str, str] = {}
# Pairs whose weight_generations are compared: upstream's answer (plans, or its rejection).
GENERATIONS: dict[str, dict] = {}
# Plans of 3-D and 4-D tensors whose regions this planner writes in another form (outer
# axes of extent 1 dropped, outer axes that step as one merged): the same bytes (§20.9).
ND_PLANS: dict[str, dict] = {}


def region_of(r):
    return {
        "tensor_id": r.tensor_id,
        "source_fragment_id": getattr(r.source, "placement_fragment_id", None) or r.source.fragment_id,
        "target_fragment_id": r.target.placement_fragment_id,
        "overlap_offset": list(r.overlap_offset),
        "overlap_shape": list(r.overlap_shape),
        "source_base_offset": r.source_base_offset,
        "target_base_offset": r.target_base_offset,
        "inner_bytes": r.inner_bytes,
        "outer_loop_counts": list(r.outer_loop_counts),
        "source_strides": list(r.source_strides),
        "target_strides": list(r.target_strides),
    }


def cases_plans():
    grid = [one({"tp": 2}), one({"tp": 4}), one({"tp": 2, "dp": 2}), one({"tp": 4, "dp": 2}), one({"pp": 2, "tp": 2}),
            one({"ep": 2, "tp": 2}), one({"ep": 4, "dp": 2}), {"tp": 2, "pp": 2, "ep": 2, "dp": 2}, one({"dp": 3, "tp": 2}),
            one({"pp": 4, "ep": 2, "dp": 2})]
    layouts = [layout(s, "tp{tp}-pp{pp}-ep{ep}-dp{dp}".format(**s)) for s in grid]
    limits = mw.PlanningLimits(max_transfer_regions=10**7, max_segments_per_region=10**7, max_total_lowered_segments=10**8)
    for name, p in layouts:
        LAYOUTS[name] = mw.weight_placement_to_json(p)
    # Each layout to the next three (a ring over every kind of change: tp, dp, pp, ep).
    for i, (a, pa) in enumerate(layouts):
        for step in (1, 2, 5):
            b, pb = layouts[(i + step) % len(layouts)]
            plan = mw.plan_placement_transfer(pa, pb, planning_limits=limits)
            PLANS[f"{a}->{b}"] = {"source": a, "target": b, "regions": [region_of(r) for r in plan.operations]}
    # A Store manifest of the same model (each tensor stored in two halves along dim 0) as
    # the source of every layout: plan_stored_transfer_to_target_placement.
    name0, p0 = layouts[0]
    frags = []
    for tensor in p0.tensors:
        rows = tensor.global_shape[0]
        pieces = 2 if rows % 2 == 0 else 1
        for k in range(pieces):
            shape = (rows // pieces,) + tuple(tensor.global_shape[1:])
            offset = (k * (rows // pieces),) + (0,) * (len(shape) - 1)
            n = tensor.itemsize
            for e in shape:
                n *= e
            frags.append(mw.StoredFragment(fragment_id=f"{tensor.tensor_id}#{k}", tensor_id=tensor.tensor_id,
                                           global_offset=offset, local_shape=shape, object_key=f"moe-g/payload/{k}",
                                           object_offset=sum(f.nbytes for f in frags if f.object_key == f"moe-g/payload/{k}"),
                                           nbytes=n))
    stored = mw.WeightManifest(namespace="ns", resource_id="moe", revision="r", weight_generation=1, group_id="moe-g",
                               manifest_key="moe-g/manifest", tensors=p0.tensors, fragments=tuple(frags),
                               created_at="2026-12-01T00:00:00Z")
    LAYOUTS["stored"] = stored.to_json()
    for b, pb in layouts:
        plan = mw.plan_stored_transfer_to_target_placement(stored, pb, planning_limits=limits)
        PLANS[f"stored->{b}"] = {"source": "stored", "target": b, "regions": [region_of(r) for r in plan.operations]}


def generation_case(cid, source, target, run):
    """Records whether upstream plans `source` -> `target` (names in LAYOUTS) or rejects it."""
    try:
        run()
        expect = {"ok": True}
    except ValueError as error:
        expect = {"ok": False, "code": code_of(str(error)), "upstream_message": str(error), "pointer": "/weight_generation"}
    GENERATIONS[cid] = {"source": source, "target": target, "expect": expect}


def cases_generations():
    """The same model at weight_generation 2 against the layouts and the Store manifest at 1."""
    limits = mw.PlanningLimits(max_transfer_regions=10**7, max_segments_per_region=10**7, max_total_lowered_segments=10**8)
    a, pa = layout(one({"tp": 2}), "tp2-pp1-ep1-dp1")
    b, pb = layout(one({"tp": 4}), "tp4-pp1-ep1-dp1")
    pieces = {}
    for name, p in ((a, pa), (b, pb)):
        again = mw.WeightPlacementManifest.from_fragments(
            resource_id=p.resource_id, revision=p.revision, weight_generation=2, placement_set_id=p.placement_set_id,
            topology=p.topology, tensors=p.tensors, fragments=[f for part in p.parts for f in part.fragments])
        pieces[name] = again
        LAYOUTS[f"{name}@2"] = mw.weight_placement_to_json(again)
    stored = mw.WeightManifest.from_json(LAYOUTS["stored"])
    plan = mw.plan_placement_transfer
    generation_case("gen1->gen2", a, f"{b}@2", lambda: plan(pa, pieces[b], planning_limits=limits))
    generation_case("gen2->gen1", f"{a}@2", b, lambda: plan(pieces[a], pb, planning_limits=limits))
    generation_case("gen2->gen2", f"{a}@2", f"{b}@2", lambda: plan(pieces[a], pieces[b], planning_limits=limits))
    generation_case("gen1->gen1", a, b, lambda: plan(pa, pb, planning_limits=limits))
    stored_plan = mw.plan_stored_transfer_to_target_placement
    generation_case("stored1->gen2", "stored", f"{b}@2", lambda: stored_plan(stored, pieces[b], planning_limits=limits))
    generation_case("stored1->gen1", "stored", b, lambda: stored_plan(stored, pb, planning_limits=limits))


def cases_nd_plans():
    """Every ordered pair of a few grids of the N-D model, planned by upstream."""
    limits = mw.PlanningLimits(max_transfer_regions=10**7, max_segments_per_region=10**7, max_total_lowered_segments=10**8)
    grids = [one({}), one({"tp": 2}), one({"tp": 4}), one({"ep": 2, "tp": 2}), one({"ep": 4})]
    layouts = [nd_layout(g, "nd-tp{tp}-ep{ep}".format(**g)) for g in grids]
    for name, p in layouts:
        LAYOUTS[name] = mw.weight_placement_to_json(p)
    for a, pa in layouts:
        for b, pb in layouts:
            if a != b:
                plan = mw.plan_placement_transfer(pa, pb, planning_limits=limits)
                ND_PLANS[f"{a}->{b}"] = {"source": a, "target": b, "regions": [region_of(r) for r in plan.operations]}
