"""content/: the content-digest operations (contract §19): `content.partial`,
`content.block_values`, `content.combine` and `content.manifest`.

The expectations that need a hash come from the content oracle's records,
`tests/content/*.json`, written by `tests/content/generate.py` from the plain-Python oracle
`tests/content/oracle.py` over the C reference xxHash (its `--check` runs in `make test`):
each record is one tensor's bytes, its fragments' partials and block values, and the
tensor's digest or the code combining the partials as written gets. This module only cuts
each box's bytes out of the tensor, assembles content manifests from the records and
renders the fixtures (standard library only); the rejections of geometry, buffers and
manifest members are written from §19.1, §19.3 and §19.5 by hand.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cases.common import _add, resolves
from oracle.core import ROOT, cj

RECORDS = ROOT / "tests" / "content"
DTYPES = {1: "int8", 2: "bfloat16", 4: "float32", 8: "float64"}


def records() -> list[dict]:
    out = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RECORDS.glob("*.json"))]
    assert len(out) >= 15, f"content records missing in {RECORDS}"
    return out


def rows(shape, offset, local) -> list[int]:
    """The global row indices of a box's rows, in row-major order of the box (§19.1)."""
    out = [0]
    for axis in range(len(shape) - 1):
        out = [r * shape[axis] + offset[axis] + i for r in out for i in range(local[axis])]
    return out


def cut(rec: dict, offset, local) -> bytes:
    """The contiguous row-major bytes of a box of the record's tensor."""
    data, shape, size = bytes.fromhex(rec["data"]), rec["global_shape"], rec["itemsize"]
    out = bytearray()
    for r in rows(shape, offset, local):
        start = (r * shape[-1] + offset[-1]) * size
        out += data[start:start + local[-1] * size]
    return bytes(out)


def tensor_inputs(rec: dict) -> dict:
    return {"tensor_id": rec["tensor_id"], "global_shape": rec["global_shape"], "itemsize": rec["itemsize"],
            "block_elements": rec["block_elements"]}


def box_inputs(rec: dict, offset, local, data: bytes) -> dict:
    return {**tensor_inputs(rec), "global_offset": offset, "local_shape": local, "bytes": data.hex()}


def fragments_text(fragments: list[dict]) -> str:
    return cj([{k: f[k] for k in ("global_offset", "local_shape", "partial")} for f in fragments])


def cases_partials_and_values(recs: list[dict]) -> None:
    for rec in recs:
        if "digest" not in rec["expect"]:
            continue
        seen = set()
        for i, f in enumerate(rec["fragments"]):
            box = (tuple(f["global_offset"]), tuple(f["local_shape"]))
            if box in seen:  # a replica: the same request again
                continue
            seen.add(box)
            where = f"box {f['global_offset']} of shape {f['local_shape']}"
            inp = box_inputs(rec, f["global_offset"], f["local_shape"], cut(rec, f["global_offset"], f["local_shape"]))
            edges = "with edges" if f["partial"]["edges"] else "without edges"
            _add(f"content/partial-{rec['name']}-{i}", "content.partial",
                 f"The partial of the {where} of {rec['name']} ({edges}), as the oracle computes it.",
                 inp, {"ok": True, "partial": cj(f["partial"])}, ("content",))
            _add(f"content/values-{rec['name']}-{i}", "content.block_values",
                 f"The values of the blocks wholly inside the {where} of {rec['name']}, by row, then block.",
                 inp, {"ok": True, "values": cj(f["values"])}, ("content",))


def cases_combine(recs: list[dict]) -> None:
    for rec in recs:
        inp = {**tensor_inputs(rec), "fragments": fragments_text(rec["fragments"])}
        expect = rec["expect"]
        if "digest" in expect:
            _add(f"content/combine-{rec['name']}", "content.combine",
                 f"{rec['description'].rstrip('.')}: the partials combine to the tensor's digest.",
                 inp, {"ok": True, "digest": expect["digest"]}, ("content",))
        else:
            _add(f"content/combine-{rec['name']}", "content.combine", rec["description"], inp,
                 {"ok": False, "code": expect["error"]}, ("content",))
    by_name = {r["name"]: r for r in recs}
    base = by_name["tp-columns-cut-inside-blocks"]
    frags = base["fragments"]
    for name, description, edit, fr in (
        ("combine-zero-extent", "A global_shape with a zero extent is not a tensor (§19.1).",
         {"global_shape": [4, 0]}, frags),
        ("combine-zero-block", "block_elements 0 (§19.1).", {"block_elements": 0}, frags),
        ("combine-box-rank", "A fragment box of another rank than the tensor (§19.4 step 1).", {},
         [{**frags[0], "global_offset": [0, 0, 0], "local_shape": [4, 3, 1]}, *frags[1:]]),
        ("combine-box-outside", "A fragment box past the tensor's last column (§19.4 step 1).", {},
         [*frags[:-1], {**frags[-1], "local_shape": [4, 4]}]),
    ):
        inp = {**tensor_inputs(base), **edit, "fragments": fragments_text(fr)}
        _add(f"content/{name}", "content.combine", description, inp,
             {"ok": False, "code": "content_shape_invalid"}, ("content",))
    swapped = copy.deepcopy(frags)
    swapped[0]["partial"], swapped[1]["partial"] = swapped[1]["partial"], swapped[0]["partial"]
    replica = [*copy.deepcopy(frags), copy.deepcopy(frags[0])]
    edge = replica[-1]["partial"]["edges"][0]
    edge["bytes"] = ("00" if edge["bytes"][:2] != "00" else "01") + edge["bytes"][2:]
    _add("content/combine-replica-edge-differs", "content.combine",
         "A replica whose edge piece differs in its first byte from the other copy's (§19.4 step 2).",
         {**tensor_inputs(base), "fragments": fragments_text(replica)},
         {"ok": False, "code": "content_replica_mismatch"}, ("content",))
    _add("content/combine-partials-swapped", "content.combine",
         "Two fragments' partials exchanged: their edges lie outside the boxes they are given with.",
         {**tensor_inputs(base), "fragments": fragments_text(swapped)},
         {"ok": False, "code": "content_partition_invalid"}, ("content",))


def cases_partial_rejections(recs: list[dict]) -> None:
    rec = next(r for r in recs if r["name"] == "tp-columns-cut-inside-blocks")
    f = rec["fragments"][1]
    offset, local = f["global_offset"], f["local_shape"]
    data = cut(rec, offset, local)
    shape_cases = (
        ("box-past-end", "A box whose columns pass the tensor's last column (§19.3).", {"local_shape": [4, 8]}),
        ("box-offset-past-end", "A box starting at the tensor's row count (§19.3).", {"global_offset": [4, 3]}),
        ("box-rank", "A box of one dimension for a 2-D tensor (§19.3).", {"global_offset": [3], "local_shape": [16]}),
        ("box-zero-extent", "A box with an extent of 0 (§19.3).", {"local_shape": [0, 4]}),
        ("box-offset-overflow", "A box whose end overflows 2^64 (§19.3: checked, never wrapped).",
         {"global_offset": [0, 2**64 - 2]}),
        ("itemsize-zero", "itemsize 0 (§19.1).", {"itemsize": 0}),
        ("shape-empty", "A tensor without dimensions (§19.1).", {"global_shape": []}),
        ("bytes-overflow", "A tensor of more than 2^64-1 bytes (§19.1).", {"global_shape": [2**32, 2**32]}),
    )
    for name, description, edit in shape_cases:
        for op, kind in (("content.partial", "partial"), ("content.block_values", "values")):
            inp = {**box_inputs(rec, offset, local, data), **edit}
            _add(f"content/{kind}-{name}", op, description, inp, {"ok": False, "code": "content_shape_invalid"},
                 ("content",))
    buffer_cases = (
        ("bytes-short", "The buffer holds one element less than the box (§19.3).", data[:-4]),
        ("bytes-long", "The buffer holds one byte more than the box (§19.3).", data + b"\0"),
        ("bytes-empty", "An empty buffer for a box of 16 elements (§19.3).", b""),
    )
    for name, description, given in buffer_cases:
        for op, kind in (("content.partial", "partial"), ("content.block_values", "values")):
            _add(f"content/{kind}-{name}", op, description, box_inputs(rec, offset, local, given),
                 {"ok": False, "code": "content_buffer_invalid"}, ("content",))


def manifest_of(recs: list[dict], block: int, generation=7) -> dict:
    """A content manifest of the records of block size `block`: their tensors and digests,
    each fragment (replicas on dp 1, 2, ...) with its partial."""
    chosen = sorted((r for r in recs if "digest" in r["expect"] and r["block_elements"] == block),
                    key=lambda r: r["tensor_id"].encode())
    assert chosen, block
    tensors, fragments = [], []
    for rec in chosen:
        tensors.append({"tensor_id": rec["tensor_id"], "global_shape": rec["global_shape"],
                        "dtype": DTYPES[rec["itemsize"]], "itemsize": rec["itemsize"],
                        "digest": rec["expect"]["digest"]})
        copies: dict[tuple, int] = {}
        for f in rec["fragments"]:
            box = (tuple(f["global_offset"]), tuple(f["local_shape"]))
            dp = copies[box] = copies.get(box, -1) + 1
            fragments.append({"tensor_id": rec["tensor_id"], "rank": {"dp": dp, "ep": 0, "pp": 0, "tp": 0},
                              "global_offset": f["global_offset"], "local_shape": f["local_shape"],
                              "partial": f["partial"]})
    for i, f in enumerate(fragments):
        f["placement_fragment_id"] = f"frag-{i:03d}"
    return {"algorithm": "xxh3-block-sum-v1", "block_elements": block, "model_id": "example/content",
            "revision": "r1", "placement_digest": "ab" * 32, "generation": generation, "tensors": tensors,
            "fragments": fragments}


def cases_manifest(recs: list[dict]) -> None:
    def accept(name, description, doc, text=None):
        _add(f"content/manifest-{name}", "content.manifest", description,
             {"document": text if text is not None else cj(doc)}, {"ok": True, "content_manifest": cj(doc)},
             ("content",))

    def reject(name, description, doc, code, path=None):
        text = cj(doc) if not isinstance(doc, str) else doc
        expect = {"ok": False, "code": code}
        if path is not None:
            assert resolves(text, path), (name, path)
            expect["path"] = path
        _add(f"content/manifest-{name}", "content.manifest", description, {"document": text}, expect,
             ("content",))

    by_block = {b: manifest_of(recs, b) for b in (2, 4, 8)}
    four = by_block[4]
    accept("b4-fragments", "Three tensors of B = 4 with every fragment's partial: the partials recombine to each digest.", four)
    accept("b2-replicas", "Tensors of B = 2 with a replicated box on dp 1: replicas count once.", by_block[2])
    accept("b8-short-last-block", "Tensors of B = 8, rows ending in a short block.", by_block[8])
    digests_only = {**four, "fragments": None, "placement_digest": None, "generation": None}
    accept("digests-only", "Digests without fragments: nothing to recombine, generation and placement_digest null.", digests_only)
    accept("whitespace-and-order", "The same manifest with whitespace, members in another order and raw UTF-8: written back canonically.",
           four, json.dumps(dict(reversed(list(four.items()))), indent=1, ensure_ascii=False))

    def edited(change) -> dict:
        doc = copy.deepcopy(four)
        change(doc)
        return doc

    bad = "content_manifest_invalid"
    reject("algorithm", "Another algorithm name (§19.5: /algorithm).",
           edited(lambda d: d.update(algorithm="xxh3-block-sum-v2")), bad, "/algorithm")
    reject("tensors-unsorted", "Tensors out of tensor_id order (§19.5: the later tensor's id).",
           edited(lambda d: d["tensors"].reverse()), bad, "/tensors/1/tensor_id")
    reject("tensor-duplicate", "The same tensor listed twice (§19.5: not sorted after the previous one).",
           edited(lambda d: d["tensors"].insert(1, copy.deepcopy(d["tensors"][0]))), bad, "/tensors/1/tensor_id")
    reject("digest-form", "A digest without its xxh3sum128: prefix (§19.5).",
           edited(lambda d: d["tensors"][0].update(digest=d["tensors"][0]["digest"][11:])), bad, "/tensors/0/digest")
    reject("digest-uppercase", "A digest in uppercase hex (§19.5).",
           edited(lambda d: d["tensors"][1].update(digest=d["tensors"][1]["digest"].upper().replace("XXH3SUM128", "xxh3sum128"))),
           bad, "/tensors/1/digest")
    reject("fragments-unsorted", "Fragments out of placement_fragment_id order (§19.5).",
           edited(lambda d: d["fragments"].reverse()), bad, "/fragments/1/placement_fragment_id")
    reject("fragment-unknown-tensor", "A fragment of a tensor the manifest does not list (§19.5).",
           edited(lambda d: d["fragments"][2].update(tensor_id="not.listed")), bad, "/fragments/2/tensor_id")
    reject("fragment-sum-form", "A partial sum of 31 hex digits (§19.5).",
           edited(lambda d: d["fragments"][0]["partial"].update(sum=d["fragments"][0]["partial"]["sum"][1:])), bad,
           "/fragments/0/partial/sum")
    reject("edge-bytes-odd", "Edge bytes of an odd number of hex digits (§19.5).",
           edited(lambda d: d["fragments"][0]["partial"]["edges"][1].update(bytes="abc")), bad,
           "/fragments/0/partial/edges/1/bytes")
    reject("edge-bytes-empty", "Edge bytes that hold no byte (§19.5).",
           edited(lambda d: d["fragments"][1]["partial"]["edges"][0].update(bytes="")), bad,
           "/fragments/1/partial/edges/0/bytes")
    reject("not-an-object", "A JSON array is not a content manifest (§19.5: the root).", "[]", bad, "")
    shape = "content_shape_invalid"
    reject("tensor-zero-extent", "A tensor with an extent of 0 (§19.1, at the tensor).",
           edited(lambda d: d["tensors"][2].update(global_shape=[0, 6])), shape, "/tensors/2")
    reject("tensor-too-large", "A tensor of more than 2^64-1 bytes (§19.1, at the tensor).",
           edited(lambda d: d["tensors"][0].update(global_shape=[2**62, 8])), shape, "/tensors/0")
    reject("fragment-outside", "A fragment box past its tensor's last column (§19.3, at the fragment).",
           edited(lambda d: d["fragments"][0].update(local_shape=[4, 11])), shape, "/fragments/0")
    reject("fragment-rank", "A fragment box of one dimension for a 2-D tensor (§19.3, at the fragment).",
           edited(lambda d: d["fragments"][1].update(global_offset=[0], local_shape=[4])), shape, "/fragments/1")
    mismatch = "content_digest_mismatch"
    reject("digest-of-another-tensor", "A tensor's digest replaced by another tensor's: its fragments recombine to their own.",
           edited(lambda d: d["tensors"][0].update(digest=d["tensors"][1]["digest"])), mismatch)
    nonzero = next(i for i, f in enumerate(four["fragments"]) if f["partial"]["sum"] != "0" * 32)
    reject("partial-sum-zeroed", "One fragment's sum zeroed: the tensor's fragments recombine to another digest.",
           edited(lambda d: d["fragments"][nonzero]["partial"].update(sum="0" * 32)), mismatch)
    reject("fragments-gap", "A fragment left out: the rest no longer partition the tensor (§19.4).",
           edited(lambda d: (d["fragments"].pop(1), [f.update(placement_fragment_id=f"frag-{i:03d}") for i, f in enumerate(d["fragments"])])),
           "content_partition_invalid")


def cases_content() -> None:
    recs = records()
    cases_partials_and_values(recs)
    cases_partial_rejections(recs)
    cases_combine(recs)
    cases_manifest(recs)
