"""Limit cases (limit_exceeded) across groups: expected pointers come from the limit oracle."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


def cases_limits():
    """limit_exceeded (the default limits): expected pointers come from the oracle above."""
    def L(cid, op, description, tags=(), **inputs):
        bad(cid, op, description, "limit_exceeded", None, ["limit", *tags], **inputs)

    def shape(n):
        return [1] * n

    def dims_placement(n):
        return PL([T("w", shape(n))], [F("w/0", "w", [0] * n, shape(n), 2)])

    ok("placement/limit-dims-64", "placement.parse",
       "A tensor of 64 dimensions is at max_dims and accepted.", ["limit"], document=dims_placement(64))
    L("placement/limit-dims-65", "placement.parse",
      "A tensor of 65 dimensions is above max_dims (64): limit_exceeded at its global_shape.",
      document=dims_placement(65))
    L("placement/limit-dims-65-second-tensor", "placement.parse",
      "max_dims is checked per tensor element, before its descriptor checks (here an empty dtype).",
      ["order"], document=PL([T("a", [4]), T("b", shape(65), dtype="")], [F("a/0", "a", [0], [4], 8)]))
    ok("runtime_inventory/limit-dims-64", "runtime.from_inventory",
       "A record whose tensor has 64 dimensions is at max_dims and accepted.", ["limit"],
       document=RINV([REC("f", "w", shape(64), [0] * 64, shape(64))]))
    L("runtime_inventory/limit-dims-65", "runtime.from_inventory",
      "A record whose tensor has 65 dimensions is above max_dims (64): limit_exceeded at its global_shape.",
      document=RINV([REC("f", "w", shape(65), [0] * 65, shape(65))]))
    L("placement_inventory/limit-dims-65", "placement.from_inventory",
      "A placement inventory record of 65 dimensions is above max_dims (64).",
      document=RINV([REC("f", "w", shape(65), [0] * 65, shape(65), pfid="p")]))

    def nested(depth):
        """A value nested `depth` deep as the revision of PB (the top level is depth 1)."""
        return Raw("[" * (depth - 1) + "]" * (depth - 1))

    bad("reader/limit-depth-128", "placement.parse",
        "A value nested 128 deep (the top level counts 1) is within max_depth; the parser then rejects the revision's type.",
        "empty_string", "/revision", ["reader", "limit"], document=m(PB, {"/revision": nested(128)}))
    L("reader/limit-depth-129", "placement.parse",
      "An array nested 129 deep is above max_depth (128): limit_exceeded at that array, whatever follows.",
      ["reader"], document=m(PB, {"/revision": nested(129)}))
    L("reader/limit-depth-129-objects", "runtime.parse",
      "Objects nested 129 deep are above max_depth (128) in every document kind.", ["reader"],
      document=splice(render(RM01), '"model_id":', '"model_id":' + '{"a":' * 128 + '1' + '}' * 128 + ',"x":'))
    L("reader/limit-depth-before-invalid-json", "placement.parse",
      "Reader limits are checked left to right: a depth over the limit before a syntax error is limit_exceeded.",
      ["reader", "order"], document=splice(render(m(PB, {"/revision": nested(129)})), '"nbytes":32', '"nbytes":032'))
    ok("reader/limit-string-65536", "placement.parse",
       "A string of 65536 UTF-8 bytes is at max_string_bytes and accepted.", ["reader", "limit"],
       document=m(PB, {"/model_id": "m" * 65536}))
    L("reader/limit-string-65537", "placement.parse",
      "A string of 65537 UTF-8 bytes is above max_string_bytes (65536): limit_exceeded at it.", ["reader"],
      document=m(PB, {"/model_id": "m" * 65537}))
    L("reader/limit-string-decoded-bytes", "binding.from_inventory",
      "String length counts decoded UTF-8 bytes: 32768 two-byte characters and one more byte are above max_string_bytes.",
      ["reader"], document=m(BI01, {"/instance_id": "\u00e9" * 32768 + "x"}))
    L("reader/limit-member-name", "placement.parse",
      "A member name longer than max_string_bytes is limit_exceeded at the object holding it, before the key-set check.",
      ["reader", "order"], document=splice(render(PB), '"model_id":', '"' + "k" * 65537 + '":1,"model_id":'))
