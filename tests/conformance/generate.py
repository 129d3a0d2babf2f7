#!/usr/bin/env python3
"""Generate the language-neutral conformance corpus (tests/conformance/<group>/<case>.json).

    python3 tests/conformance/generate.py          # (re)write every fixture, coverage.json
    python3 tests/conformance/generate.py --check  # exit 1 if any file differs, is missing or extra

Python 3.11 standard library only. Expected values are derived independently of any
implementation of the contract (spec/contract.md):

* a rejection's `code` and `path` come from reading the contract (rule, evaluation order,
  §15 error locations) and are written down by hand in each case below;
* a success's `canonical`, `placement_id`, `digest`, `runtime`, `binding` and `generation`
  come from the small oracle in this file, which only has to handle VALID inputs. The oracle
  is checked against every reference vector in tests/vectors/reference/ on every run.

Documents are built as Python values and rendered with `render()`, which can splice raw
JSON text (`Raw`) and write objects member by member (`Pairs`, for duplicate keys), so every
byte that matters (number spelling, escapes, duplicates) is explicit in the case.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REF = ROOT / "tests" / "vectors" / "reference"
SCHEMA = ROOT / "schema" / "conformance-fixture.schema.json"
U64 = 2**64 - 1

# ----------------------------------------------------------------------------------------
# Encoding and hashing (contract §5, §7)


def cj(value) -> str:
    """Canonical JSON text (§5)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------------------
# The oracle: normalisation, identities and emissions for VALID inputs only.

RANK_KEYS = ("dp", "ep", "pp", "tp")


def canon_desc(r: dict) -> dict:
    """Canonical 9-key descriptor (§3) from a placement tensor, a runtime tensor or an
    inventory record (optional members may be absent)."""
    pd, sd = r.get("partition_dim"), r.get("shard_dims")
    eff = list(sd) if sd is not None else ([pd] if pd is not None else [])
    return {
        "dtype": r["dtype"],
        "expert_id": r.get("expert_id"),
        "global_shape": list(r["global_shape"]),
        "itemsize": r["itemsize"],
        "layer_id": r.get("layer_id"),
        "layout_fingerprint": r["layout_fingerprint"],
        "partition_dim": eff[0] if len(eff) == 1 else None,
        "shard_dims": eff,
        "tensor_id": r["tensor_id"],
    }


def rank4(r: dict) -> dict:
    return {k: r[k] for k in RANK_KEYS}


def logical_id(f: dict) -> str:
    """Generated placement_fragment_id (§7.3)."""
    payload = {
        "aliases": sorted(f.get("aliases") or []),
        "global_offset": f["global_offset"],
        "local_shape": f["local_shape"],
        "nbytes": f["nbytes"],
        "rank": rank4(f["rank"]),
        "tensor_id": f["tensor_id"],
    }
    return "logical:" + sha(cj(payload))


def placement_fragment(f: dict, pfid: str) -> dict:
    return {
        "aliases": sorted(f.get("aliases") or []),
        "global_offset": f["global_offset"],
        "local_shape": f["local_shape"],
        "nbytes": f["nbytes"],
        "placement_fragment_id": pfid,
        "rank": rank4(f["rank"]),
        "tensor_id": f["tensor_id"],
    }


def make_placement(model_id, revision, tensors, fragments, given_id=None) -> dict:
    """§8.1 normalisation, §7.1 placement_id, §6.1 emission, §7.2 digest."""
    ts = sorted((canon_desc(t) for t in tensors), key=lambda t: t["tensor_id"])
    fs = sorted(fragments, key=lambda f: f["placement_fragment_id"])
    payload = {"fragments": fs, "model_id": model_id, "revision": revision,
               "schema": "weight-placement", "tensors": ts}
    pid = "sha256:" + sha(cj(payload))
    if given_id is not None:
        assert given_id == pid, f"oracle: case expects success but placement_id {given_id} != {pid}"
    wire = {"fragments": fs, "model_id": model_id, "placement_id": pid,
            "revision": revision, "tensors": ts}
    text = cj(wire)
    return {"canonical": text, "placement_id": pid, "digest": sha(text),
            "_value": wire, "_payload": cj(payload)}


def placement_from_wire(doc: dict) -> dict:
    frags = [placement_fragment(f, f["placement_fragment_id"]) for f in doc["fragments"]]
    return make_placement(doc["model_id"], doc["revision"], doc["tensors"], frags,
                          doc["placement_id"])


def placement_from_inventory(inv: dict) -> dict:
    tensors = merge_descriptors(inv["tensors"])
    frags = [placement_fragment(dict(r, aliases=r.get("aliases")), r["placement_fragment_id"])
             for r in inv["tensors"]]
    return make_placement(inv["model_id"], inv["revision"], tensors, frags,
                          inv.get("placement_id"))


def merge_descriptors(records) -> list:
    seen = {}
    for r in records:
        d = canon_desc(r)
        seen.setdefault(d["tensor_id"], d)
        assert seen[d["tensor_id"]] == d, "oracle: descriptor mismatch in a success case"
    return sorted(seen.values(), key=lambda d: d["tensor_id"])


def runtime_fragment(r: dict) -> dict:
    return {
        "address": r["address"],
        "aliases": sorted(r.get("aliases") or []),
        "device": r["device"],
        "endpoint": r["endpoint"],
        "fragment_id": r["fragment_id"],
        "global_offset": r["global_offset"],
        "lease_generation": r["lease_generation"],
        "local_shape": r["local_shape"],
        "nbytes": r["nbytes"],
        "placement_fragment_id": r.get("placement_fragment_id"),
        "rank": rank4(r["rank"]),
        "tensor_id": r["tensor_id"],
        "worker_id": r["worker_id"],
    }


def runtime_from_inventory(inv: dict) -> dict:
    """§10.3: the runtime manifest value (tensors distinct, sorted; fragments in record order)."""
    for r in inv["tensors"]:
        assert r["lease_generation"] == inv["generation"]
    return {
        "fragments": [runtime_fragment(r) for r in inv["tensors"]],
        "generation": inv["generation"],
        "instance_id": inv["instance_id"],
        "lease_id": inv.get("lease_id"),
        "model_id": inv["model_id"],
        "placement_id": inv.get("placement_id"),
        "revision": inv["revision"],
        "tensors": merge_descriptors(inv["tensors"]),
    }


def runtime_from_wire(doc: dict) -> dict:
    """§9.1 parse + §8.4 (canonical descriptors, manifest order, generation derived)."""
    frags = [runtime_fragment(f) for f in doc["fragments"]]
    gens = {f["lease_generation"] for f in frags}
    assert len(gens) <= 1
    gen = doc["generation"]
    if gens:
        assert gen is None or gen in gens
        gen = next(iter(gens))
    return dict(doc, fragments=frags, generation=gen,
                tensors=[canon_desc(t) for t in doc["tensors"]])


def project_placement(rt: dict, arg=None) -> dict:
    """§11.1."""
    frags = [placement_fragment(f, f["placement_fragment_id"] or logical_id(f))
             for f in rt["fragments"]]
    ids = [f["placement_fragment_id"] for f in frags]
    assert len(ids) == len(set(ids))
    given = arg if arg is not None else rt["placement_id"]
    return make_placement(rt["model_id"], rt["revision"], rt["tensors"], frags, given)


def binding_fragment(f: dict, pfid: str) -> dict:
    return {"address": f["address"], "device": f["device"], "endpoint": f["endpoint"],
            "fragment_id": f["fragment_id"], "nbytes": f["nbytes"],
            "placement_fragment_id": pfid, "worker_id": f["worker_id"]}


def make_binding(top: dict, frags: list) -> dict:
    return {
        "fragments": sorted(frags, key=lambda f: f["placement_fragment_id"]),
        "generation": top["generation"],
        "instance_id": top["instance_id"],
        "lease_id": top["lease_id"],
        "model_id": top["model_id"],
        "placement_digest": top["placement_digest"],
        "placement_id": top["placement_id"],
        "revision": top["revision"],
    }


def project_binding(rt: dict, arg=None) -> dict:
    """§11.2."""
    p = project_placement(rt, arg)
    frags = [binding_fragment(f, f["placement_fragment_id"] or logical_id(f))
             for f in rt["fragments"]]
    top = dict(rt, placement_id=p["placement_id"], placement_digest=p["digest"])
    assert top["lease_id"] is not None and top["generation"] is not None
    return make_binding(top, frags)


def binding_from_inventory(inv: dict) -> dict:
    """§10.4 (and §9.2 parse, which has the same members)."""
    frags = [binding_fragment(f, f["placement_fragment_id"]) for f in inv["fragments"]]
    return make_binding(inv, frags)


def bind(placement_doc: dict, binv: dict) -> dict:
    """§12."""
    p = placement_from_wire(placement_doc)["_value"]
    b = binding_from_inventory(binv)
    assert (p["model_id"], p["revision"], p["placement_id"]) == (
        b["model_id"], b["revision"], b["placement_id"])
    by_id = {f["placement_fragment_id"]: f for f in b["fragments"]}
    assert set(by_id) == {f["placement_fragment_id"] for f in p["fragments"]}
    frags = []
    for f in p["fragments"]:
        bf = by_id[f["placement_fragment_id"]]
        assert bf["nbytes"] == f["nbytes"]
        frags.append(runtime_fragment(dict(
            f, address=bf["address"], device=bf["device"], endpoint=bf["endpoint"],
            fragment_id=bf["fragment_id"], worker_id=bf["worker_id"],
            lease_generation=b["generation"])))
    return {"fragments": frags, "generation": b["generation"],
            "instance_id": b["instance_id"], "lease_id": b["lease_id"],
            "model_id": p["model_id"], "placement_id": p["placement_id"],
            "revision": p["revision"], "tensors": p["tensors"]}


def loads(text: str):
    return json.loads(text)


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
    raise AssertionError(op)


# ----------------------------------------------------------------------------------------
# Reference vectors: load them and prove the oracle reproduces every one.

def ref_text(name: str) -> str:
    return (REF / name).read_text(encoding="utf-8")


def ref_json(name: str):
    return json.loads(ref_text(name))


MODELS = ("01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases")
WORKED = ("w1", "w2", "w3", "empty")


def check_oracle_against_reference() -> None:
    ids = ref_json("ids.json")

    def expect(cond, what):
        if not cond:
            sys.exit(f"generate.py: oracle does not reproduce the reference vector: {what}")

    for m in MODELS:
        wire = ref_text(f"{m}.placement.json")
        for src in (f"{m}.placement.json", f"{m}.placement.pretty.json"):
            p = placement_from_wire(ref_json(src))
            expect(p["canonical"] == wire, f"{src} canonical")
            expect(p["placement_id"] == ids[m]["placement_id"], f"{src} placement_id")
            expect(p["digest"] == ids[m]["digest"], f"{src} digest")
            expect(p["_payload"] == ref_text(f"{m}.placement-id-payload.json"), f"{src} payload")
        rt = runtime_from_inventory(ref_json(f"{m}.runtime-inventory.json"))
        expect(cj(rt) == ref_text(f"derived/{m}.runtime.json"), f"{m} runtime.from_inventory")
        expect(cj(runtime_from_wire(json.loads(cj(rt)))) == cj(rt), f"{m} runtime.parse")
        expect(project_placement(rt)["canonical"] == wire, f"{m} project.placement")
        binding = ref_text(f"derived/{m}.binding.json")
        expect(cj(project_binding(rt)) == binding, f"{m} project.binding")
        binv = ref_json(f"{m}.binding-inventory.json")
        expect(cj(binding_from_inventory(binv)) == binding, f"{m} binding.from_inventory")
        bound = cj(bind(json.loads(wire), binv))
        expect(bound == ref_text(f"derived/{m}.bound-runtime.json"), f"{m} bind")
        expect(project_placement(json.loads(bound))["canonical"] == wire, f"{m} re-project")
        for f in ids[m]["fragments"]:
            if f["generated"]:
                expect("logical:" + sha(f["id_payload"]) == f["placement_fragment_id"], f"{m} logical id")
    p01 = placement_from_inventory(ref_json("01_tp_sharded_2d.runtime-inventory.json"))
    expect(p01["canonical"] == ref_text("01_tp_sharded_2d.placement.json"), "01 as placement inventory")
    for w in WORKED:
        e = ref_json(f"{w}.expected.json")
        p = placement_from_wire(ref_json(f"{w}.placement.json"))
        expect(p["canonical"] == ref_text(f"{w}.placement.json") == e["digest_payload"], f"{w} canonical")
        expect((p["placement_id"], p["digest"]) == (e["placement_id"], e["digest"]), f"{w} ids")
        expect(p["_payload"] == e["placement_id_payload"], f"{w} payload")
        for fp in e.get("fragment_id_payloads", []):
            expect("logical:" + sha(fp["payload"]) == fp["placement_fragment_id"], f"{w} logical")
    for w in ("w2", "w3"):
        rt = runtime_from_inventory(ref_json(f"{w}.runtime-inventory.json"))
        expect(cj(rt) == ref_text(f"derived/{w}.runtime.json"), f"{w} runtime")
        expect(project_placement(rt)["canonical"] == ref_text(f"{w}.placement.json"), f"{w} project")
        expect(cj(project_binding(rt)) == ref_text(f"derived/{w}.binding.json"), f"{w} binding")


# ----------------------------------------------------------------------------------------
# Rendering documents

class Raw:
    """Raw JSON text spliced into a rendered document (a number spelling, a bad token)."""

    def __init__(self, text: str):
        self.text = text


class Pairs:
    """An object rendered member by member, in the given order; keys may repeat, and a key
    may be a Raw (an escaped spelling)."""

    def __init__(self, *items):
        self.items = list(items)


DEL = object()  # mutation marker: remove the member / element


def render(v) -> str:
    """Compact JSON text, keys in insertion order, non-ASCII kept raw (UTF-8)."""
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, (dict, Pairs)):
        items = v.items if isinstance(v, Pairs) else v.items()
        return "{" + ",".join(
            (k.text if isinstance(k, Raw) else json.dumps(k, ensure_ascii=False)) + ":" + render(x)
            for k, x in items) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(render(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def pretty(v) -> str:
    return json.dumps(v, indent=2, ensure_ascii=False) + "\n"


def _walk(d, path: str):
    parts = path.split("/")[1:]
    for p in parts[:-1]:
        d = d[int(p)] if isinstance(d, list) else d[p]
    last = parts[-1]
    return d, (int(last) if isinstance(d, list) else last)


def m(base, changes: dict):
    """A deep copy of `base` with JSON-pointer-like paths set (`DEL` removes)."""
    d = copy.deepcopy(base)
    for path, value in changes.items():
        parent, key = _walk(d, path)
        if value is DEL:
            del parent[key]
        elif isinstance(parent, list) and key == len(parent):
            parent.append(value)
        else:
            parent[key] = value
    return d


def dup(d: dict, key: str, value=DEL, spelling=None) -> Pairs:
    """`d` as Pairs with `key` written a second time right after the first (same value
    unless given; `spelling` is a Raw key for the repeat)."""
    items = []
    for k, x in d.items():
        items.append((k, x))
        if k == key:
            items.append((spelling or k, x if value is DEL else value))
    assert any(k == key for k, _ in d.items()), key
    return Pairs(*items)


def splice(text: str, old: str, new: str) -> str:
    """Replace the first occurrence of `old` in a rendered document (must exist)."""
    assert old in text, old
    return text.replace(old, new, 1)


# ----------------------------------------------------------------------------------------
# The case registry

CASES: dict[str, dict] = {}


def _doc(v):
    return v if isinstance(v, str) else render(v)


def _inputs(document=None, placement=None, binding=None, address_semantics=DEL,
            placement_id=DEL) -> dict:
    inp = {}
    if document is not None:
        inp["document"] = _doc(document)
    if placement is not None:
        inp["placement"] = _doc(placement)
    if binding is not None:
        inp["binding"] = _doc(binding)
    if address_semantics is not DEL:
        inp["address_semantics"] = address_semantics
    if placement_id is not DEL:
        inp["placement_id"] = placement_id
    return inp


def _add(cid, op, description, inp, expect, tags):
    assert cid not in CASES, f"duplicate case id {cid}"
    assert re.fullmatch(r"[a-z_]+/[a-z0-9][a-z0-9.-]*", cid), cid
    assert description.endswith(".") and "\n" not in description, cid
    fx = {"description": description, "op": op, "input": inp, "expect": expect}
    if tags:
        fx["tags"] = sorted(set(tags))
    CASES[cid] = fx


def ok(cid, op, description, tags=(), expect=None, **inputs):
    inp = _inputs(**inputs)
    exp = {"ok": True}
    exp.update(oracle(op, inp))
    if expect is not None:  # literal expectations (reference files) must agree with the oracle
        for k, v in expect.items():
            assert exp[k] == v, f"{cid}: oracle and reference disagree on {k}"
    _add(cid, op, description, inp, exp, tags)


def bad(cid, op, description, code, path=None, tags=(), **inputs):
    exp = {"ok": False, "code": code}
    if path is not None:
        exp["path"] = path
    _add(cid, op, description, _inputs(**inputs), exp, tags)
