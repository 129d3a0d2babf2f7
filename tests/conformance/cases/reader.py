"""reader/ : JSON syntax and the reader rules (§4)."""

from __future__ import annotations

from cases.common import *  # noqa: F401,F403 - the shared builders and registry


# ----------------------------------------------------------------------------------------
# reader/ : JSON syntax and reader rules (§4), mostly through placement.parse

def cases_reader():
    g = "reader/"
    op = "placement.parse"
    base = render(PB)

    def X(name, desc, code, doc, op=op, tags=(), path=None, **kw):
        bad(g + name, op, desc, code, path, ["reader", *tags], document=doc, **kw)

    def P(name, desc, doc, op=op, tags=(), **kw):
        ok(g + name, op, desc, ["reader", *tags], document=doc, **kw)

    # -- syntax (§4.1)
    X("empty-text", "An empty text is not valid JSON.", "invalid_json", "")
    X("whitespace-only", "A text of only whitespace is not valid JSON.", "invalid_json", " \n\t ")
    X("trailing-content", "Non-whitespace after the top-level value is invalid.", "invalid_json", base + "x")
    X("trailing-second-object", "A second top-level value is trailing content.", "invalid_json", base + " {}")
    X("byte-order-mark", "A leading byte-order mark (U+FEFF) is invalid.", "invalid_json", "\ufeff" + base)
    X("line-comment", "A // comment is invalid.", "invalid_json", "// placement\n" + base)
    X("block-comment", "A /* */ comment inside the object is invalid.", "invalid_json", splice(base, '{"model_id"', '{/* c */"model_id"'))
    X("trailing-comma-object", "A trailing comma in an object is invalid.", "invalid_json", splice(base, '"dp":0,"tp":0,"pp":0,"ep":0}', '"dp":0,"tp":0,"pp":0,"ep":0,}'))
    X("trailing-comma-array", "A trailing comma in an array is invalid.", "invalid_json", splice(base, "[8,4]", "[8,4,]"))
    X("single-quotes", "Single-quoted strings are invalid.", "invalid_json", splice(base, '"r1"', "'r1'"))
    X("leading-zero", "An integer with a leading zero (01) is invalid, not 1.", "invalid_json", splice(base, '"nbytes":32', '"nbytes":032'))
    X("leading-zero-negative", "-01 is invalid.", "invalid_json", splice(base, '"layer_id":0', '"layer_id":-01'))
    X("plus-sign", "A leading + on a number is invalid.", "invalid_json", splice(base, '"itemsize":2', '"itemsize":+2'))
    X("leading-dot", "A number starting with . is invalid.", "invalid_json", splice(base, '"itemsize":2', '"itemsize":.5'))
    X("trailing-dot", "A number ending with . is invalid.", "invalid_json", splice(base, '"itemsize":2', '"itemsize":2.'))
    X("bare-exponent", "A number with an empty exponent (2e) is invalid.", "invalid_json", splice(base, '"itemsize":2', '"itemsize":2e'))
    X("hex-number", "A hexadecimal number is invalid.", "invalid_json", splice(base, '"itemsize":2', '"itemsize":0x2'))
    X("raw-tab-in-string", "A raw U+0009 inside a string is invalid.", "invalid_json", splice(base, '"r1"', '"r\t1"'))
    X("raw-newline-in-string", "A raw U+000A inside a string is invalid.", "invalid_json", splice(base, '"r1"', '"r\n1"'))
    X("raw-nul-in-string", "A raw U+0000 inside a string is invalid.", "invalid_json", splice(base, '"r1"', '"r\x001"'))
    X("raw-unit-separator-in-string", "A raw U+001F inside a string is invalid.", "invalid_json", splice(base, '"r1"', '"r\x1f1"'))
    X("unknown-escape", "The escape \\x is not a JSON escape.", "invalid_json", splice(base, '"r1"', '"r\\x31"'))
    X("escape-short-hex", "A \\u escape with fewer than four hex digits is invalid.", "invalid_json", splice(base, '"r1"', '"r\\u31"'))
    X("bare-word-true-capital", "The bare word True is invalid.", "invalid_json", splice(base, '"layer_id":0', '"layer_id":True'))
    X("bare-word-nan-lowercase", "Lowercase nan is not one of the non-finite tokens and is invalid.", "invalid_json", splice(base, '"layer_id":0', '"layer_id":nan'))
    X("bare-word-undefined", "The bare word undefined is invalid.", "invalid_json", splice(base, '"layer_id":0', '"layer_id":undefined'))
    X("bare-word-inf", "The bare word inf is invalid (only Infinity is a non-finite token).", "invalid_json", splice(base, '"layer_id":0', '"layer_id":inf'))
    X("unterminated-string", "An unterminated string is invalid.", "invalid_json", base[: base.index('"r1"') + 3])
    X("unclosed-object", "An object that never closes is invalid.", "invalid_json", base[:-1])
    X("form-feed-whitespace", "A form feed is not JSON whitespace.", "invalid_json", "\f" + base)
    X("nbsp-whitespace", "U+00A0 is not JSON whitespace.", "invalid_json", base + "\u00a0")
    X("missing-colon", "A member without a colon is invalid.", "invalid_json", splice(base, '"revision":"r1"', '"revision" "r1"'))
    P("surrounding-whitespace", "Space, tab, LF and CR around the top-level value are allowed.", " \t\r\n" + base + "\r\n\t ")
    X("invalid-json-runtime-inventory", "A runtime inventory with trailing content is invalid JSON.", "invalid_json",
      render(RI01) + "]", op="runtime.from_inventory")
    X("invalid-json-binding-inventory", "A binding inventory with a comment is invalid JSON.", "invalid_json",
      "/**/" + render(BI01), op="binding.from_inventory")
    X("invalid-json-runtime-manifest", "A runtime manifest JSON with single quotes is invalid.", "invalid_json",
      "{'fragments':[]}", op="runtime.parse")
    X("invalid-json-binding-manifest", "An empty binding manifest text is invalid JSON.", "invalid_json", "", op="binding.parse")
    X("invalid-json-placement-inventory", "A placement inventory with a leading zero is invalid JSON.", "invalid_json",
      splice(render(RI01), '"generation":3', '"generation":03'), op="placement.from_inventory")

    # -- escapes and surrogates (§4.1, §16 D2)
    X("lone-high-surrogate", "An escaped lone high surrogate is invalid.", "invalid_json", splice(base, '"r1"', '"r\\ud800"'), tags=["unicode"])
    X("lone-low-surrogate", "An escaped lone low surrogate is invalid.", "invalid_json", splice(base, '"r1"', '"r\\udc00"'), tags=["unicode"])
    X("reversed-surrogate-pair", "A low surrogate followed by a high surrogate is invalid.", "invalid_json", splice(base, '"r1"', '"\\ude00\\ud83d"'), tags=["unicode"])
    X("high-surrogate-then-letter", "A high surrogate followed by a non-surrogate escape is invalid.", "invalid_json", splice(base, '"r1"', '"\\ud83d\\u0041"'), tags=["unicode"])
    X("high-surrogate-at-end", "A high surrogate escape at the end of a string is invalid.", "invalid_json", splice(base, '"r1"', '"r1\\ud83d"'), tags=["unicode"])
    X("lone-surrogate-in-key", "A lone surrogate escape in a member key is invalid.", "invalid_json", splice(base, '"revision"', '"revision\\udfff"'), tags=["unicode"])
    X("lone-surrogate-in-ignored-member", "A lone surrogate in a member that the inventory reader ignores is still invalid JSON.", "invalid_json",
      render(m(RI01, {"/note": Raw('"\\ud800"')})), op="runtime.from_inventory", tags=["unicode"])
    P("escaped-surrogate-pair", "An escaped surrogate pair decodes to one scalar (U+1F600) and is re-escaped on output.",
      splice(base, '"r1"', '"r\\ud83d\\ude00"'), tags=["unicode"])
    P("escaped-surrogate-pair-uppercase", "Uppercase hex digits in escapes are accepted; the output escape is lowercase.",
      splice(base, '"r1"', '"r\\uD83D\\uDE00"'), tags=["unicode"])
    P("raw-supplementary-scalar", "A raw UTF-8 supplementary scalar gives the same result as its escaped pair.",
      splice(base, '"r1"', '"r\U0001F600"'), tags=["unicode"])
    P("escaped-solidus", "\\/ decodes to / and / is emitted unescaped.", splice(base, '"example/dense-tp2"', '"example\\/dense-tp2"'))
    P("escaped-control-characters", "Escaped control characters are valid and emitted as \\n, \\t and \\u0001.",
      splice(base, '"r1"', '"r\\n\\t\\u0001\\u001f"'), tags=["unicode"])
    P("escaped-quote-backslash", "Escaped quote and backslash round-trip as \\\" and \\\\.", splice(base, '"r1"', '"r\\"\\\\1"'))
    P("del-and-line-separator", "DEL and U+2028 are emitted as \\u007f and \\u2028.", splice(base, '"r1"', '"r\x7f\u2028"'), tags=["unicode"])
    P("ascii-escape-equals-letter", "\\u0072\\u0031 decodes to the same revision as r1, giving the same ids.", splice(base, '"r1"', '"\\u0072\\u0031"'))

    # -- non-finite tokens (§4.2)
    for tok in ("NaN", "Infinity", "-Infinity"):
        X(f"non-finite-{tok.lower()}", f"The bare token {tok} in an integer field is non_finite_number.", "non_finite_number",
          splice(base, '"nbytes":32', f'"nbytes":{tok}'))
    X("non-finite-in-array", "NaN inside global_shape is non_finite_number.", "non_finite_number", splice(base, "[8,4]", "[8,NaN]"))
    X("non-finite-in-ignored-member", "Infinity in a member the runtime inventory reader ignores is still non_finite_number.", "non_finite_number",
      render(m(RI01, {"/tensors/0/scale": Raw("Infinity")})), op="runtime.from_inventory")
    X("non-finite-binding-inventory", "-Infinity in a binding inventory is non_finite_number.", "non_finite_number",
      splice(render(BI01), '"generation":3', '"generation":-Infinity'), op="binding.from_inventory")
    X("non-finite-runtime-manifest", "NaN in a runtime manifest JSON is non_finite_number.", "non_finite_number",
      splice(render(RM01), '"address":139887084830720', '"address":NaN'), op="runtime.parse")

    # -- duplicate keys (§4.4), at every depth
    X("duplicate-key-top", "A repeated top-level key is duplicate_key, even with the same value.", "duplicate_key", dup(PB, "revision"))
    X("duplicate-key-tensor", "A repeated key inside a tensor is duplicate_key.", "duplicate_key", m(PB, {"/tensors/0": dup(PB["tensors"][0], "dtype", "float16")}))
    X("duplicate-key-fragment", "A repeated key inside a fragment is duplicate_key.", "duplicate_key", m(PB, {"/fragments/3": dup(PB["fragments"][3], "nbytes")}))
    X("duplicate-key-rank", "A repeated key inside a rank is duplicate_key.", "duplicate_key", m(PB, {"/fragments/1/rank": dup(RK(tp=1), "tp", 0)}))
    X("duplicate-key-escaped-spelling", "Keys \"model_id\" and \"\\u006dodel_id\" are equal after unescaping.", "duplicate_key",
      dup(PB, "model_id", spelling=Raw('"\\u006dodel_id"')))
    X("duplicate-key-ignored-inventory-member", "A duplicate key inside a member the runtime inventory reader ignores is still duplicate_key.", "duplicate_key",
      render(m(RI01, {"/tensors/1/extra": Pairs(("a", 1), ("a", 2))})), op="runtime.from_inventory")
    X("duplicate-key-ignored-top-member-placement-inventory", "A duplicate key inside an ignored top-level member of a placement inventory is duplicate_key.", "duplicate_key",
      render(m(RI01, {"/meta": Pairs(("k", {}), ("k", {}))})), op="placement.from_inventory")
    X("duplicate-key-binding-inventory-record", "A repeated key inside a binding inventory record is duplicate_key.", "duplicate_key",
      render(m(BI01, {"/fragments/0": dup(BI01["fragments"][0], "address")})), op="binding.from_inventory")
    X("duplicate-key-runtime-manifest-rank", "A repeated key inside a runtime manifest rank is duplicate_key.", "duplicate_key",
      render(m(RM01, {"/fragments/2/rank": dup(RM01["fragments"][2]["rank"], "dp")})), op="runtime.parse")
    X("duplicate-key-binding-manifest-top", "A repeated top-level key in a binding manifest JSON is duplicate_key.", "duplicate_key",
      render(dup(BM01, "lease_id")), op="binding.parse")
    X("duplicate-key-wins-over-field-errors", "The reader's duplicate_key wins over a strict key-set error in the same object.", "duplicate_key",
      m(PB, {"/tensors/0": dup(m(PB["tensors"][0], {"/extra": 1}), "extra")}), tags=["order"])

    # -- order of reader errors (§4.5), the four examples of the table and variants
    X("order-non-finite-before-duplicate", "{\"a\":1,\"a\":NaN}: the token is read before the object closes.", "non_finite_number", '{"a":1,"a":NaN}', tags=["order"])
    X("order-duplicate-before-trailing", "{\"a\":1,\"a\":2}x: the object closes before the trailing x is seen.", "duplicate_key", '{"a":1,"a":2}x', tags=["order"])
    X("order-inner-duplicate-before-syntax", "{\"x\":{\"a\":1,\"a\":2},: the inner object closes before the syntax error.", "duplicate_key", '{"x":{"a":1,"a":2},', tags=["order"])
    X("order-unclosed-duplicate-is-syntax", "{\"a\":1,\"a\":2 never closes, so the syntax error is found first.", "invalid_json", '{"a":1,"a":2', tags=["order"])
    X("order-syntax-before-later-non-finite", "A syntax error before a NaN token is found first.", "invalid_json", '{"a":01,"b":NaN}', tags=["order"])
    X("order-non-finite-before-later-syntax", "A NaN token before a syntax error is found first.", "non_finite_number", '{"a":NaN,"b":01}', tags=["order"])
    X("order-reader-before-top-level-check", "A reader error wins over a top level that is not an object.", "non_finite_number", "[NaN]", tags=["order"])
    X("order-reader-before-fields", "A duplicate key is reported although the object also lacks required keys.", "duplicate_key", '{"model_id":"m","model_id":"m"}', tags=["order"])
    X("order-surrogate-before-duplicate", "A lone surrogate escape is a syntax error found before the object with a duplicate closes.", "invalid_json",
      '{"a":1,"a":"\\ud800"}', tags=["order", "unicode"])

    # -- top level (§4.6) for every document kind
    for kind, kop, text in (("placement", "placement.parse", "null"), ("placement-inventory", "placement.from_inventory", "[]"),
                            ("runtime-inventory", "runtime.from_inventory", "3"), ("binding-inventory", "binding.from_inventory", '"x"'),
                            ("runtime-manifest", "runtime.parse", "true"), ("binding-manifest", "binding.parse", "[{}]")):
        bad(f"{g}not-an-object-{kind}", kop, f"A {kind.replace('-', ' ')} whose top level is {text} is not an object.",
            "not_an_object", "", ["reader"], document=text)
    bad(g + "order-not-an-object-before-option", "runtime.from_inventory",
        "The top-level object check runs before the address_semantics option is checked (§10.2, §16 D5).", "not_an_object", "",
        ["reader", "order"], document="[]", address_semantics="VIEW")
    bad(g + "order-invalid-json-before-option", "binding.from_inventory",
        "The document is read before the address_semantics option is checked.", "invalid_json", None,
        ["reader", "order"], document="{", address_semantics="")

    # -- numbers (§4.3) beyond the per-field cases in placement/
    P("u64-max-accepted-in-generation", "2^64-1 is accepted as a runtime inventory generation and lease_generation.",
      render(RINV([REC("rt/a", "w", [4], [0], [4], lease=U64)], gen=U64)), op="runtime.from_inventory", tags=["u64"])
    X("u64-max-plus-one-generation", "2^64 as a runtime inventory generation is u64_overflow.", "u64_overflow",
      render(m(RI01, {"/generation": U64 + 1})), op="runtime.from_inventory", tags=["u64"], path="/generation")
    P("ignored-member-huge-numbers", "1e400 and a 40-digit integer in members an inventory reader ignores are never checked.",
      render(m(RI01, {"/tensors/0/scale": Raw("1e400"), "/tensors/1/serial": Raw("9" * 40), "/build": Raw("-0.0")})),
      op="runtime.from_inventory")
    P("negative-zero-in-inventory", "-0 as storage_offset and byte_offset reads as 0 and needs no view semantics.",
      render(m(RI01, {"/tensors/0/storage_offset": Raw("-0"), "/tensors/0/byte_offset": Raw("-0")})), op="runtime.from_inventory")
    X("negative-zero-address", "-0 as an address reads as 0 and fails below_minimum.", "below_minimum",
      render(m(RI01, {"/tensors/2/address": Raw("-0")})), op="runtime.from_inventory", path="/tensors/2/address")
    X("exponent-integer-in-inventory", "1E2 in a runtime inventory nbytes is a non-integer number.", "not_an_integer",
      render(m(RI01, {"/tensors/1/nbytes": Raw("1E2")})), op="runtime.from_inventory", path="/tensors/1/nbytes")
