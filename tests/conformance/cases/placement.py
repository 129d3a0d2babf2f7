"""placement/ : placement.parse (§6.2, §2.1-§2.3, §8.1-§8.3)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# placement/ : placement.parse (§6.2, §2.1-§2.3, §8.1-§8.3)

def cases_placement():
    op = "placement.parse"
    g = "placement/"

    def P(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    # -- accepted
    P("tp2-dense-block", "A TP=2 dense block (row split, column split, replicated norm) is accepted and normalised.", PB, ["realistic"])
    P("tp2-dense-block-pretty", "An indented spelling of the TP=2 block gives the same canonical text and ids as the compact one.", pretty(PB), ["realistic"])
    P("tp2-dense-block-reordered", "Tensors and fragments given in reverse order give the same canonical text and ids (§13 order independence).",
      m(PB, {"/tensors": PB["tensors"][::-1], "/fragments": PB["fragments"][::-1]}), ["order"])
    P("tp2-dense-block-canonical-input", "The canonical emission of the TP=2 block parses back to exactly itself (§13.1).",
      oracle(op, {"document": render(PB)})["canonical"])
    P("tp2-dense-block-given-id", "A placement_id equal to the canonical id is accepted.", m(PB, {"/placement_id": PB_ID}))
    P("given-id-with-reordered-content", "A given placement_id is compared with the id of the normalised content, so reordered input still matches.",
      m(PB, {"/placement_id": PB_ID, "/fragments": PB["fragments"][::-1]}), ["order"])
    P("aliases-unsorted", "Aliases given out of code point order are accepted and emitted sorted.",
      m(PB, {"/fragments/0/aliases": ["zeta", "alpha", "Mid"]}))
    P("aliases-sorted", "The same aliases given sorted give the same ids as the unsorted spelling.",
      m(PB, {"/fragments/0/aliases": ["Mid", "alpha", "zeta"]}), ["order"])
    P("aliases-single-name", "A one-name alias list is valid in a placement (no alias rule applies to placements, §8.5).",
      m(PB, {"/fragments/2/aliases": ["tied.weight"]}))
    for name, pd, sd in (("spelling-partition-dim-only", 0, None), ("spelling-shard-dims-only", None, [0]),
                         ("spelling-both", 0, [0])):
        P(name, f"Descriptor spelling partition_dim={pd}, shard_dims={sd} is canonicalised to partition_dim 0, shard_dims [0] (§3).",
          m(PB, {"/tensors/0/partition_dim": pd, "/tensors/0/shard_dims": sd}), ["canonical"])
    P("spelling-replicated-empty-shard-dims", "shard_dims [] with partition_dim null is the same replicated descriptor as null/null (§3).",
      m(PB, {"/tensors/2/shard_dims": []}), ["canonical"])
    grid = PL([T("experts.w", [8, 8], sd=[0, 1], expert=0)],
              [F(f"w/{i}{j}", "experts.w", [4 * i, 4 * j], [4, 4], 32, tp=2 * i + j) for i in (0, 1) for j in (0, 1)],
              model="example/nd")
    P("nd-shard-dims-2x2-grid", "A tensor with shard_dims [0, 1] split into a 2x2 grid over four TP ranks is accepted.", grid, ["realistic"])
    P("nd-shard-dims-touching-same-rank", "Four boxes of a 2x2 grid on one rank only touch and do not overlap (§8.3).",
      m(grid, {f"/fragments/{k}/rank/tp": 0 for k in range(4)}), ["overlap"])
    P("overlap-one-axis-only", "Boxes that overlap on axis 0 but only touch on axis 1 do not intersect.",
      PL([T("w", [8, 8], sd=[0, 1])], [F("a", "w", [0, 0], [4, 4], 32), F("b", "w", [2, 4], [4, 4], 32)]), ["overlap"])
    P("dp-replicas-same-box", "The same boxes on dp 0 and dp 1 are replicas and allowed (§17).",
      m(PB, {"/fragments/6": F("qkv/dp1/tp0", QKV, [0, 0], [4, 4], 32, dp=1, tp=0),
             "/fragments/7": F("norm/dp1/tp0", NORM, [0], [4], 8, dp=1)}), ["realistic"])
    P("overlap-across-tp-ranks", "Partially overlapping boxes of one tensor on different TP ranks are allowed.",
      PL([T("w", [8], pd=0)], [F("a", "w", [0], [6], 12, tp=0), F("b", "w", [2], [6], 12, tp=1)]), ["overlap"])
    P("tensor-without-fragments", "A tensor that no fragment covers is valid (coverage is not a rule, §17).",
      m(PB, {"/tensors/3": T("unused.weight", [2, 2])}))
    P("partial-coverage", "Fragments that cover only part of a sharded tensor are valid.",
      m(PB, {"/fragments": PB["fragments"][:1] + PB["fragments"][2:]}))
    P("empty-placement", "A placement with no tensors and no fragments is valid (§17).", PL([], [], model="m", rev="r"))
    P("u64-max-shape-and-nbytes", "global_shape, local_shape and nbytes of 2^64-1 are accepted (u64 bound, §1.2).",
      PL([T("huge", [U64], itemsize=1)], [F("huge/0", "huge", [0], [U64], U64)]), ["u64"])
    P("u64-max-rank-layer-expert", "Rank coordinates, layer_id and expert_id of 2^64-1 are accepted.",
      PL([T("e", [4], layer=U64, expert=U64)], [F("e/0", "e", [0], [4], 8, dp=U64, tp=U64, pp=U64, ep=U64)]), ["u64"])
    P("u64-max-offset-in-bounds", "A global_offset of 2^64-2 with extent 1 ends exactly at global_shape 2^64-1.",
      PL([T("long", [U64], pd=0, itemsize=1)], [F("long/last", "long", [U64 - 1], [1], 1)]), ["u64"])
    P("negative-zero-is-zero", "-0 in global_offset and rank coordinates reads as the integer 0 and gives the same ids as 0 (§4.3).",
      m(PB, {"/fragments/0/global_offset": [Raw("-0"), Raw("-0")], "/fragments/0/rank/dp": Raw("-0")}), ["reader"])
    P("non-ascii-ids-escaped", "Non-ASCII model_id, tensor_id and aliases are held as scalars and emitted with lowercase \\u escapes (§5).",
      PL([T("嵌入.weight", [4], fp="fp:ü")], [F("frag/γ", "嵌入.weight", [0], [4], 8, aliases=["😀", "é"])], model="模型/ü", rev="révision"),
      ["unicode"])
    P("code-point-order-not-utf16", "Fragments are sorted by code point (U+FF61 before U+1F600), not by UTF-16 code units.",
      PL([T("w", [4])], [F("a\U0001F600", "w", [0], [4], 8, tp=0), F("a\uFF61", "w", [0], [4], 8, tp=1)]), ["unicode", "order"])
    P("uppercase-sorts-first", "Tensor ids sort by code point, so 'B' sorts before 'a'.",
      PL([T("a", [4]), T("B", [4])], [F("f", "a", [0], [4], 8), F("F", "B", [0], [4], 8)]), ["order"])
    P("explicit-logical-looking-id", "An explicit placement_fragment_id that looks like a generated logical id is an ordinary string.",
      m(PB, {"/fragments/0/placement_fragment_id": "logical:" + "0" * 64}))
    P("layer-and-expert-ids", "layer_id and expert_id values enter the canonical descriptor unchanged.",
      m(PB, {"/tensors/0/layer_id": 7, "/tensors/0/expert_id": 3}))

    # -- structure (fields_mismatch, not_a_sequence, not_an_object)
    X("top-missing-revision", "A top level without revision does not have the five keys of §6.1.", "fields_mismatch", m(PB, {"/revision": DEL}), "", ["structure"])
    X("top-missing-placement-id", "placement_id must be present (it may be null) in the strict top-level key set.", "fields_mismatch", m(PB, {"/placement_id": DEL}), "", ["structure"])
    X("top-extra-schema-key", "A schema member is not part of the wire form (§6.1, §17).", "fields_mismatch", m(PB, {"/schema": "weight-placement"}), "", ["structure"])
    X("top-extra-unknown-key", "An unknown top-level member fails the strict key set.", "fields_mismatch", m(PB, {"/comment": "x"}), "", ["structure"])
    X("tensor-missing-shard-dims", "A tensor without shard_dims does not have the nine keys (shard_dims is nullable, not optional).", "fields_mismatch", m(PB, {"/tensors/1/shard_dims": DEL}), "/tensors/1", ["structure"])
    X("tensor-missing-expert-id", "A tensor without expert_id does not have the nine keys.", "fields_mismatch", m(PB, {"/tensors/0/expert_id": DEL}), "/tensors/0", ["structure"])
    X("tensor-extra-key", "A tensor with an extra member fails its key set.", "fields_mismatch", m(PB, {"/tensors/2/stride": [1]}), "/tensors/2", ["structure"])
    X("tensor-not-an-object", "A tensor element that is a string fails the tensor key set.", "fields_mismatch", m(PB, {"/tensors/1": "tensor"}), "/tensors/1", ["structure"])
    X("tensor-null", "A tensor element that is null fails the tensor key set.", "fields_mismatch", m(PB, {"/tensors/0": None}), "/tensors/0", ["structure"])
    X("fragment-missing-aliases", "A fragment without aliases does not have the seven keys (aliases is required on the wire).", "fields_mismatch", m(PB, {"/fragments/3/aliases": DEL}), "/fragments/3", ["structure"])
    X("fragment-extra-address", "A physical member in a placement fragment fails its key set (§6.1).", "fields_mismatch", m(PB, {"/fragments/0/address": 4096}), "/fragments/0", ["structure"])
    X("fragment-not-an-object", "A fragment element that is an array fails the fragment key set.", "fields_mismatch", m(PB, {"/fragments/1": []}), "/fragments/1", ["structure"])
    X("rank-missing-ep", "A rank without ep does not have exactly dp, tp, pp, ep.", "fields_mismatch", m(PB, {"/fragments/2/rank/ep": DEL}), "/fragments/2/rank", ["structure"])
    X("rank-extra-key", "A rank with a group size member fails the rank key set.", "fields_mismatch", m(PB, {"/fragments/0/rank/tp_size": 2}), "/fragments/0/rank", ["structure"])
    X("rank-not-an-object", "A rank that is an integer fails the rank key set.", "fields_mismatch", m(PB, {"/fragments/0/rank": 0}), "/fragments/0/rank", ["structure"])
    X("rank-null", "A rank that is null fails the rank key set.", "fields_mismatch", m(PB, {"/fragments/5/rank": None}), "/fragments/5/rank", ["structure"])
    X("tensors-not-an-array", "tensors that is an object fails SEQ(placement tensors).", "not_a_sequence", m(PB, {"/tensors": {}}), "/tensors", ["structure"])
    X("tensors-null", "tensors that is null fails SEQ(placement tensors).", "not_a_sequence", m(PB, {"/tensors": None}), "/tensors", ["structure"])
    X("fragments-not-an-array", "fragments that is a string fails SEQ(placement fragments).", "not_a_sequence", m(PB, {"/fragments": "none"}), "/fragments", ["structure"])
    X("top-level-array", "A placement document whose top level is an array is not an object.", "not_an_object", [PB], "", ["structure"])
    X("top-level-string", "A placement document whose top level is a string is not an object.", "not_an_object", '"placement"', "", ["structure"])
    X("order-top-keys-before-tensors", "The top-level key set is checked before tensors is read.", "fields_mismatch",
      m(PB, {"/extra": 1, "/tensors": "x"}), "", ["order"])
    X("order-tensor-keys-before-fragment-keys", "All tensors are checked before any fragment.", "fields_mismatch",
      m(PB, {"/tensors/2/extra": 1, "/fragments/0/extra": 1}), "/tensors/2", ["order"])
    X("order-tensor-values-before-fragment-keys", "A tensor value check fails before a later fragment's key set is looked at.", "below_minimum",
      m(PB, {"/tensors/1/itemsize": 0, "/fragments/0/extra": 1}), "/tensors/1/itemsize", ["order"])
    X("order-tensor-checked-before-next-tensor-keys", "Each tensor's checks run before the next tensor's key set is checked.", "below_minimum",
      m(PB, {"/tensors/0/itemsize": 0, "/tensors/1/extra": 1}), "/tensors/0/itemsize", ["order"])
    X("order-tensors-before-fragments-sequence", "A tensor value check fails before fragments is checked to be an array.", "empty_string",
      m(PB, {"/tensors/0/dtype": "", "/fragments": "x"}), "/tensors/0/dtype", ["order"])
    X("order-fragment-keys-before-rank-keys", "A fragment's key set is checked before its rank's key set.", "fields_mismatch",
      m(PB, {"/fragments/0/extra": 1, "/fragments/0/rank": {}}), "/fragments/0", ["order"])
    X("order-rank-keys-before-rank-values", "The rank key set is checked before rank values.", "fields_mismatch",
      m(PB, {"/fragments/0/rank/tp": DEL, "/fragments/0/rank/dp": -1}), "/fragments/0/rank", ["order"])
    X("order-rank-before-fragment-values", "Rank values are checked before the fragment's own members.", "not_an_integer",
      m(PB, {"/fragments/0/rank/dp": "0", "/fragments/0/global_offset": "x"}), "/fragments/0/rank/dp", ["order"])

    # -- descriptor checks (§2.2)
    D = "/tensors/1"
    for name, val, code, what in (
        ("global-shape-not-array", 8, "not_a_sequence", "an integer"),
        ("global-shape-null", None, "not_a_sequence", "null"),
        ("global-shape-empty", [], "empty_shape", "[]"),
        ("global-shape-zero-extent", [4, 0], "below_minimum", "an extent of 0"),
        ("global-shape-float-extent", [4, Raw("8.0")], "not_an_integer", "an extent written 8.0"),
        ("global-shape-string-extent", [4, "8"], "not_an_integer", "an extent written as a string"),
        ("global-shape-u64-overflow", [4, U64 + 1], "u64_overflow", "an extent of 2^64"),
    ):
        X(name, f"global_shape given as {what} fails the global_shape check of §2.2 step 1.", code, m(PB, {D + "/global_shape": val}), D + "/global_shape", ["descriptor"])
    X("order-empty-shape-before-tensor-id", "empty_shape (step 1) wins over an empty tensor_id (step 2).", "empty_shape",
      m(PB, {D + "/global_shape": [], D + "/tensor_id": ""}), D + "/global_shape", ["order"])
    X("order-shape-extent-before-tensor-id", "A zero extent in global_shape wins over an empty tensor_id.", "below_minimum",
      m(PB, {D + "/global_shape": [0, 8], D + "/tensor_id": ""}), D + "/global_shape", ["order"])
    for name, val, what in (("tensor-id-empty", "", '""'), ("tensor-id-null", None, "null"), ("tensor-id-number", 5, "a number")):
        X(name, f"tensor_id given as {what} fails STR(tensor_id).", "empty_string", m(PB, {D + "/tensor_id": val}), D + "/tensor_id", ["descriptor"])
    X("order-tensor-id-before-dtype", "STR(tensor_id) runs before STR(dtype).", "empty_string",
      m(PB, {D + "/tensor_id": "", D + "/dtype": ""}), D + "/tensor_id", ["order"])
    X("dtype-empty", "An empty dtype fails STR(dtype).", "empty_string", m(PB, {D + "/dtype": ""}), D + "/dtype", ["descriptor"])
    X("dtype-null", "A null dtype fails STR(dtype).", "empty_string", m(PB, {D + "/dtype": None}), D + "/dtype", ["descriptor"])
    for name, val, code, what in (
        ("itemsize-zero", 0, "below_minimum", "0"),
        ("itemsize-negative", -2, "below_minimum", "-2"),
        ("itemsize-huge-negative", Raw("-18446744073709551616"), "below_minimum", "-2^64 (negative wins over magnitude)"),
        ("itemsize-float", Raw("2.0"), "not_an_integer", "2.0"),
        ("itemsize-exponent", Raw("3.2e1"), "not_an_integer", "3.2e1"),
        ("itemsize-huge-exponent", Raw("1e400"), "not_an_integer", "1e400"),
        ("itemsize-true", True, "not_an_integer", "true"),
        ("itemsize-string", "2", "not_an_integer", '"2"'),
        ("itemsize-null", None, "not_an_integer", "null"),
        ("itemsize-u64-overflow", U64 + 1, "u64_overflow", "2^64"),
        ("itemsize-many-digits", Raw("1" + "0" * 40), "u64_overflow", "10^40"),
    ):
        X(name, f"itemsize {what} fails INT(itemsize, 1).", code, m(PB, {D + "/itemsize": val}), D + "/itemsize", ["descriptor", "integer"])
    X("order-dtype-before-itemsize", "STR(dtype) runs before INT(itemsize).", "empty_string",
      m(PB, {D + "/dtype": "", D + "/itemsize": 0}), D + "/dtype", ["order"])
    for name, val, code, what in (
        ("partition-dim-out-of-range", 2, "partition_dim_out_of_range", "2 on a 2-D tensor"),
        ("partition-dim-u64-max-out-of-range", U64, "partition_dim_out_of_range", "2^64-1"),
        ("partition-dim-negative", -1, "below_minimum", "-1"),
        ("partition-dim-string", "1", "not_an_integer", '"1"'),
        ("partition-dim-float", Raw("1.0"), "not_an_integer", "1.0"),
        ("partition-dim-u64-overflow", U64 + 1, "u64_overflow", "2^64"),
    ):
        X(name, f"partition_dim {what} fails §2.2 step 5.", code, m(PB, {D + "/partition_dim": val}), D + "/partition_dim", ["descriptor"])
    X("order-itemsize-before-partition-dim", "INT(itemsize) runs before the partition_dim checks.", "below_minimum",
      m(PB, {D + "/itemsize": 0, D + "/partition_dim": 9}), D + "/itemsize", ["order"])
    S = D + "/shard_dims"
    for name, pd, sd, code, what in (
        ("shard-dims-not-array", None, "0", "not_a_sequence", 'the string "0"'),
        ("shard-dims-negative", None, [0, -1], "below_minimum", "[0, -1]"),
        ("shard-dims-float", None, [Raw("0.0")], "not_an_integer", "[0.0]"),
        ("shard-dims-duplicate", None, [0, 0], "shard_dims_duplicate", "[0, 0]"),
        ("shard-dims-unsorted", None, [1, 0], "shard_dims_unsorted", "[1, 0]"),
        ("shard-dims-out-of-range", None, [0, 2], "shard_dims_out_of_range", "[0, 2] on a 2-D tensor"),
        ("shard-dims-conflict-other-dim", 1, [0], "partition_dim_conflict", "[0] with partition_dim 1"),
        ("shard-dims-conflict-empty", 1, [], "partition_dim_conflict", "[] with partition_dim 1"),
        ("shard-dims-conflict-two-dims", 1, [0, 1], "partition_dim_conflict", "[0, 1] with partition_dim 1"),
        ("order-shard-dims-duplicate-before-unsorted", None, [1, 0, 0], "shard_dims_duplicate", "[1, 0, 0] (duplicate and unsorted)"),
        ("order-shard-dims-unsorted-before-range", None, [3, 2], "shard_dims_unsorted", "[3, 2] (unsorted and out of range)"),
        ("order-shard-dims-range-before-conflict", 1, [5], "shard_dims_out_of_range", "[5] with partition_dim 1 (out of range and conflicting)"),
    ):
        X(name, f"shard_dims {what} fails §2.2 step 6.", code, m(PB, {D + "/partition_dim": pd, S: sd}), S, ["descriptor"] + (["order"] if name.startswith("order") else []))
    X("order-partition-dim-before-shard-dims", "partition_dim out of range (step 5) wins over duplicate shard_dims (step 6).", "partition_dim_out_of_range",
      m(PB, {D + "/partition_dim": 7, S: [0, 0]}), D + "/partition_dim", ["order"])
    X("order-shard-dims-before-layer-id", "The shard_dims checks run before INT(layer_id).", "shard_dims_duplicate",
      m(PB, {D + "/partition_dim": None, S: [0, 0], D + "/layer_id": -1}), S, ["order"])
    for name, field, val, code in (
        ("layer-id-negative", "layer_id", -1, "below_minimum"),
        ("layer-id-string", "layer_id", "0", "not_an_integer"),
        ("layer-id-u64-overflow", "layer_id", U64 + 1, "u64_overflow"),
        ("expert-id-float", "expert_id", Raw("1.5"), "not_an_integer"),
        ("expert-id-negative", "expert_id", -3, "below_minimum"),
        ("expert-id-boolean", "expert_id", False, "not_an_integer"),
    ):
        X(name, f"{field} {render(val)} fails INT({field}, 0).", code, m(PB, {f"{D}/{field}": val}), f"{D}/{field}", ["descriptor"])
    X("order-layer-id-before-expert-id", "INT(layer_id) runs before INT(expert_id).", "below_minimum",
      m(PB, {D + "/layer_id": -1, D + "/expert_id": "x"}), D + "/layer_id", ["order"])
    X("order-expert-id-before-fingerprint", "INT(expert_id) runs before STR(layout_fingerprint).", "not_an_integer",
      m(PB, {D + "/expert_id": "x", D + "/layout_fingerprint": ""}), D + "/expert_id", ["order"])
    X("layout-fingerprint-empty", "An empty layout_fingerprint fails STR (step 9).", "empty_string", m(PB, {D + "/layout_fingerprint": ""}), D + "/layout_fingerprint", ["descriptor"])
    X("layout-fingerprint-null", "A null layout_fingerprint fails STR (it is required and not nullable).", "empty_string", m(PB, {D + "/layout_fingerprint": None}), D + "/layout_fingerprint", ["descriptor"])

    # -- fragment checks (§2.1, §2.3)
    G = "/fragments/2"
    for name, field, val, code in (
        ("global-offset-not-array", "global_offset", "0,0", "not_a_sequence"),
        ("global-offset-negative", "global_offset", [0, -1], "below_minimum"),
        ("global-offset-float", "global_offset", [0, Raw("0.0")], "not_an_integer"),
        ("global-offset-u64-overflow", "global_offset", [U64 + 1, 0], "u64_overflow"),
        ("local-shape-zero", "local_shape", [0, 4], "below_minimum"),
        ("local-shape-not-array", "local_shape", {"0": 4}, "not_a_sequence"),
        ("local-shape-null-element", "local_shape", [4, None], "not_an_integer"),
        ("placement-fragment-id-empty", "placement_fragment_id", "", "empty_string"),
        ("placement-fragment-id-null", "placement_fragment_id", None, "empty_string"),
        ("fragment-tensor-id-empty", "tensor_id", "", "empty_string"),
        ("nbytes-zero", "nbytes", 0, "below_minimum"),
        ("nbytes-string", "nbytes", "32", "not_an_integer"),
        ("nbytes-exponent", "nbytes", Raw("3.2e1"), "not_an_integer"),
        ("nbytes-u64-overflow", "nbytes", U64 + 1, "u64_overflow"),
    ):
        X(name, f"Fragment {field} {render(val)} fails its §2.3 check.", code, m(PB, {f"{G}/{field}": val}), f"{G}/{field}", ["fragment"])
    X("order-global-offset-before-local-shape", "INTS(global_offset) runs before INTS(local_shape).", "below_minimum",
      m(PB, {G + "/global_offset": [-1, 0], G + "/local_shape": "x"}), G + "/global_offset", ["order"])
    X("order-local-shape-before-fragment-id", "INTS(local_shape) runs before STR(placement_fragment_id).", "below_minimum",
      m(PB, {G + "/local_shape": [0, 4], G + "/placement_fragment_id": ""}), G + "/local_shape", ["order"])
    X("order-nbytes-before-aliases", "INT(nbytes) runs before ALIASES.", "below_minimum",
      m(PB, {G + "/nbytes": 0, G + "/aliases": None}), G + "/nbytes", ["order"])
    for name, coord, val, code in (
        ("rank-dp-negative", "dp", -1, "below_minimum"),
        ("rank-tp-string", "tp", "1", "not_an_integer"),
        ("rank-pp-null", "pp", None, "not_an_integer"),
        ("rank-ep-u64-overflow", "ep", U64 + 1, "u64_overflow"),
        ("rank-ep-float", "ep", Raw("1.0"), "not_an_integer"),
    ):
        X(name, f"Rank coordinate {coord} {render(val)} fails INT(parallel rank {coord}, 0).", code,
          m(PB, {f"{G}/rank/{coord}": val}), f"{G}/rank/{coord}", ["rank"])
    X("order-rank-dp-before-tp", "Rank checks run in the order dp, tp, pp, ep.", "below_minimum",
      m(PB, {G + "/rank/dp": -1, G + "/rank/tp": "x"}), G + "/rank/dp", ["order"])
    X("order-rank-pp-before-ep", "INT on pp runs before INT on ep, although ep comes first on the wire.", "not_an_integer",
      m(PB, {G + "/rank/ep": -1, G + "/rank/pp": "x"}), G + "/rank/pp", ["order"])
    for name, val, code in (
        ("aliases-null", None, "aliases_invalid"),
        ("aliases-string", "lm_head.weight", "aliases_invalid"),
        ("aliases-object", {}, "aliases_invalid"),
        ("aliases-empty-name", ["a", ""], "aliases_invalid"),
        ("aliases-number-element", ["a", 1], "aliases_invalid"),
        ("aliases-duplicate", ["a", "b", "a"], "aliases_duplicate"),
        ("order-aliases-invalid-before-duplicate", ["a", "a", ""], "aliases_invalid"),
    ):
        X(name, f"aliases {render(val)} fails ALIASES.", code, m(PB, {G + "/aliases": val}), G + "/aliases", ["aliases"])
    X("aliases-duplicate-after-unescape", "Aliases 'a' and '\\u0061' are equal after unescaping and so duplicates.", "aliases_duplicate",
      m(PB, {G + "/aliases": ["a", Raw('"\\u0061"')]}), G + "/aliases", ["aliases", "reader"])

    # -- construction (§8.1)
    X("model-id-empty", "An empty model_id fails STR(model_id).", "empty_string", m(PB, {"/model_id": ""}), "/model_id")
    X("model-id-null", "A null model_id fails STR(model_id).", "empty_string", m(PB, {"/model_id": None}), "/model_id")
    X("revision-number", "A numeric revision fails STR(revision).", "empty_string", m(PB, {"/revision": 1}), "/revision")
    X("order-model-id-before-revision", "STR(model_id) runs before STR(revision).", "empty_string",
      m(PB, {"/model_id": "", "/revision": ""}), "/model_id", ["order"])
    X("order-fragments-before-model-id", "model_id is checked only after every fragment's own checks.", "below_minimum",
      m(PB, {"/model_id": "", "/fragments/5/nbytes": 0}), "/fragments/5/nbytes", ["order"])
    X("order-model-id-before-fragment-set", "STR(model_id) (§8.1 step 5) runs before the fragment-set rules (step 6).", "empty_string",
      m(PB, {"/model_id": "", "/tensors/1/tensor_id": QKV}), "/model_id", ["order"])
    X("placement-id-empty", "An empty placement_id fails STR(placement_id).", "empty_string", m(PB, {"/placement_id": ""}), "/placement_id")
    X("placement-id-number", "A numeric placement_id fails STR(placement_id).", "empty_string", m(PB, {"/placement_id": 7}), "/placement_id")
    X("placement-id-wrong", "A placement_id that is not the canonical id is rejected.", "placement_id_mismatch",
      m(PB, {"/placement_id": "sha256:" + "0" * 64}))
    X("placement-id-of-other-placement", "The placement_id of another placement (W1) is rejected.", "placement_id_mismatch",
      m(PB, {"/placement_id": ref_json("w1.expected.json")["placement_id"]}))
    X("placement-id-uppercase", "The canonical id written in uppercase hex is a different string and is rejected.", "placement_id_mismatch",
      m(PB, {"/placement_id": "sha256:" + PB_ID[7:].upper()}))
    X("placement-id-without-prefix", "The canonical id without its sha256: prefix is rejected.", "placement_id_mismatch",
      m(PB, {"/placement_id": PB_ID[7:]}))
    X("placement-id-digest-confused", "The digest given as placement_id is rejected (the two identities differ, §7).", "placement_id_mismatch",
      m(PB, {"/placement_id": "sha256:" + oracle(op, {"document": render(PB)})["digest"]}))
    X("placement-id-of-content-change", "Changing one descriptor field (dtype) makes the old placement_id a mismatch (§7.1).", "placement_id_mismatch",
      m(PB, {"/placement_id": PB_ID, "/tensors/2/dtype": "float32"}))
    X("placement-id-of-alias-change", "Adding an alias changes the placement_id, so the old id is a mismatch.", "placement_id_mismatch",
      m(PB, {"/placement_id": PB_ID, "/fragments/0/aliases": ["x", "y"]}))
    X("order-fragment-set-before-placement-id", "The fragment-set rules run before placement_id is checked.", "fragment_overlap",
      m(PB, {"/placement_id": "", "/fragments/1/rank/tp": 0, "/fragments/1/global_offset": [2, 0]}), tags=["order"])

    # -- fragment-set rules (§8.2, §8.3)
    X("duplicate-tensor-id", "Two tensors with one tensor_id are rejected (T1).", "duplicate_tensor_id", m(PB, {"/tensors/3": T(NORM, [4])}), tags=["fragment-set"])
    X("duplicate-tensor-id-different-shape", "Two tensors with one tensor_id and different shapes are rejected (T1).", "duplicate_tensor_id",
      m(PB, {"/tensors/3": T(QKV, [2])}), tags=["fragment-set"])
    X("order-duplicate-tensor-before-fragments", "T1 runs before any fragment rule.", "duplicate_tensor_id",
      m(PB, {"/tensors/3": T(NORM, [4]), "/fragments/0/tensor_id": "nowhere"}), tags=["order"])
    X("duplicate-fragment-id", "Two fragments with one placement_fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(PB, {"/fragments/1/placement_fragment_id": "qkv/tp0"}), tags=["fragment-set"])
    X("order-duplicate-id-before-duplicate-logical", "A fragment repeated with the same id and box fails F1 before F2.", "duplicate_fragment_id",
      m(PB, {"/fragments/6": PB["fragments"][4]}), tags=["order"])
    X("duplicate-logical-fragment", "The same tensor, rank and box under two ids is a duplicate logical fragment (F2), not an overlap.", "duplicate_logical_fragment",
      m(PB, {"/fragments/6": F("norm/tp0-copy", NORM, [0], [4], 8, tp=0)}), tags=["fragment-set"])
    X("duplicate-logical-fragment-other-aliases", "Aliases and nbytes are not part of the F2 key, so a copy with other aliases and nbytes is a duplicate.", "duplicate_logical_fragment",
      m(PB, {"/fragments/6": F("qkv/tp0-copy", QKV, [0, 0], [4, 4], 64, aliases=["x", "y"], tp=0)}), tags=["fragment-set"])
    X("unknown-tensor-id", "A fragment whose tensor_id names no tensor is rejected (F3).", "unknown_tensor_id",
      m(PB, {"/fragments/3/tensor_id": "layers.0.attn.k.weight"}), tags=["fragment-set"])
    X("fragment-rank-mismatch-offset", "A 1-element global_offset on a 2-D tensor is rejected (F4).", "fragment_rank_mismatch",
      m(PB, {"/fragments/0/global_offset": [0]}), tags=["fragment-set"])
    X("fragment-rank-mismatch-shape", "A 3-element local_shape on a 2-D tensor is rejected (F4).", "fragment_rank_mismatch",
      m(PB, {"/fragments/0/local_shape": [4, 4, 1]}), tags=["fragment-set"])
    X("fragment-out-of-bounds", "A box that ends past global_shape on the split axis is rejected (F5).", "fragment_out_of_bounds",
      m(PB, {"/fragments/1/global_offset": [6, 0]}), tags=["fragment-set"])
    X("fragment-out-of-bounds-u64-sum", "offset + extent above 2^64-1 is out of bounds (F5 with overflow).", "fragment_out_of_bounds",
      PL([T("long", [U64], pd=0, itemsize=1)], [F("long/x", "long", [U64], [1], 1)]), tags=["fragment-set", "u64"])
    X("replicated-fragment-offset", "A replicated tensor's fragment with a non-zero in-bounds offset is rejected (F6a before F6b).", "replicated_fragment_offset",
      m(PB, {"/fragments/4/global_offset": [2], "/fragments/4/local_shape": [2], "/fragments/4/nbytes": 4}), tags=["fragment-set"])
    X("replicated-fragment-incomplete", "A replicated tensor's fragment that covers only part of it is rejected (F6b).", "replicated_fragment_incomplete",
      m(PB, {"/fragments/5/local_shape": [2], "/fragments/5/nbytes": 4}), tags=["fragment-set"])
    X("non-shard-axis-offset", "A column split (partition_dim 1) fragment with a row offset is rejected (F7).", "non_shard_axis_offset",
      m(PB, {"/fragments/2/global_offset": [2, 0], "/fragments/2/local_shape": [2, 4], "/fragments/2/nbytes": 16}), tags=["fragment-set", "realistic"])
    X("non-shard-axis-shape", "A column split fragment that covers only part of the rows is rejected (F7).", "non_shard_axis_shape",
      m(PB, {"/fragments/3/local_shape": [2, 4], "/fragments/3/nbytes": 16}), tags=["fragment-set", "realistic"])
    X("non-shard-axis-shape-row-split", "A row split fragment narrower than the tensor on axis 1 is rejected (F7).", "non_shard_axis_shape",
      m(PB, {"/fragments/0/local_shape": [4, 2], "/fragments/0/nbytes": 16}), tags=["fragment-set", "realistic"])
    X("order-non-shard-axis-by-axis", "F7 checks axis 0 (shape) before axis 2 (offset) on a 3-D tensor split on axis 1.", "non_shard_axis_shape",
      PL([T("w3", [2, 4, 2], pd=1)], [F("w3/a", "w3", [0, 0, 1], [1, 2, 1], 4)]), tags=["order"])
    X("nbytes-mismatch", "nbytes that is not product(local_shape) * itemsize is rejected (F8).", "nbytes_mismatch",
      m(PB, {"/fragments/0/nbytes": 31}), tags=["fragment-set"])
    X("nbytes-mismatch-double", "nbytes twice the right size is rejected (F8).", "nbytes_mismatch",
      m(PB, {"/fragments/4/nbytes": 16}), tags=["fragment-set"])
    X("nbytes-mismatch-product-overflow", "A byte size product above 2^64-1 never equals nbytes (F8).", "nbytes_mismatch",
      PL([T("big", [2**32, 2**32], itemsize=2)], [F("big/0", "big", [0, 0], [2**32, 2**32], U64)]), tags=["fragment-set", "u64"])
    X("order-fragments-in-id-order", "Fragment rules run over fragments sorted by placement_fragment_id, not in input order.", "nbytes_mismatch",
      m(PB, {"/fragments/0/placement_fragment_id": "z/first-in-input", "/fragments/0/tensor_id": "nowhere",
             "/fragments/1/placement_fragment_id": "a/second-in-input", "/fragments/1/nbytes": 1}), tags=["order"])
    X("order-bounds-before-replicated-offset", "F5 runs before F6a for a replicated fragment that is both offset and too long.", "fragment_out_of_bounds",
      m(PB, {"/fragments/4/global_offset": [1]}), tags=["order"])
    X("order-fragment-rules-before-overlap", "Every fragment passes F1-F8 before the overlap rule runs.", "nbytes_mismatch",
      m(PB, {"/fragments/1/rank/tp": 0, "/fragments/1/global_offset": [2, 0], "/fragments/5/nbytes": 9}), tags=["order"])
    X("fragment-overlap-1d", "Two overlapping boxes of one tensor on one rank are rejected (§8.3).", "fragment_overlap",
      m(PB, {"/fragments/1/rank/tp": 0, "/fragments/1/global_offset": [2, 0]}), tags=["overlap"])
    X("fragment-overlap-2d-partial", "Two partially overlapping 2-D boxes on one rank are rejected.", "fragment_overlap",
      PL([T("w", [8, 8], sd=[0, 1])], [F("a", "w", [0, 0], [4, 4], 32), F("b", "w", [2, 2], [4, 4], 32)]), tags=["overlap"])
    X("fragment-overlap-nested", "A box nested inside another on the same rank is rejected.", "fragment_overlap",
      PL([T("w", [8], pd=0)], [F("outer", "w", [0], [8], 16), F("inner", "w", [2], [2], 4)]), tags=["overlap"])
    X("fragment-overlap-non-adjacent", "An overlap between the first and third box in offset order is found.", "fragment_overlap",
      PL([T("w", [16], pd=0)], [F("a", "w", [0], [10], 20), F("b", "w", [10], [2], 4), F("c", "w", [8], [1], 2)]), tags=["overlap"])
    X("same-box-same-dp-rank", "A second copy of a box on the same rank (not a DP replica) is a duplicate logical fragment (F2).", "duplicate_logical_fragment",
      m(PB, {"/fragments/6": F("qkv/dp0-again", QKV, [0, 0], [4, 4], 32, tp=0)}), tags=["realistic"])
    X("fragment-overlap-2d-grid-on-one-rank", "A 2x2 grid plus a centred box on one rank overlaps all four.", "fragment_overlap",
      PL([T("w", [8, 8], sd=[0, 1])], [F(f"g{i}{j}", "w", [4 * i, 4 * j], [4, 4], 32) for i in (0, 1) for j in (0, 1)]
         + [F("centre", "w", [2, 2], [4, 4], 32)]), tags=["overlap"])
