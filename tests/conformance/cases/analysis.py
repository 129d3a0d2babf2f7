"""coverage/ and plan/ : the coverage analysis and the reshard planner."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


def cases_coverage():
    op = "coverage"
    g = "coverage/"

    def C(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, document=doc, **kw)

    w = T("w", [8, 4], pd=0)
    norm = T("norm", [4], itemsize=4)
    tp2 = PL([w, norm], even("w", "w", [8, 4], 0, 2) + [F(f"norm/{i}", "norm", [0], [4], 16, tp=i) for i in (0, 1)],
             model="example/coverage")
    C("complete-tp2", "A TP=2 split and a norm replicated on both TP ranks tile their tensors: complete, with 2 replicas of the norm box.", tp2, ["realistic"])
    C("complete-require-complete", "A complete placement passes require_complete.", tp2, require_complete=True)
    gap = PL([w, norm], even("w", "w", [8, 4], 0, 2)[:1] + [F("norm/0", "norm", [0], [4], 16)], model="example/coverage")
    C("gaps-missing-shard", "A missing TP shard leaves gaps: the exact uncovered volume and the first uncovered coordinate [4, 0].", gap)
    X("gaps-require-complete", "require_complete rejects a placement whose tensor has gaps.", "coverage_incomplete", gap, require_complete=True)
    both = PL([T("w", [8, 4], sd=[0, 1])], even("r", "w", [8, 4], 0, 2, dp=lambda i: 0, tp=lambda i: i)
              + even("c", "w", [8, 4], 1, 2, dp=lambda i: 1, tp=lambda i: i), model="example/coverage")
    C("ambiguous-dp-layouts", "DP replicas with different TP layouts overlap partially: ambiguous overall, complete per DP replica.", both, ["realistic"])
    X("ambiguous-require-complete", "require_complete rejects a placement with an ambiguous tensor.", "coverage_incomplete", both, require_complete=True)
    dp_half = PL([w], even("a", "w", [8, 4], 0, 2, dp=lambda i: 0, tp=lambda i: i) + even("b", "w", [8, 4], 0, 2, dp=lambda i: 1, tp=lambda i: i)[1:],
                 model="example/coverage")
    C("dp-replica-incomplete", "The distinct boxes tile the tensor, but DP replica 1 alone holds only half of it.", dp_half)
    C("tensor-without-fragments", "A tensor with no fragment has gaps everywhere: all elements uncovered, first at the origin.",
      PL([w, norm], even("w", "w", [8, 4], 0, 2), model="example/coverage"))
    C("empty-placement", "An empty placement has an empty report.", PL([], [], model="m", rev="r"))
    cube = PL([T("cube", [4, 6, 2], sd=[0, 1], itemsize=1)],
              [F(f"cube/{i}{j}", "cube", [2 * i, 3 * j, 0], [2, 3, 2], 12, tp=2 * i + j) for i in (0, 1) for j in (0, 1)],
              model="example/coverage")
    C("nd-grid-complete", "A 2x2 grid over two axes of a 3-D tensor is complete.", cube)
    C("nd-grid-hole", "The same 3-D grid without one tile has gaps; the first uncovered coordinate is the missing tile's corner.",
      m(cube, {"/fragments": cube["fragments"][:3]}))
    big = PL([T("big", [2 ** 40, 2 ** 40], pd=0, itemsize=1)], [F("big/0", "big", [0, 0], [1, 2 ** 40], 2 ** 40)], model="example/coverage")
    C("huge-uncovered-volume", "The uncovered volume above 2^64 is reported exactly, as decimal digits.", big, ["u64"])
    X("invalid-placement", "The placement is validated first: its own rejections come before any analysis.", "fragment_overlap",
      m(tp2, {"/fragments/1/global_offset": [2, 0], "/fragments/1/rank/tp": 0}))


def cases_plan():
    op = "plan"
    g = "plan/"

    def P(name, desc, source, target, tags=(), **kw):
        ok(g + name, op, desc, tags, source=source, target=target, **kw)

    def X(name, desc, code, source, target, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, source=source, target=target, **kw)

    model = "example/reshard"
    w = T("w", [8, 6], pd=0)
    w1 = T("w", [8, 6], pd=1)
    tp4 = PL([w], even("a", "w", [8, 6], 0, 4), model=model)
    tp2 = PL([w], even("b", "w", [8, 6], 0, 2), model=model)
    cols = PL([w1], even("c", "w", [8, 6], 1, 3), model=model)
    P("tp-merge-dim0", "TP4 to TP2 on axis 0: each target fragment reads two source blocks, each one contiguous run.", tp4, tp2, ["realistic"])
    P("tp-split-dim0", "TP2 to TP4 on axis 0: each target fragment reads half of one source fragment.", tp2, tp4, ["realistic"])
    P("cross-axis", "Rows to columns: every overlap is one strided region (loop over rows), never one region per row.", tp2, cols)
    P("cross-axis-back", "Columns to rows: the strides are swapped between source and target.", cols, tp2)
    dp2 = PL([w], even("s0", "w", [8, 6], 0, 2, dp=lambda i: 0, tp=lambda i: i)
             + even("s1", "w", [8, 6], 0, 2, dp=lambda i: 1, tp=lambda i: i), model=model)
    dp2_target = PL([w1], even("t0", "w", [8, 6], 1, 3, dp=lambda i: 0, tp=lambda i: i)
                    + even("t1", "w", [8, 6], 1, 3, dp=lambda i: 1, tp=lambda i: i), model=model)
    P("same-dp-replica-first", "Each target fragment reads the source replica with its own DP rank.", dp2, dp2_target, ["realistic"])
    v = T("v", [4], dtype="uint8", itemsize=1)
    spread = PL([v], [F(f"s{i}", "v", [0], [4], 4, dp=1, tp=3 - i) for i in range(4)], model=model)
    readers = PL([v], [F(f"t{i}", "v", [0], [4], 4, pp=i) for i in range(8)], model=model)
    P("replicas-balanced", "Without a same-DP replica, reads go to the least-loaded replica, ties by rank order (dp, tp, pp, ep).", spread, readers)
    per_dp = PL([T("w", [4, 4], sd=[0, 1], itemsize=1)],
                [F(f"r/{i}", "w", [2 * i, 0], [2, 4], 8, tp=i) for i in (0, 1)]
                + [F(f"c/{i}", "w", [0, 2 * i], [4, 2], 8, dp=1, tp=i) for i in (0, 1)], model=model)
    per_dp_target = PL([T("w", [4, 4], pd=1, itemsize=1)],
                       [F(f"{p}/{i}", "w", [0, 2 * i], [4, 2], 8, dp=d, tp=i) for p, d in (("t", 1), ("u", 0), ("v", 2)) for i in (0, 1)],
                       model=model)
    P("dp-replicas-own-covers", "DP replicas with different layouts are separate covers; a DP without a replica reads the covers in turn.",
      per_dp, per_dp_target)
    experts = [T(f"experts.{e}.w", [4, 4], layer=3, expert=e) for e in range(4)]
    ep2 = PL(experts, [F(f"a{e}", f"experts.{e}.w", [0, 0], [4, 4], 32, ep=e // 2) for e in range(4)], model=model)
    ep4 = PL(experts, [F(f"b{e}", f"experts.{e}.w", [0, 0], [4, 4], 32, ep=e) for e in range(4)], model=model)
    P("ep-regroup", "EP2 to EP4: whole experts move between EP ranks as single contiguous regions.", ep2, ep4, ["realistic"])
    layers = [T(f"layers.{l}.w", [4, 4], pd=1, layer=l) for l in range(4)]
    pp2 = PL(layers, [f for l in range(4) for f in even(f"a{l}", f"layers.{l}.w", [4, 4], 1, 2, pp=lambda i, l=l: l // 2, tp=lambda i: i)], model=model)
    pp4 = PL(layers, [f for l in range(4) for f in even(f"b{l}", f"layers.{l}.w", [4, 4], 1, 2, pp=lambda i, l=l: l, tp=lambda i: i)], model=model)
    P("pp-restage", "PP2 to PP4: layers move between pipeline stages, TP layout unchanged.", pp2, pp4)
    cube = T("cube", [2, 3, 8], sd=[2], itemsize=1)
    P("nd-loops-merge", "A 3-D overlap spanning its outer axes fully merges them into one loop.",
      PL([cube], even("a", "cube", [2, 3, 8], 2, 1, nbytes_per_item=1), model=model),
      PL([cube], even("b", "cube", [2, 3, 8], 2, 2, nbytes_per_item=1), model=model))
    P("empty", "Two empty placements of one model give an empty plan.", PL([], [], model=model), PL([], [], model=model))

    # -- rejections
    X("model-id-mismatch", "Placements of different models cannot be resharded into each other.", "plan_model_mismatch",
      tp4, m(tp2, {"/model_id": "example/other"}))
    X("revision-mismatch", "Placements of different revisions cannot be resharded into each other.", "plan_model_mismatch",
      tp4, m(tp2, {"/revision": "r2"}))
    X("tensor-missing-in-target", "A tensor that only the source lists is a tensor mismatch.", "plan_tensor_mismatch",
      PL([w, v], tp4["fragments"], model=model), tp2)
    X("tensor-shape-differs", "The same tensor_id with another global_shape is a tensor mismatch.", "plan_tensor_mismatch",
      tp4, PL([T("w", [8, 4], pd=0)], even("b", "w", [8, 4], 0, 2), model=model))
    X("tensor-dtype-differs", "The same tensor_id with another dtype is a tensor mismatch.", "plan_tensor_mismatch",
      tp4, m(tp2, {"/tensors/0/dtype": "float16"}))
    X("source-gap", "A source shard is missing, so no source cover tiles the tensor.", "plan_uncovered_tensor",
      m(tp4, {"/fragments": tp4["fragments"][:3]}), tp2)
    X("source-overlap-no-dp-tiling", "Source boxes overlap partially and no DP replica tiles the tensor alone.", "plan_uncovered_tensor",
      PL([w], [F("a", "w", [0, 0], [5, 6], 60), F("b", "w", [3, 0], [5, 6], 60, dp=1)], model=model), tp2)
    X("max-regions", "A plan of 4 regions exceeds max_regions 3.", "plan_limit_exceeded", tp4, tp2, max_regions=3)
    X("max-segments", "Cross-axis regions need 12 runs in total, above max_segments 11.", "plan_limit_exceeded", tp2, cols, max_segments=11)
    X("invalid-source", "Both placements are validated first: a source rejection comes before any planning.", "fragment_rank_mismatch",
      m(tp4, {"/fragments/0/global_offset": [0]}), tp2)
