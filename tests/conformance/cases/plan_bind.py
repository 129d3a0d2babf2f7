"""plan_bind/ : plan.bind, a reshard plan (the output of `plan`) bound to the runtime binding
manifests of its source and target placements (contract §17.3 "Reading a plan", §17.4).
Expected bound plans and every rejection of the plan-bind codes come from the oracle
(oracle/plan_bind.py); reader and binding-parse rejections are written down from the
contract."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry
from cases.quantize import MODEL, Q, S, W, cuts, spec

VECTORS = ROOT / "tests" / "vectors" / "plan_bind"


def vector(name: str) -> str:
    return (VECTORS / name).read_text(encoding="utf-8")


def derived_vectors() -> dict[str, str]:
    """The derived files of tests/vectors/plan_bind/ (path from the repository root -> text),
    computed by the oracle from the hand-written inputs: `plan.json`, the plan of the two
    placements, and `bound-plan.json`, that plan bound to the two bindings under the fences
    3 and 12 (README.md there). generate.py writes them and --check compares them."""
    plan = reshard_plan(loads(vector("source-placement.json")), loads(vector("target-placement.json")))["plan"]
    bound = oracle("plan.bind", {"plan": plan, "source_binding": vector("source-binding.json"),
                                 "target_binding": vector("target-binding.json"),
                                 "source_generation": 3, "target_generation": 12})["bound_plan"]
    return {"tests/vectors/plan_bind/plan.json": plan, "tests/vectors/plan_bind/bound-plan.json": bound}


def placement_of(doc) -> dict:
    """The oracle's placement (canonical value, placement_id, digest) of a document."""
    return placement_from_wire(loads(render(doc) if not isinstance(doc, str) else doc))


def BMAN(doc, instance, generation, site=None, base=0x7F00_0000_0000):
    """A runtime binding manifest (§9.2) locating every fragment of placement `doc`;
    `site(fragment)` gives (worker_id, endpoint, device), by default one worker per rank."""
    p = placement_of(doc)
    frags, address = [], base
    for f in p["_value"]["fragments"]:
        r = f["rank"]
        worker = f"{instance}-dp{r['dp']}-pp{r['pp']}-tp{r['tp']}-ep{r['ep']}"
        worker, endpoint, device = site(f) if site else (worker, f"{worker}.example:7000", "cuda:0")
        frags.append({"address": address, "device": device, "endpoint": endpoint,
                      "fragment_id": "rt:" + f["placement_fragment_id"], "nbytes": f["nbytes"],
                      "placement_fragment_id": f["placement_fragment_id"], "worker_id": worker})
        address += (f["nbytes"] + 255) // 256 * 256
    return {"fragments": frags, "generation": generation, "instance_id": instance,
            "lease_id": f"lease-{instance}-{generation}", "model_id": p["_value"]["model_id"],
            "placement_digest": p["digest"], "placement_id": p["placement_id"],
            "revision": p["_value"]["revision"]}


def PLAN(source, target) -> dict:
    """The oracle's plan of two placements, as a value."""
    return loads(reshard_plan(loads(_doc_text(source)), loads(_doc_text(target)))["plan"])


def _doc_text(doc) -> str:
    return doc if isinstance(doc, str) else render(doc)


def reid(plan: dict) -> dict:
    """`plan` with the plan_id of its (edited) contents."""
    return dict(plan, plan_id=plan_id_of(plan))


def cases_plan_bind():
    op = "plan.bind"
    g = "plan_bind/"

    def P(name, desc, plan, source, target, tags=(), expect=None, **kw):
        ok(g + name, op, desc, tags, expect, plan=plan, source_binding=source, target_binding=target, **kw)

    def X(name, desc, code, plan, source, target, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, plan=plan, source_binding=source, target_binding=target, **kw)

    # -- the vectors of tests/vectors/plan_bind/ (TP2 rows to TP3 columns of one [4, 6] tensor)
    derived = derived_vectors()
    vplan = derived["tests/vectors/plan_bind/plan.json"]
    vsrc, vtgt = vector("source-binding.json"), vector("target-binding.json")
    stale, other = vector("target-binding-stale.json"), vector("target-binding-other-digest.json")
    P("vectors-fenced", "The plan-bind vectors with both fences: the bound plan of tests/vectors/plan_bind/bound-plan.json.",
      vplan, vsrc, vtgt, ["realistic"], {"bound_plan": derived["tests/vectors/plan_bind/bound-plan.json"]}, source_generation=3, target_generation=12)
    P("vectors-unfenced", "Without fences any generation is accepted; the bound plan is the same.", vplan, vsrc, vtgt,
      source_generation=None, target_generation=None)
    P("stale-binding-without-fence", "A binding under another generation is not stale when no fence is given for its side.",
      vplan, vsrc, stale, source_generation=3)
    P("plan-reindented", "The plan_id is recomputed from the parsed plan, not from its bytes: an indented plan is accepted.",
      pretty(loads(vplan)), vsrc, vtgt)
    P("bindings-reordered", "Binding fragments in any order give the same bound plan (the parse sorts them).",
      vplan, m(loads(vsrc), {"/fragments": loads(vsrc)["fragments"][::-1]}), pretty(loads(vtgt)), ["order"])

    # -- realistic reshards built by the oracle's planner
    model = "example/reshard"
    w = T("w", [8, 6], pd=0)
    tp4 = PL([w], even("a", "w", [8, 6], 0, 4), model=model)
    tp2 = PL([w], even("b", "w", [8, 6], 0, 2), model=model)
    cols = PL([T("w", [8, 6], pd=1)], even("c", "w", [8, 6], 1, 3), model=model)
    b4, b2, bc = BMAN(tp4, "train", 7), BMAN(tp2, "serve", 2), BMAN(cols, "serve", 9)
    P("tp-merge", "TP4 to TP2: each TP4 rank sends one contiguous copy to one TP2 rank; four worker pairs.",
      render(PLAN(tp4, tp2)), b4, b2, ["realistic"], source_generation=7, target_generation=2)
    P("cross-axis-strided", "Rows to columns: every copy keeps its loops, addresses are the fragment address plus the region offsets.",
      render(PLAN(tp2, cols)), b2, bc, ["realistic"])
    one = BMAN(tp4, "train", 7, site=lambda f: ("host", "host.example:1", f"cuda:{f['rank']['tp']}"))
    P("one-worker-each-side", "All fragments of each side on one worker: one pair holds every copy in plan order.",
      render(PLAN(tp4, tp2)), one, BMAN(tp2, "serve", 2, site=lambda f: ("peer", "peer.example:1", "cuda:0")))
    sort = BMAN(cols, "serve", 2, site=lambda f: (["zeta", "Zeta", "\u00e9t\u00e9"][f["rank"]["tp"]], "e:1", "cuda:0"))
    P("pairs-code-point-order", "Pairs are sorted by worker id in code point order (Z before z before \u00e9).",
      render(PLAN(tp4, cols)), b4, sort, ["unicode", "order"])
    experts = [T(f"experts.{e}.w", [4, 4], layer=3, expert=e) for e in range(4)]
    ep2 = PL(experts, [F(f"a{e}", f"experts.{e}.w", [0, 0], [4, 4], 32, ep=e // 2) for e in range(4)], model=model)
    ep4 = PL(experts, [F(f"b{e}", f"experts.{e}.w", [0, 0], [4, 4], 32, ep=e) for e in range(4)], model=model)
    P("ep-regroup", "EP2 to EP4: whole experts move as single copies between the EP ranks' workers.",
      render(PLAN(ep2, ep4)), BMAN(ep2, "train", 1), BMAN(ep4, "serve", 1), ["realistic"])
    dp2 = PL([w], even("s0", "w", [8, 6], 0, 2, dp=lambda i: 0, tp=lambda i: i)
             + even("s1", "w", [8, 6], 0, 2, dp=lambda i: 1, tp=lambda i: i), model=model)
    dp2t = PL([T("w", [8, 6], pd=1)], even("t0", "w", [8, 6], 1, 3, dp=lambda i: 0, tp=lambda i: i)
              + even("t1", "w", [8, 6], 1, 3, dp=lambda i: 1, tp=lambda i: i), model=model)
    P("dp-replicas", "DP replicas read their own DP's source workers; no copy crosses DP groups.",
      render(PLAN(dp2, dp2t)), BMAN(dp2, "train", 4), BMAN(dp2t, "serve", 4), ["realistic"])
    empty = PL([], [], model=model)
    P("empty-plan", "An empty plan binds to an empty list of pairs.", render(PLAN(empty, empty)), BMAN(empty, "a", 1), BMAN(empty, "b", 1))
    extra = m(b2, {"/fragments/2": dict(b2["fragments"][0], placement_fragment_id="spare", fragment_id="rt:spare")})
    P("binding-extra-fragment", "A binding may hold fragments no region names.", render(PLAN(tp4, tp2)), b4, extra)

    # -- hand-made plans at the edges (ids recomputed by the oracle)
    pid, dig = "sha256:" + "a" * 64, "b" * 64
    half = 1 << 63

    def side_binding(instance, nbytes, address=1, worker="w"):
        return {"fragments": [{"address": address, "device": "cuda:0", "endpoint": "e:1", "fragment_id": "rt:f",
                               "nbytes": nbytes, "placement_fragment_id": "f", "worker_id": worker}],
                "generation": 1, "instance_id": instance, "lease_id": "l", "model_id": "m",
                "placement_digest": dig, "placement_id": pid, "revision": "r"}

    def region(nbytes, run=None, loops=(), so=0, to=0, sf="f", tf="f"):
        return {"global_offset": [0], "loops": [{"count": c, "source_stride": s, "target_stride": t} for c, s, t in loops],
                "nbytes": nbytes, "run_bytes": nbytes if run is None else run, "shape": [1],
                "source_fragment_id": sf, "source_offset": so, "target_fragment_id": tf, "target_offset": to, "tensor_id": "t"}

    def hand(*regions):
        ref = {"digest": dig, "placement_id": pid}
        return reid({"model_id": "m", "plan_id": "", "regions": list(regions), "revision": "r", "source": ref, "target": ref})

    big = side_binding("s", half)
    P("pair-total-at-u64-max", "Two copies of one worker pair totalling 2^64-1 bytes are representable.",
      hand(region(half), region(half - 1)), big, big, ["u64"])
    top = side_binding("s", 4096, address=U64 - 4096)
    P("address-top-of-range", "A fragment at the top of the address space: address + offset stays a u64.",
      hand(region(16, so=4080, to=4080)), top, top, ["u64"])
    P("loop-count-one", "A loop of count 1 (never planned, but of the plan's types) spans one run.",
      hand(region(8, 8, [(1, 4096, 4096)])), side_binding("s", 8), side_binding("t", 8))
    P("region-ends-at-fragment-end", "A strided region whose last run ends on the fragment's last byte is inside it.",
      hand(region(12, 4, [(3, 10, 4)], so=4)), side_binding("s", 28), side_binding("t", 12))

    # -- reading the plan (§17.3)
    vp = loads(vplan)
    X("plan-not-an-object", "A plan that is a JSON array is not a reshard plan.", "plan_document_invalid", "[]", vsrc, vtgt, ["structure"])
    X("plan-missing-regions", "A plan without regions lacks a member of the plan schema.", "plan_document_invalid",
      m(vp, {"/regions": DEL}), vsrc, vtgt, ["structure"])
    X("plan-unknown-member", "A member the plan schema does not have is rejected, even with the plan_id of the contents.",
      "plan_document_invalid", reid(m(vp, {"/schema": "weight-plan"})), vsrc, vtgt, ["structure"])
    X("plan-loop-unknown-member", "Exact members at every level: a loop with an extra member.", "plan_document_invalid",
      m(vp, {"/regions/0/loops/0/stride": 4}), vsrc, vtgt, ["structure"])
    X("plan-nbytes-string", "An integer member given as a string is not of the plan's types.", "plan_document_invalid",
      m(vp, {"/regions/1/nbytes": "8"}), vsrc, vtgt, ["structure"])
    X("plan-count-float", "2.0 is not an integer in a plan.", "plan_document_invalid",
      m(vp, {"/regions/0/loops/0/count": Raw("2.0")}), vsrc, vtgt, ["reader"])
    X("plan-offset-above-u64", "An integer above 2^64-1 is not a u64.", "plan_document_invalid",
      m(vp, {"/regions/0/source_offset": Raw(str(U64 + 1))}), vsrc, vtgt, ["u64"])
    X("plan-source-null", "A plan side that is null is not an object.", "plan_document_invalid",
      m(vp, {"/source": None}), vsrc, vtgt, ["structure"])
    X("plan-id-tampered-region", "Changing a region without recomputing the plan_id is plan_id_mismatch, found when the plan is read.",
      "plan_id_mismatch", m(vp, {"/regions/0/nbytes": 9}), vsrc, vtgt)
    X("plan-id-uppercase", "The plan_id is compared exactly: uppercase hex is not the id of the contents.", "plan_id_mismatch",
      m(vp, {"/plan_id": vp["plan_id"].upper().replace("SHA256", "sha256")}), vsrc, vtgt)
    X("order-plan-before-bindings", "The plan is read before the bindings: its plan_id_mismatch comes before a binding that is not JSON.",
      "plan_id_mismatch", m(vp, {"/regions/0/nbytes": 9}), "{", vtgt, ["order"])
    X("plan-invalid-json", "A truncated plan is invalid_json (the reader, §4).", "invalid_json", vplan[:-1], vsrc, vtgt, ["reader"])
    L = "limit_exceeded"
    X("plan-limit-string", "A plan string above max_string_bytes is limit_exceeded at it, as in every document.", L,
      m(vp, {"/model_id": "m" * 65537}), vsrc, vtgt, ["limit"])

    # -- reading the bindings (§9.2)
    X("source-binding-duplicate-key", "A source binding with a duplicate member is rejected by the reader.", "duplicate_key",
      vplan, dup(loads(vsrc), "generation"), vtgt, ["reader"])
    X("target-binding-missing-lease-id", "A target binding without lease_id does not have the binding manifest's members.",
      "fields_mismatch", vplan, vsrc, m(loads(vtgt), {"/lease_id": DEL}), ["structure"])
    X("order-bindings-before-fences", "Both bindings are read before any fence: a malformed target binding comes before the source's identity.",
      "fields_mismatch", vplan, vtgt, m(loads(vtgt), {"/lease_id": DEL}), ["order"])

    # -- the fences of each side (§17.4 steps 1-2)
    X("source-placement-id-mismatch", "The target binding given as the source locates another placement.",
      "plan_binding_placement_id_mismatch", vplan, vtgt, vtgt)
    X("target-placement-id-mismatch", "The source binding given as the target locates another placement.",
      "plan_binding_placement_id_mismatch", vplan, vsrc, vsrc)
    X("target-digest-mismatch", "A target binding of the plan's placement_id but another digest.", "plan_binding_digest_mismatch",
      vplan, vsrc, other)
    X("source-digest-mismatch", "A source binding naming another placement digest.", "plan_binding_digest_mismatch",
      vplan, m(loads(vsrc), {"/placement_digest": "0" * 64}), vtgt)
    X("target-stale", "The target binding under generation 11 with a target fence of 12 is stale.",
      "plan_binding_generation_mismatch", vplan, vsrc, stale, target_generation=12)
    X("source-stale", "A source fence of 4 rejects the source binding of generation 3.", "plan_binding_generation_mismatch",
      vplan, vsrc, vtgt, source_generation=4)
    X("order-source-fence-before-target-identity", "The source side is checked completely before the target side.",
      "plan_binding_generation_mismatch", vplan, vsrc, other, source_generation=4, tags=["order"])
    X("order-digest-before-generation", "Within a side the digest is checked before the generation.", "plan_binding_digest_mismatch",
      vplan, vsrc, other, target_generation=99, tags=["order"])

    # -- the regions (§17.4 step 3)
    tplan = render(PLAN(tp4, tp2))
    X("region-nbytes-not-run-times-counts", "A region whose nbytes is not run_bytes times its loop counts (plan_id recomputed).",
      "plan_document_invalid", reid(m(vp, {"/regions/0/nbytes": 12})), vsrc, vtgt)
    X("region-run-bytes-zero", "run_bytes 0 with nbytes 0 is not a region.", "plan_document_invalid",
      hand(region(0, 0)), side_binding("s", 8), side_binding("t", 8))
    X("region-size-overflow", "run_bytes times the counts above 2^64-1 is rejected, even when a later count is 0.",
      "plan_document_invalid", hand(region(0, half, [(4, 0, 0), (0, 0, 0)])), side_binding("s", 8), side_binding("t", 8), ["u64"])
    X("source-fragment-missing", "A region reading a fragment the source binding does not hold.", "plan_binding_fragment_missing",
      tplan, m(b4, {"/fragments": b4["fragments"][1:]}), b2)
    X("target-fragment-missing", "A region writing a fragment the target binding does not hold.", "plan_binding_fragment_missing",
      tplan, b4, m(b2, {"/fragments": b2["fragments"][:1]}))
    X("order-size-before-fragment", "Within a region the size check comes before the fragment lookup.", "plan_document_invalid",
      hand(region(8, 4, sf="gone")), side_binding("s", 8), side_binding("t", 8), ["order"])
    X("order-sides-before-regions", "The fences are checked before any region.", "plan_binding_generation_mismatch",
      tplan, b4, m(b2, {"/fragments": b2["fragments"][:1]}), target_generation=3, tags=["order"])
    X("source-range-outside", "A source fragment bound with fewer bytes than the region reads.", "plan_binding_range_invalid",
      tplan, m(b4, {"/fragments/0/nbytes": 16}), b2)
    X("target-range-outside", "A target fragment bound with fewer bytes than the region writes.", "plan_binding_range_invalid",
      tplan, b4, m(b2, {"/fragments/1/nbytes": 40}))
    X("strided-range-outside", "The last run of a strided region ends one byte past the fragment.", "plan_binding_range_invalid",
      hand(region(12, 4, [(3, 10, 4)], so=5)), side_binding("s", 28), side_binding("t", 12))
    X("loop-count-zero", "A loop count of 0 (nbytes 0 agrees) fails the range check.", "plan_binding_range_invalid",
      hand(region(0, 4, [(0, 4, 4)])), side_binding("s", 8), side_binding("t", 8))
    X("offset-overflow", "A source_offset of 2^64-1 has no representable end.", "plan_binding_range_invalid",
      hand(region(4, so=U64)), side_binding("s", 8), side_binding("t", 8), ["u64"])
    X("pair-total-overflow", "Two copies of one worker pair totalling 2^64 bytes exceed 2^64-1.", "plan_binding_range_invalid",
      hand(region(half), region(half)), big, big, ["u64"])
    X("order-first-region-first", "Regions are checked in plan order: region 0 leaves its fragment before region 1 misses one.",
      "plan_binding_range_invalid", hand(region(16), region(4, tf="gone")), side_binding("s", 8), side_binding("t", 8), ["order"])

    # A quantized plan (§17.8) is bound: each transformed copy keeps its transform, and its
    # source location holds the offset in the source fragment's quantized form.
    shape = [256, 256]
    q_source = PL([W("w.weight", shape, pd=0)], cuts("s", "w.weight", shape, 0, [0, 128, 256], 2), model=MODEL)
    q_target = PL([Q("w.weight", shape, pd=1), S("w.weight_scale_inv", shape, pd=1)],
                  cuts("t", "w.weight", shape, 1, [0, 128, 256], 1)
                  + cuts("ts", "w.weight_scale_inv", [2, 2], 1, [0, 1, 2], 4), model=MODEL)
    q_plan = quantized_plan(loads(render(q_source)), loads(render(q_target)), render(spec(("w.weight", "w.weight_scale_inv"))))["plan"]
    q_src, q_tgt = BMAN(q_source, "trainer", 1), BMAN(q_target, "engine", 1)
    P("quantized-plan-bound", "A quantized plan (TP2 rows to TP2 columns) binds: values and scales copies keep their "
      "transform, their source addresses are offsets in the source fragments' quantized forms.",
      q_plan, q_src, q_tgt, ["realistic"])
    P("quantized-one-worker-each-side", "A quantized plan with every fragment of each side on one worker: one pair, "
      "the copies in plan order.", q_plan, BMAN(q_source, "trainer", 1, site=lambda f: ("t", "t:1", "cuda:0")),
      BMAN(q_target, "engine", 1, site=lambda f: ("e", "e:1", "cuda:0")))
    q_regions = loads(q_plan)["regions"]
    values_at = next(i for i, r in enumerate(q_regions) if r["transform"] == "fp8_e4m3_block_values")
    scales_at = next(i for i, r in enumerate(q_regions) if r["transform"] == "fp8_e4m3_block_scales")

    def q_edit(i, **members):
        regions = [dict(r) for r in q_regions]
        regions[i].update(members)
        return render(reid(dict(loads(q_plan), regions=regions)))

    # A source fragment of 128x256 bfloat16 (65,536 bytes): its values span 32,768 bytes.
    last_values = 32768 - (q_regions[values_at]["run_bytes"] + sum((l["count"] - 1) * l["source_stride"]
                                                                   for l in q_regions[values_at]["loops"]))
    P("quantized-values-end-at-the-form", "A values copy whose last byte is the last of the source's FP8 form "
      "(nbytes / 2) is bound.", q_edit(values_at, source_offset=last_values), q_src, q_tgt, ["boundary"])
    X("quantized-values-past-the-form", "A values copy reaching one byte past the source's FP8 form (nbytes / 2) "
      "leaves it, though it lies inside the bfloat16 fragment.", "plan_binding_range_invalid",
      q_edit(values_at, source_offset=last_values + 1), q_src, q_tgt, ["boundary"])
    span = q_regions[scales_at]["run_bytes"] + sum((l["count"] - 1) * l["source_stride"] for l in q_regions[scales_at]["loops"])
    P("quantized-scales-within-twice", "A scales copy is checked against 2 x nbytes (4 bytes per block, a block at "
      "least one 2-byte element): past the fragment's own bytes is bound.",
      q_edit(scales_at, source_offset=2 * 65536 - span), q_src, q_tgt, ["boundary"])
    X("quantized-scales-past-twice", "A scales copy ending one byte past 2 x nbytes of its source fragment.",
      "plan_binding_range_invalid", q_edit(scales_at, source_offset=2 * 65536 - span + 1), q_src, q_tgt, ["boundary"])
    X("quantized-size-checked-first", "A transformed region's size is checked before its range.",
      "plan_document_invalid", q_edit(values_at, nbytes=1, source_offset=1 << 40), q_src, q_tgt, ["order"])
    X("transform-unknown", "A region's transform must be one of the schema's values.", "plan_document_invalid",
      render(reid(dict(loads(q_plan), regions=[dict(loads(q_plan)["regions"][0], transform="int8_values")]))),
      BMAN(q_source, "trainer", 1), BMAN(q_target, "engine", 1))
