"""quantize/ : the planner with a quantization spec (contract §17.8): bfloat16 sources into
block-FP8 targets (e4m3, a float32 scale per 128x128 block in a tensor of its own)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry

MODEL = "example/fp8"
FP8_FP = "vllm:fp8-block128:v1"


def W(tid, shape, pd=None, sd=None, layer=None, expert=None):
    """The source's bfloat16 tensor."""
    return T(tid, shape, pd=pd, sd=sd, layer=layer, expert=expert)


def Q(tid, shape, pd=None, sd=None, layer=None, expert=None, dtype="float8_e4m3fn", itemsize=1):
    """The target's FP8 tensor."""
    return T(tid, shape, pd=pd, sd=sd, dtype=dtype, itemsize=itemsize, layer=layer, expert=expert, fp=FP8_FP)


def blocks(shape):
    return shape[:-2] + [-(-shape[-2] // 128), -(-shape[-1] // 128)]


def S(tid, shape, pd=None, sd=None, layer=None, expert=None):
    """The target's scale tensor of a tensor of `shape`."""
    return T(tid, blocks(shape), pd=pd, sd=sd, dtype="float32", itemsize=4, layer=layer, expert=expert,
             fp="vllm:fp8-block128-scale:v1")


def cuts(prefix, tid, shape, axis, edges, itemsize, **rank_of):
    """Fragments cutting `shape` on `axis` at `edges` (part i gets tp = i unless rank_of says)."""
    out = []
    for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
        off, ext = [0] * len(shape), list(shape)
        off[axis], ext[axis] = lo, hi - lo
        rank = {k: f(i) for k, f in rank_of.items()} if rank_of else {"tp": i}
        out.append(F(f"{prefix}/{i}", tid, off, ext, prod(ext) * itemsize, **rank))
    return out


def spec(*pairs, block=(128, 128), fmt="e4m3", method="fp8"):
    return {"block_size": list(block), "fmt": fmt, "quant_method": method,
            "tensors": [{"scale_tensor_id": s, "tensor_id": t} for t, s in pairs]}


WS = ("w.weight", "w.weight_scale_inv")


def cases_quantize():
    op = "plan"
    g = "quantize/"

    def P(name, desc, source, target, quantization, tags=(), **kw):
        ok(g + name, op, desc, tags, source=source, target=target, quantization=quantization, **kw)

    def X(name, desc, code, source, target, quantization, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, source=source, target=target, quantization=quantization, **kw)

    w, s = WS
    shape = [512, 256]
    src_rows2 = PL([W(w, shape, pd=0)], cuts("s", w, shape, 0, [0, 256, 512], 2), model=MODEL)
    tgt_rows4 = PL([Q(w, shape, pd=0), S(s, shape, pd=0)],
                   cuts("t", w, shape, 0, [0, 128, 256, 384, 512], 1)
                   + cuts("ts", s, blocks(shape), 0, [0, 1, 2, 3, 4], 4), model=MODEL)
    one = spec(WS)
    P("tp-rows-2-to-4", "TP2 to TP4 on the rows: each target reads the FP8 values and the scale row of one source half.",
      src_rows2, tgt_rows4, one, ["realistic"])
    tgt_cols2 = PL([Q(w, shape, pd=1), S(s, shape, pd=1)],
                   cuts("t", w, shape, 1, [0, 128, 256], 1) + cuts("ts", s, blocks(shape), 1, [0, 1, 2], 4), model=MODEL)
    P("tp-rows-to-cols", "Rows to columns: strided FP8 regions and strided scale regions, one per source half.",
      src_rows2, tgt_cols2, one, ["realistic"])
    tgt_one = PL([Q(w, shape), S(s, shape)], [F("t", w, [0, 0], shape, prod(shape)), F("ts", s, [0, 0], blocks(shape), 32)],
                 model=MODEL)
    P("tp-merge-to-one", "TP2 into one engine: two value regions and two scale regions, each contiguous.", src_rows2, tgt_one, one)
    src_rows8 = PL([W(w, shape, pd=0)], cuts("s", w, shape, 0, list(range(0, 513, 64)), 2), model=MODEL)
    X("source-cuts-blocks", "Source shards of 64 rows cut every scale block: the source cannot quantize a block alone.",
      "quantization_block_cut", src_rows8, tgt_rows4, one)

    uneven = [640, 384]
    src_uneven = PL([W(w, uneven, pd=0)], cuts("s", w, uneven, 0, [0, 256, 640], 2), model=MODEL)
    tgt_uneven = PL([Q(w, uneven, pd=0), S(s, uneven, pd=0)],
                    cuts("t", w, uneven, 0, [0, 384, 640], 1) + cuts("ts", s, blocks(uneven), 0, [0, 3, 5], 4), model=MODEL)
    P("uneven-shards", "Uneven source and target shards on block boundaries: the middle target reads from both sources.",
      src_uneven, tgt_uneven, one, ["realistic"])

    ragged = [200, 72]
    src_ragged = PL([W(w, ragged, pd=0)], cuts("s", w, ragged, 0, [0, 128, 200], 2), model=MODEL)
    tgt_ragged = PL([Q(w, ragged, pd=0), S(s, ragged, pd=0)],
                    cuts("t", w, ragged, 0, [0, 128, 200], 1) + cuts("ts", s, blocks(ragged), 0, [0, 1, 2], 4), model=MODEL)
    P("box-smaller-than-block", "A 200x72 tensor: the last row box (72x72) is smaller than a block and ends at the tensor's end.",
      src_ragged, tgt_ragged, one)
    tiny = [64, 96]
    P("tensor-smaller-than-block", "A 64x96 tensor is one partial block with one scale.",
      PL([W(w, tiny)], [F("s", w, [0, 0], tiny, prod(tiny) * 2)], model=MODEL),
      PL([Q(w, tiny), S(s, tiny)], [F("t", w, [0, 0], tiny, prod(tiny)), F("ts", s, [0, 0], [1, 1], 4)], model=MODEL), one)
    both = [300, 260]
    P("ragged-both-axes", "A 300x260 tensor (3x3 blocks, both edges partial), rows into columns.",
      PL([W(w, both, pd=0)], cuts("s", w, both, 0, [0, 256, 300], 2), model=MODEL),
      PL([Q(w, both, pd=1), S(s, both, pd=1)],
         cuts("t", w, both, 1, [0, 128, 260], 1) + cuts("ts", s, blocks(both), 1, [0, 1, 3], 4), model=MODEL), one)

    experts = [(f"e.{e}.weight", f"e.{e}.weight_scale_inv") for e in range(4)]
    eshape = [256, 128]
    src_ep2 = PL([W(t, eshape, layer=1, expert=e) for e, (t, _) in enumerate(experts)],
                 [F(f"a{e}", t, [0, 0], eshape, prod(eshape) * 2, ep=e // 2) for e, (t, _) in enumerate(experts)],
                 model=MODEL)
    tgt_ep4 = PL(sorted([Q(t, eshape, layer=1, expert=e) for e, (t, _) in enumerate(experts)]
                        + [S(x, eshape, layer=1, expert=e) for e, (_, x) in enumerate(experts)],
                        key=lambda d: d["tensor_id"]),
                 [F(f"b{e}", t, [0, 0], eshape, prod(eshape), ep=e) for e, (t, _) in enumerate(experts)]
                 + [F(f"b{e}s", x, [0, 0], [2, 1], 8, ep=e) for e, (_, x) in enumerate(experts)], model=MODEL)
    P("ep-regroup", "EP2 to EP4: every expert's FP8 weight and its scales move as whole contiguous regions.",
      src_ep2, tgt_ep4, spec(*experts), ["realistic"])
    stacked = [4, 256, 128]
    P("ep-stacked-3d", "Stacked experts [4, 256, 128] split on the expert axis, EP2 to EP4: scales [4, 2, 1] follow.",
      PL([W(w, stacked, pd=0)], cuts("s", w, stacked, 0, [0, 2, 4], 2, ep=lambda i: i), model=MODEL),
      PL([Q(w, stacked, pd=0), S(s, stacked, pd=0)],
         cuts("t", w, stacked, 0, [0, 1, 2, 3, 4], 1, ep=lambda i: i)
         + cuts("ts", s, blocks(stacked), 0, [0, 1, 2, 3, 4], 4, ep=lambda i: i), model=MODEL), one, ["realistic"])
    P("tp-inner-axis-3d", "A 3-D tensor split on its last axis: the scale boxes are the block images.",
      PL([W(w, stacked, pd=2)], cuts("s", w, stacked, 2, [0, 128], 2), model=MODEL),
      PL([Q(w, stacked, pd=1), S(s, stacked, pd=1)],
         cuts("t", w, stacked, 1, [0, 128, 256], 1) + cuts("ts", s, blocks(stacked), 1, [0, 1, 2], 4), model=MODEL), one)
    src_dp2 = PL([W(w, shape, pd=0)], cuts("a", w, shape, 0, [0, 256, 512], 2, dp=lambda i: 0, tp=lambda i: i)
                 + cuts("b", w, shape, 0, [0, 256, 512], 2, dp=lambda i: 1, tp=lambda i: i), model=MODEL)
    tgt_dp2 = PL([Q(w, shape, pd=0), S(s, shape, pd=0)],
                 [F(f"t{d}", w, [0, 0], shape, prod(shape), dp=d) for d in (0, 1)]
                 + [F(f"t{d}s", s, [0, 0], blocks(shape), 32, dp=d) for d in (0, 1)], model=MODEL)
    P("dp-replicas-same-dp", "Two DP replicas: each target engine quantizes from the source replica of its own dp.",
      src_dp2, tgt_dp2, one, ["realistic"])
    tgt_scale_repl = PL([Q(w, shape, pd=0), S(s, shape, sd=[])],
                        cuts("t", w, shape, 0, [0, 256, 512], 1)
                        + [F(f"ts/{i}", s, [0, 0], blocks(shape), 32, tp=i) for i in (0, 1)], model=MODEL)
    P("scale-replicated", "Each TP rank holds every scale (a replicated scale tensor): both read all scale blocks.",
      src_rows2, tgt_scale_repl, one)
    tgt_scale_none = PL([Q(w, shape, pd=0), S(s, shape)], cuts("t", w, shape, 0, [0, 256, 512], 1), model=MODEL)
    P("scale-without-fragments", "A scale tensor no target fragment holds needs no regions; the values still move.",
      src_rows2, tgt_scale_none, one)
    norm = T("norm", [256], itemsize=2)
    P("mixed-with-copied-tensor", "A quantized weight beside a bfloat16 norm: only the weight's regions carry a transform.",
      PL([norm, W(w, shape, pd=0)], cuts("s", w, shape, 0, [0, 256, 512], 2) + [F("n", "norm", [0], [256], 512)], model=MODEL),
      PL([norm, Q(w, shape, pd=0), S(s, shape, pd=0)],
         cuts("t", w, shape, 0, [0, 128, 256, 384, 512], 1) + cuts("ts", s, blocks(shape), 0, [0, 1, 2, 3, 4], 4)
         + [F("tn", "norm", [0], [256], 512)], model=MODEL), one)
    layered = [W("layers.0.w.weight", shape, pd=0, layer=0)]
    P("layer-ids", "A quantized tensor with a layer_id and its scale tensor of the same layer.",
      PL(layered, cuts("s", "layers.0.w.weight", shape, 0, [0, 256, 512], 2), model=MODEL),
      PL([Q("layers.0.w.weight", shape, pd=0, layer=0), S("layers.0.w.weight_scale_inv", shape, pd=0, layer=0)],
         cuts("t", "layers.0.w.weight", shape, 0, [0, 256, 512], 1)
         + cuts("ts", "layers.0.w.weight_scale_inv", blocks(shape), 0, [0, 2, 4], 4), model=MODEL),
      spec(("layers.0.w.weight", "layers.0.w.weight_scale_inv")))
    plain = PL([W(w, shape, pd=0)], cuts("t", w, shape, 0, [0, 128, 256, 384, 512], 2), model=MODEL)
    P("empty-spec", "A spec naming no tensors plans as without one: no region carries a transform.",
      src_rows2, plain, spec())
    tgt_scale_cols = PL([Q(w, shape, pd=0), S(s, shape, pd=1)],
                        cuts("t", w, shape, 0, [0, 256, 512], 1) + cuts("ts", s, blocks(shape), 1, [0, 1, 2], 4), model=MODEL)
    P("scale-split-otherwise", "Scales split on another axis than the values: each scale fragment reads both sources.",
      src_rows2, tgt_scale_cols, one)
    P("source-finer-than-blocks-of-target", "Source shards of one block row merge into a target of two block rows.",
      PL([W(w, shape, pd=0)], cuts("s", w, shape, 0, [0, 128, 256, 384, 512], 2), model=MODEL),
      PL([Q(w, shape, pd=0), S(s, shape, pd=0)],
         cuts("t", w, shape, 0, [0, 256, 512], 1) + cuts("ts", s, blocks(shape), 0, [0, 2, 4], 4), model=MODEL), one)

    # -- the spec document
    X("spec-not-object", "A spec must be a JSON object.", "quantization_document_invalid", src_rows2, tgt_rows4, "[]")
    X("spec-member-missing", "A spec without quant_method is not a spec.", "quantization_document_invalid",
      src_rows2, tgt_rows4, {k: v for k, v in one.items() if k != "quant_method"})
    X("spec-member-unknown", "A spec with an unknown member is not a spec.", "quantization_document_invalid",
      src_rows2, tgt_rows4, dict(one, activation_scheme="dynamic"))
    X("spec-fmt-e5m2", "Only fmt e4m3 is a spec's format.", "quantization_document_invalid",
      src_rows2, tgt_rows4, spec(WS, fmt="e5m2"))
    X("spec-method-int8", "Only quant_method fp8 is a spec's method.", "quantization_document_invalid",
      src_rows2, tgt_rows4, spec(WS, method="int8"))
    X("spec-entry-unknown-member", "A tensor entry with an unknown member is not a spec.", "quantization_document_invalid",
      src_rows2, tgt_rows4, dict(one, tensors=[{"scale_tensor_id": s, "tensor_id": w, "dtype": "fp8"}]))
    X("spec-entry-id-number", "A tensor_id must be a string.", "quantization_document_invalid",
      src_rows2, tgt_rows4, dict(one, tensors=[{"scale_tensor_id": s, "tensor_id": 7}]))
    X("spec-duplicate-tensor", "A tensor named twice: the second entry's tensor_id is the rejection.",
      "quantization_document_invalid", src_rows2, tgt_rows4, spec(WS, (w, "other_scale")))
    X("spec-scale-is-tensor", "One id as both a tensor and its own scale tensor.", "quantization_document_invalid",
      src_rows2, tgt_rows4, spec((w, w)))
    X("spec-shared-scale", "Two tensors naming one scale tensor.", "quantization_document_invalid",
      src_rows2, tgt_rows4, spec(WS, ("v.weight", s)))
    X("spec-block-64", "A 64x64 block is not supported.", "quantization_unsupported", src_rows2, tgt_rows4, spec(WS, block=(64, 64)))
    X("spec-block-one-axis", "A one-axis block_size is not supported.", "quantization_unsupported",
      src_rows2, tgt_rows4, spec(WS, block=(128,)))
    X("spec-read-before-model", "The spec is read before the placements are compared: its rejection comes first.",
      "quantization_document_invalid", src_rows2, m(tgt_rows4, {"/model_id": "example/other"}), "{}", ["order"])

    # -- the rules against the placements
    X("model-before-rules", "Different models are rejected before the spec's rules run (the scale tensor is missing too).",
      "plan_model_mismatch", src_rows2, m(tgt_rows4, {"/model_id": "example/other"}), spec((w, "missing")), ["order"])
    X("tensor-not-in-target", "A spec naming a tensor the target does not hold.", "quantization_tensor_missing",
      src_rows2, tgt_rows4, spec(WS, ("v.weight", "v.weight_scale_inv")))
    X("tensor-not-in-source", "A spec naming a tensor only the target holds.", "quantization_tensor_missing",
      src_rows2, m(tgt_rows4, {"/tensors/0/tensor_id": "a.weight", "/fragments": []}), spec(("a.weight", s)))
    X("tensor-id-empty", "An empty tensor_id names no tensor.", "quantization_tensor_missing", src_rows2, tgt_rows4, spec(("", s)))
    X("source-float16", "float16 to FP8 is not a supported pair.", "quantization_unsupported",
      m(src_rows2, {"/tensors/0/dtype": "float16"}), tgt_rows4, one)
    X("target-e5m2", "bfloat16 to float8_e5m2 is not a supported pair.", "quantization_unsupported",
      src_rows2, m(tgt_rows4, {"/tensors/0/dtype": "float8_e5m2"}), one)
    X("target-itemsize-2", "An FP8 dtype with itemsize 2 is not the supported pair.", "quantization_unsupported",
      src_rows2, m(tgt_rows4, {"/tensors/0/itemsize": 2, "/fragments/0/nbytes": 65536, "/fragments/1/nbytes": 65536,
                               "/fragments/2/nbytes": 65536, "/fragments/3/nbytes": 65536}), one)
    X("bf16-to-bf16", "A spec naming a tensor the target keeps in bfloat16.", "quantization_unsupported", src_rows2, plain, one)
    vec = [256]
    X("one-dimension", "A 1-D tensor has no 128x128 blocks.", "quantization_unsupported",
      PL([W(w, vec)], [F("s", w, [0], vec, 512)], model=MODEL),
      PL([Q(w, vec), T(s, [2], dtype="float32", itemsize=4)], [F("t", w, [0], vec, 256)], model=MODEL), one)
    X("scale-missing", "The target holds no scale tensor of the quantized tensor.", "quantization_scale_missing",
      src_rows2, PL([Q(w, shape, pd=0)], cuts("t", w, shape, 0, [0, 256, 512], 1), model=MODEL), one)
    X("scale-float16", "A float16 scale tensor is not the checkpoint's float32.", "quantization_scale_invalid",
      src_rows2, m(tgt_rows4, {"/tensors/1/dtype": "float16"}), one)
    X("scale-itemsize-8", "A float32 scale tensor with itemsize 8.", "quantization_scale_invalid",
      src_rows2, m(tgt_rows4, {"/tensors/1/itemsize": 8, "/fragments/4/nbytes": 16, "/fragments/5/nbytes": 16,
                               "/fragments/6/nbytes": 16, "/fragments/7/nbytes": 16}), one)
    X("scale-shape-floor", "A scale shape of floor(extent/128) misses the partial block of a 200x72 tensor.",
      "quantization_scale_invalid", src_ragged,
      PL([Q(w, ragged, pd=0), T(s, [1, 1], pd=0, dtype="float32", itemsize=4)],
         cuts("t", w, ragged, 0, [0, 128, 200], 1), model=MODEL), one)
    X("scale-shape-transposed", "A scale tensor of [2, 4] for a 512x256 tensor (the blocks are [4, 2]).",
      "quantization_scale_invalid", src_rows2,
      PL([Q(w, shape, pd=0), T(s, [2, 4], dtype="float32", itemsize=4)], cuts("t", w, shape, 0, [0, 256, 512], 1), model=MODEL), one)
    X("scale-other-layer", "A scale tensor of another layer than its tensor.", "quantization_scale_invalid",
      src_rows2, m(tgt_rows4, {"/tensors/1/layer_id": 3}), one)
    X("scale-in-source", "The source holds the scale tensor too: scales are the target's alone.", "quantization_scale_invalid",
      PL([W(w, shape, pd=0), T(s, blocks(shape), dtype="float32", itemsize=4)],
         cuts("s", w, shape, 0, [0, 256, 512], 2) + [F("ss", s, [0, 0], blocks(shape), 32)], model=MODEL), tgt_rows4, one)
    X("scale-missing-before-cut", "A missing scale tensor is reported before a target box that cuts a block.",
      "quantization_scale_missing", src_rows2,
      PL([Q(w, shape, pd=0)], cuts("t", w, shape, 0, [0, 64, 512], 1), model=MODEL), one, ["order"])
    tgt_rows64 = PL([Q(w, shape, pd=0), S(s, shape, pd=0)],
                    cuts("t", w, shape, 0, list(range(0, 513, 64)), 1) + cuts("ts", s, blocks(shape), 0, [0, 1, 2, 3, 4], 4),
                    model=MODEL)
    X("target-cuts-rows", "TP8 target shards of 64 rows share each block: no one target owns its scale.",
      "quantization_block_cut", src_rows2, tgt_rows64, one)
    X("target-cuts-cols", "A target column split at 192 cuts the second column of blocks.", "quantization_block_cut",
      src_rows2, PL([Q(w, shape, pd=1), S(s, shape, pd=1)], cuts("t", w, shape, 1, [0, 192, 256], 1), model=MODEL), one)
    X("target-ends-inside-block", "A target box ending at row 200 of 512 ends inside a block.", "quantization_block_cut",
      src_rows2, PL([Q(w, shape, pd=0), S(s, shape)], cuts("t", w, shape, 0, [0, 200, 512], 1), model=MODEL), one)
    X("target-cut-before-source-cut", "Both sides cut blocks: the same code, found on the target first.", "quantization_block_cut",
      src_rows8, tgt_rows64, one, ["order"])
    X("unnamed-fp8-tensor", "An FP8 target tensor the spec does not name is a tensor mismatch.", "plan_tensor_mismatch",
      src_rows2, m(tgt_rows4, {"/tensors": [Q(w, shape, pd=0)], "/fragments": tgt_rows4["fragments"][:4]}), spec())
    X("quantized-shape-differs", "A quantized tensor must keep its global_shape.", "plan_tensor_mismatch",
      PL([W(w, [512, 384], pd=0)], cuts("s", w, [512, 384], 0, [0, 256, 512], 2), model=MODEL), tgt_rows4, one)
    X("quantized-source-gap", "A quantized tensor whose source misses a shard has no cover.", "plan_uncovered_tensor",
      m(src_rows2, {"/fragments": src_rows2["fragments"][:1]}), tgt_rows4, one)
    X("limit-counts-scale-regions", "Scale regions count against max_regions: 4 value and 4 scale regions exceed 7.",
      "plan_limit_exceeded", src_rows2, tgt_rows4, one, max_regions=7)
