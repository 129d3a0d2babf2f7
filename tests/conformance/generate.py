#!/usr/bin/env python3
"""Generate the language-neutral conformance corpus (tests/conformance/<group>/<case>.json).

    python3 tests/conformance/generate.py          # (re)write every fixture, coverage.json
    python3 tests/conformance/generate.py --check  # exit 1 if any file differs, is missing or extra

Python 3.11 standard library only. Expected values are derived independently of any
implementation of the contract (docs/contract.md):

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
CODES_FILE = ROOT / "schema" / "codes.json"


def codes_file() -> list[dict]:
    """The error codes, in Code::ALL order (schema/codes.json, the one source of the
    codes: codegen writes Rust, C and Python from it)."""
    return json.loads(CODES_FILE.read_text(encoding="utf-8"))["codes"]


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
    if op == "coverage":
        report = coverage_report(doc)
        assert not inp.get("require_complete") or report["tensors_complete"] == len(report["tensors"]), "oracle: incomplete"
        return {"report": cj(report)}
    if op == "plan":
        return reshard_plan(loads(inp["source"]), loads(inp["target"]), inp.get("max_regions"), inp.get("max_segments"))
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
            placement_id=DEL, source=None, target=None, require_complete=DEL, max_regions=DEL,
            max_segments=DEL) -> dict:
    inp = {}
    if source is not None:
        inp["source"] = _doc(source)
    if target is not None:
        inp["target"] = _doc(target)
    for key, value in (("require_complete", require_complete), ("max_regions", max_regions),
                       ("max_segments", max_segments)):
        if value is not DEL:
            inp[key] = value
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
    assert limit_violation(op, inp) is None, f"{cid}: a success case crosses a default limit"
    exp = {"ok": True}
    exp.update(oracle(op, inp))
    if expect is not None:  # literal expectations (reference files) must agree with the oracle
        for k, v in expect.items():
            assert exp[k] == v, f"{cid}: oracle and reference disagree on {k}"
    _add(cid, op, description, inp, exp, tags)


def bad(cid, op, description, code, path=None, tags=(), **inputs):
    at = limit_violation(op, _inputs(**inputs))
    if code == "limit_exceeded":  # the limit oracle gives the pointer
        assert at is not None, f"{cid}: the oracle finds no limit crossed"
        assert path is None or path == at, f"{cid}: the oracle locates it at {at}"
        path = at
    else:
        assert at is None, f"{cid}: crosses a default limit at {at}, which would come first"
    if code in ADDED_CODES and code != "limit_exceeded":  # the oracle must reject with the same code
        inp = _inputs(**inputs)
        if op == "plan":
            try:
                reshard_plan(loads(inp["source"]), loads(inp["target"]), inp.get("max_regions"), inp.get("max_segments"))
                raise AssertionError(f"{cid}: the oracle accepts")
            except PlanError as e:
                assert str(e) == code, f"{cid}: the oracle rejects with {e}"
        else:
            report = coverage_report(loads(inp["document"]))
            assert report["tensors_complete"] < len(report["tensors"]), f"{cid}: the oracle finds it complete"
    exp = {"ok": False, "code": code}
    if path is not None:
        exp["path"] = path
    _add(cid, op, description, _inputs(**inputs), exp, tags)


# ----------------------------------------------------------------------------------------
# Building blocks for documents

def T(tid, shape, pd=None, sd=None, dtype="bfloat16", itemsize=2, layer=None, expert=None,
      fp="hf:bf16:row-major:v1"):
    """A placement / runtime-manifest tensor (all 9 keys)."""
    return {"tensor_id": tid, "global_shape": shape, "dtype": dtype, "itemsize": itemsize,
            "partition_dim": pd, "shard_dims": sd, "layer_id": layer, "expert_id": expert,
            "layout_fingerprint": fp}


def RK(dp=0, tp=0, pp=0, ep=0):
    return {"dp": dp, "tp": tp, "pp": pp, "ep": ep}


def F(pfid, tid, off, shape, nbytes, aliases=(), **rank):
    """A placement fragment (all 7 keys)."""
    return {"placement_fragment_id": pfid, "tensor_id": tid, "global_offset": off,
            "local_shape": shape, "nbytes": nbytes, "rank": RK(**rank), "aliases": list(aliases)}


def PL(tensors, frags, model="example/dense-tp2", rev="r1", pid=None):
    return {"model_id": model, "revision": rev, "placement_id": pid, "tensors": tensors,
            "fragments": frags}


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def canonical_stride(shape):
    return [prod(shape[k + 1:]) for k in range(len(shape))]


def REC(fid, tid, gshape, off, local, *, pd=None, sd=DEL, dtype="bfloat16", itemsize=2,
        layer=DEL, expert=DEL, fp="hf:bf16:row-major:v1", address=4096, nbytes=None,
        worker="worker-0", endpoint="10.0.0.1:17000", device="cuda:0", rank=None, lease=5,
        aliases=DEL, pfid=DEL, stride=None, so=0, bo=0):
    """A runtime inventory record (§10.3); optional members only when given."""
    r = {"fragment_id": fid, "tensor_id": tid, "global_shape": gshape, "global_offset": off,
         "local_shape": local, "dtype": dtype, "itemsize": itemsize, "partition_dim": pd}
    for k, v in (("shard_dims", sd), ("layer_id", layer), ("expert_id", expert)):
        if v is not DEL:
            r[k] = v
    r.update({"layout_fingerprint": fp, "address": address,
              "nbytes": prod(local) * itemsize if nbytes is None else nbytes,
              "worker_id": worker, "endpoint": endpoint, "device": device,
              "rank": rank or RK(), "lease_generation": lease, "is_contiguous": True,
              "stride": canonical_stride(local) if stride is None else stride,
              "storage_offset": so, "byte_offset": bo})
    if aliases is not DEL:
        r["aliases"] = aliases
    if pfid is not DEL:
        r["placement_fragment_id"] = pfid
    return r


def RINV(records, model="example/rt", rev="r1", inst="instance-0", gen=5, lease="lease-5",
         pid=DEL):
    d = {"model_id": model, "revision": rev, "instance_id": inst, "generation": gen}
    if lease is not DEL:
        d["lease_id"] = lease
    if pid is not DEL:
        d["placement_id"] = pid
    d["tensors"] = records
    return d


# The dense TP=2 block used as the base of most placement cases: a row split (dim 0), a
# column split (dim 1) and a replicated norm on both TP ranks.
QKV, OPROJ, NORM = "layers.0.attn.qkv.weight", "layers.0.attn.o_proj.weight", "layers.0.input_norm.weight"
PB = PL(
    [T(QKV, [8, 4], pd=0, layer=0), T(OPROJ, [4, 8], pd=1, layer=0), T(NORM, [4], layer=0)],
    [F("qkv/tp0", QKV, [0, 0], [4, 4], 32, tp=0), F("qkv/tp1", QKV, [4, 0], [4, 4], 32, tp=1),
     F("o_proj/tp0", OPROJ, [0, 0], [4, 4], 32, tp=0), F("o_proj/tp1", OPROJ, [0, 4], [4, 4], 32, tp=1),
     F("norm/tp0", NORM, [0], [4], 8, tp=0), F("norm/tp1", NORM, [0], [4], 8, tp=1)])
PB_ID = placement_from_wire(json.loads(render(PB)))["placement_id"]

# Reference documents as values (member order as in the files).
RI01 = ref_json("01_tp_sharded_2d.runtime-inventory.json")
RI02 = ref_json("02_moe_ep_pp.runtime-inventory.json")
RI03 = ref_json("03_tied_aliases.runtime-inventory.json")
RIW2 = ref_json("w2.runtime-inventory.json")
BI01 = ref_json("01_tp_sharded_2d.binding-inventory.json")
BI02 = ref_json("02_moe_ep_pp.binding-inventory.json")
BI03 = ref_json("03_tied_aliases.binding-inventory.json")
P01 = ref_json("01_tp_sharded_2d.placement.json")
P02 = ref_json("02_moe_ep_pp.placement.json")
P03 = ref_json("03_tied_aliases.placement.json")
RM01 = ref_json("derived/01_tp_sharded_2d.runtime.json")
RM03 = ref_json("derived/03_tied_aliases.runtime.json")
BM01 = ref_json("derived/01_tp_sharded_2d.binding.json")
BM02 = ref_json("derived/02_moe_ep_pp.binding.json")
ID01 = ref_json("ids.json")["01_tp_sharded_2d"]
ID02 = ref_json("ids.json")["02_moe_ep_pp"]
ID03 = ref_json("ids.json")["03_tied_aliases"]

# A tied-embedding runtime inventory: embed and lm_head share storage on tp0 (an exact
# declared alias pair, §8.5), plus a norm at the next address.
EMB, LMH = "model.embed_tokens.weight", "lm_head.weight"
TIED = RINV([
    REC("rt/embed", EMB, [32, 8], [0, 0], [16, 8], pd=0, address=65536, aliases=[EMB, LMH]),
    REC("rt/lm_head", LMH, [32, 8], [0, 0], [16, 8], pd=0, address=65536, aliases=[EMB, LMH]),
    REC("rt/norm", "model.norm.weight", [8], [0], [8], address=65536 + 256),
], model="example/tied")


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


# ----------------------------------------------------------------------------------------
# runtime_inventory/ : runtime.from_inventory (§10.2, §10.3, §8.4, §8.5)

def cases_runtime_inventory():
    g = "runtime_inventory/"
    op = "runtime.from_inventory"
    A0 = RI01["tensors"][0]["address"]

    def P(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    def R(i, **changes):  # a change set on record i of RI01
        return {f"/tensors/{i}/{k}": v for k, v in changes.items()}

    # -- accepted
    P("option-null", "address_semantics null means not given.", RI01, address_semantics=None)
    P("option-view-without-offsets", "address_semantics 'view' with zero offsets is accepted.", RI01, address_semantics="view")
    P("view-with-offsets", "Non-zero storage_offset and item-aligned byte_offset are accepted under 'view'; the address is not adjusted.",
      m(RI01, R(0, storage_offset=64, byte_offset=4)), address_semantics="view", tags=["view"])
    P("view-storage-offset-any-value", "storage_offset has no alignment rule (3 elements under 'view').",
      m(RI01, R(1, storage_offset=3)), address_semantics="view", tags=["view"])
    P("records-reordered", "Runtime fragments keep record order while tensors are emitted sorted by tensor_id.",
      m(RI01, {"/tensors": RI01["tensors"][::-1]}), ["order"])
    P("descriptor-spellings-merged", "partition_dim 0 on one record and shard_dims [0] on another are one canonical descriptor (§10.3 step 4.2).",
      m(RI01, R(2, partition_dim=None, shard_dims=[0])), ["canonical"])
    P("optional-members-absent", "shard_dims, layer_id, expert_id, aliases, placement_fragment_id, lease_id and placement_id may be absent.",
      RINV([REC("rt/a", "w", [4, 8], [0, 0], [2, 8], pd=0), REC("rt/b", "w", [4, 8], [2, 0], [2, 8], pd=0, address=8192)], lease=DEL))
    P("optional-members-null", "Optional members given as null are not set.",
      RINV([REC("rt/a", "w", [4], [0], [4], sd=None, layer=None, expert=None, aliases=None, pfid=None)], lease=None, pid=None))
    P("unknown-members-ignored", "Unknown members at the top, record and rank level are ignored.",
      m(RI01, {"/framework": {"name": "x"}, "/tensors/0/device_index": 0, "/tensors/0/rank/world_size": 2}))
    P("placement-id-not-checked", "A runtime inventory's placement_id is kept as given; only a projection checks it (§8.4).",
      m(RI01, {"/placement_id": "not-the-canonical-id"}))
    P("empty-inventory", "An inventory with no records gives an empty runtime manifest with the given generation.", RINV([], gen=9))
    P("extent-one-axis-any-stride", "An axis of extent 1 accepts any stride (§10.3 step 4.3.5).",
      RINV([REC("rt/a", "w", [4, 8], [0, 0], [1, 8], pd=0, stride=[12345, 1]),
            REC("rt/b", "w", [4, 8], [1, 0], [1, 8], pd=0, stride=[0, 1], address=8192)]), ["stride"])
    P("extent-one-last-axis-any-stride", "A last axis of extent 1 accepts any stride while axis 0 must be 1.",
      RINV([REC("rt/a", "w", [8, 4], [0, 0], [8, 1], pd=1, stride=[1, 7])]), ["stride"])
    P("address-top-of-range", "address 2^64-33 with nbytes 32 ends exactly at 2^64-1 and is accepted (§2.4 step 4).",
      RINV([REC("rt/top", "w", [16], [0], [16], address=U64 - 32)]), ["u64", "address"])
    P("address-ranges-touching", "Byte ranges that only touch on one worker and device do not overlap.",
      RINV([REC("rt/a", "w", [8], [0], [8], address=4096), REC("rt/b", "v", [8], [0], [8], address=4096 + 16)]), ["address"])
    P("same-address-different-worker", "The same address on two workers with the same device name is in two address spaces.",
      RINV([REC("rt/a", "w", [8], [0], [8], worker="w-0"), REC("rt/b", "w", [8], [0], [8], worker="w-1", rank=RK(tp=1))]), ["address"])
    P("same-address-different-device", "The same address on two devices of one worker is in two address spaces.",
      RINV([REC("rt/a", "w", [8], [0], [8], device="cuda:0"), REC("rt/b", "w", [8], [0], [8], device="cuda:1", rank=RK(tp=1))]), ["address"])
    P("tied-exact-alias-pair", "Tied embeddings sharing one address with equal declared aliases are the exempt alias pair (§8.5).", TIED, ["alias", "realistic"])
    P("tied-aliases-given-unsorted", "Alias lists are compared sorted, so [lm_head, embed] matches [embed, lm_head].",
      m(TIED, {"/tensors/1/aliases": [LMH, EMB]}), ["alias"])
    P("tied-alias-pair-different-ranks", "An exact alias pair need not share a rank.", m(TIED, {"/tensors/1/rank": RK(tp=1)}), ["alias"])
    P("tied-alias-names-free-form", "Alias names need not be tensor ids.", m(TIED, {"/tensors/0/aliases": ["tie:a", "tie:b"], "/tensors/1/aliases": ["tie:b", "tie:a"]}), ["alias"])
    P("tied-alias-equivalent-spellings", "Descriptors compared by the alias rule are canonical, so partition_dim 0 and shard_dims [0] match.",
      m(TIED, {"/tensors/1/partition_dim": None, "/tensors/1/shard_dims": [0]}), ["alias", "canonical"])
    P("tied-three-way", "Three fragments at one address that pairwise form exact alias pairs are accepted.",
      m(TIED, {"/tensors/0/aliases": ["a", "b", "c"], "/tensors/1/aliases": ["a", "b", "c"],
               "/tensors/3": REC("rt/out", "output.weight", [32, 8], [0, 0], [16, 8], pd=0, address=65536, aliases=["c", "b", "a"])}), ["alias"])
    P("u64-max-rank-coordinates", "Rank coordinates of 2^64-1 are accepted.", m(RI01, R(0, rank=RK(U64, U64, U64, U64))), ["u64"])
    P("moe-experts-over-pp-and-ep", "The MoE inventory with EP-owned experts over two PP stages is accepted.", RI02, ["realistic"])

    # -- option (§10.2)
    for name, val in (("option-empty", ""), ("option-uppercase", "VIEW"), ("option-padded", " view"), ("option-plural", "views")):
        X(name, f"address_semantics {val!r} is not exactly 'view'.", "address_semantics_invalid", RI01, address_semantics=val, tags=["view"])
    X("order-option-before-members", "The option is checked before any member is read (generation missing).", "address_semantics_invalid",
      m(RI01, {"/generation": DEL}), address_semantics="VIEW", tags=["order"])

    # -- top level
    X("generation-missing", "A runtime inventory without generation lacks a required member.", "missing_field", m(RI01, {"/generation": DEL}), "")
    X("generation-negative", "A negative generation fails INT(generation, 0).", "below_minimum", m(RI01, {"/generation": -1}), "/generation")
    X("generation-string", "A string generation fails INT(generation, 0).", "not_an_integer", m(RI01, {"/generation": "3"}), "/generation")
    X("generation-null", "A required member given as null is passed to its check: null generation is not an integer.", "not_an_integer", m(RI01, {"/generation": None}), "/generation")
    X("generation-float", "A generation written 3.0 is not an integer.", "not_an_integer", m(RI01, {"/generation": Raw("3.0")}), "/generation")
    X("order-generation-before-tensors", "generation is read and checked before tensors is read.", "below_minimum",
      m(RI01, {"/generation": -1, "/tensors": DEL}), "/generation", ["order"])
    X("tensors-missing", "A runtime inventory without tensors lacks a required member.", "missing_field", m(RI01, {"/tensors": DEL}), "")
    X("tensors-object", "tensors that is an object fails SEQ(runtime inventory tensors).", "not_a_sequence", m(RI01, {"/tensors": {}}), "/tensors")
    X("tensors-null", "tensors given as null fails SEQ(runtime inventory tensors).", "not_a_sequence", m(RI01, {"/tensors": None}), "/tensors")
    X("record-not-an-object", "A record that is a number reads as an empty object: missing_field.", "missing_field", m(RI01, {"/tensors/1": 5}), "/tensors/1", ["structure"])
    X("record-null", "A record that is null reads as an empty object: missing_field.", "missing_field", m(RI01, {"/tensors/0": None}), "/tensors/0", ["structure"])
    for name, key in (("record-missing-tensor-id", "tensor_id"), ("record-missing-partition-dim", "partition_dim"),
                      ("record-missing-layout-fingerprint", "layout_fingerprint"), ("record-missing-is-contiguous", "is_contiguous"),
                      ("record-missing-stride", "stride"), ("record-missing-byte-offset", "byte_offset"),
                      ("record-missing-lease-generation", "lease_generation"), ("record-missing-rank", "rank"),
                      ("record-missing-fragment-id", "fragment_id"), ("record-missing-address", "address"),
                      ("record-missing-endpoint", "endpoint"), ("record-missing-global-offset", "global_offset")):
        X(name, f"A record without {key} lacks a required member.", "missing_field", m(RI01, {f"/tensors/2/{key}": DEL}), "/tensors/2", ["structure"])
    X("rank-missing-pp", "A rank without pp lacks a required member; the rank is the object that lacks it.", "missing_field",
      m(RI01, {"/tensors/0/rank/pp": DEL}), "/tensors/0/rank", ["structure"])
    X("rank-not-an-object", "A rank that is a number reads as an empty object: missing_field at the rank.", "missing_field",
      m(RI01, {"/tensors/3/rank": 7}), "/tensors/3/rank", ["structure"])
    X("order-descriptor-reads-before-checks", "All descriptor members are read before the descriptor checks run.", "missing_field",
      m(RI01, R(0, layout_fingerprint=DEL, global_shape=[])), "/tensors/0", ["order"])
    X("order-fragment-reads-before-rank-members", "fragment_id ... device are read before the rank's members.", "missing_field",
      m(RI01, R(0, device=DEL, rank={})), "/tensors/0", ["order"])
    X("order-rank-read-before-lease-check", "rank is read (required) before lease_generation is compared.", "missing_field",
      m(RI01, R(1, rank=DEL, lease_generation=4)), "/tensors/1", ["order"])

    # -- descriptor (§2.2 via §10.3 step 4.1) and merge (step 4.2)
    for name, changes, code, path in (
        ("global-shape-empty", R(0, global_shape=[]), "empty_shape", "/tensors/0/global_shape"),
        ("tensor-id-null", R(0, tensor_id=None), "empty_string", "/tensors/0/tensor_id"),
        ("itemsize-null", R(1, itemsize=None), "not_an_integer", "/tensors/1/itemsize"),
        ("partition-dim-out-of-range", R(0, partition_dim=2), "partition_dim_out_of_range", "/tensors/0/partition_dim"),
        ("shard-dims-duplicate", R(0, partition_dim=None, shard_dims=[0, 0]), "shard_dims_duplicate", "/tensors/0/shard_dims"),
        ("shard-dims-unsorted", R(0, partition_dim=None, shard_dims=[1, 0]), "shard_dims_unsorted", "/tensors/0/shard_dims"),
        ("shard-dims-out-of-range", R(1, shard_dims=[1]), "shard_dims_out_of_range", "/tensors/1/shard_dims"),
        ("partition-dim-conflict", R(0, shard_dims=[1]), "partition_dim_conflict", "/tensors/0/shard_dims"),
        ("layer-id-negative", R(0, layer_id=-1), "below_minimum", "/tensors/0/layer_id"),
        ("expert-id-string", R(0, expert_id="3"), "not_an_integer", "/tensors/0/expert_id"),
        ("layout-fingerprint-empty", R(3, layout_fingerprint=""), "empty_string", "/tensors/3/layout_fingerprint"),
    ):
        X(name, f"A record whose descriptor has {name.replace('-', ' ')} fails the TensorDescriptor checks.", code, m(RI01, changes), path, ["descriptor"])
    X("descriptor-mismatch-dtype", "A second record of one tensor with another dtype is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, R(2, dtype="float16")), "/tensors/2", ["descriptor"])
    X("descriptor-mismatch-layer-id", "A second record of one tensor with another layer_id is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, R(3, layer_id=1)), "/tensors/3", ["descriptor"])
    X("descriptor-mismatch-split-dim", "partition_dim 0 and shard_dims [1] are different canonical descriptors.", "descriptor_mismatch",
      m(RI01, R(2, partition_dim=None, shard_dims=[1])), "/tensors/2", ["descriptor"])
    X("descriptor-mismatch-layer-id-absent", "layer_id absent (null) and layer_id 0 are different descriptors.", "descriptor_mismatch",
      m(RI01, R(3, layer_id=DEL)), "/tensors/3", ["descriptor"])
    X("descriptor-mismatch-moe-expert-id", "An MoE expert record that changes expert_id of an earlier record is a mismatch.", "descriptor_mismatch",
      m(RI02, R(5, expert_id=1)), "/tensors/5", ["descriptor", "realistic"])
    X("order-descriptor-checks-before-merge", "The descriptor checks run before the comparison with earlier records.", "below_minimum",
      m(RI01, R(2, itemsize=0)), "/tensors/2/itemsize", ["order"])
    X("order-descriptor-mismatch-before-view", "descriptor_mismatch (step 4.2) wins over a non-contiguous view (step 4.3).", "descriptor_mismatch",
      m(RI01, R(2, dtype="float16", is_contiguous=False)), "/tensors/2", ["order"])

    # -- view (§10.3 step 4.3)
    for name, val in (("is-contiguous-false", False), ("is-contiguous-one", 1), ("is-contiguous-string", "true"), ("is-contiguous-null", None)):
        X(name, f"is_contiguous {render(val)} is not the literal true.", "not_contiguous", m(RI01, R(1, is_contiguous=val)), "/tensors/1/is_contiguous", ["view"])
    X("order-contiguous-before-local-shape", "is_contiguous is checked before local_shape is read.", "not_contiguous",
      m(RI01, R(0, is_contiguous=False, local_shape=DEL)), "/tensors/0/is_contiguous", ["order"])
    X("local-shape-zero", "A zero extent in local_shape fails INTS(local_shape, 1).", "below_minimum", m(RI01, R(0, local_shape=[0, 8])), "/tensors/0/local_shape", ["view"])
    X("local-shape-not-array", "A local_shape that is a string fails INTS.", "not_a_sequence", m(RI01, R(0, local_shape="8x8")), "/tensors/0/local_shape", ["view"])
    X("stride-not-array", "A stride that is a string fails INTS(stride, 0).", "not_a_sequence", m(RI01, R(0, stride="8,1")), "/tensors/0/stride", ["stride"])
    X("stride-negative", "A negative stride fails INTS(stride, 0).", "below_minimum", m(RI01, R(0, stride=[8, -1])), "/tensors/0/stride", ["stride"])
    X("stride-rank-mismatch", "A 1-element stride for a 2-D view is a stride rank mismatch.", "stride_rank_mismatch", m(RI01, R(0, stride=[8])), "/tensors/0/stride", ["stride"])
    X("stride-rank-mismatch-longer", "A 3-element stride for a 2-D view is a stride rank mismatch.", "stride_rank_mismatch", m(RI01, R(2, stride=[64, 8, 1])), "/tensors/2/stride", ["stride"])
    X("stride-column-major", "A column-major stride [1, 8] is not the canonical row-major stride.", "non_canonical_stride", m(RI01, R(0, stride=[1, 8])), "/tensors/0/stride", ["stride"])
    X("stride-padded-rows", "A padded row stride [16, 1] is not canonical.", "non_canonical_stride", m(RI01, R(2, stride=[16, 1])), "/tensors/2/stride", ["stride"])
    X("stride-zero-on-replicated", "A zero stride on an axis of extent 8 is not canonical.", "non_canonical_stride", m(RI01, R(1, stride=[0])), "/tensors/1/stride", ["stride"])
    X("stride-canonical-overflow", "A canonical stride above 2^64-1 equals no u64 value, so the stride fails (§10.3 step 4.3.5).", "non_canonical_stride",
      RINV([REC("rt/huge", "huge", [2, 2**32, 2**32], [0, 0, 0], [2, 2**32, 2**32], itemsize=1, stride=[0, 2**32, 1], nbytes=1)]), "/tensors/0/stride", ["stride", "u64"])
    X("stride-overflow-on-extent-one-axis", "An unrepresentable canonical stride on an extent-1 axis passes, so the record fails later at nbytes (§8.2 F8).", "nbytes_mismatch",
      RINV([REC("rt/huge", "huge", [1, 2**32, 2**32], [0, 0, 0], [1, 2**32, 2**32], itemsize=1, stride=[7, 2**32, 1], nbytes=U64 - 4096)]), None, ["stride", "u64", "order"])
    X("order-stride-rank-before-canonical", "The stride rank is checked before the stride values.", "stride_rank_mismatch",
      m(RI01, R(0, stride=[1])), "/tensors/0/stride", ["order"])
    X("storage-offset-negative", "A negative storage_offset fails INT(storage_offset, 0).", "below_minimum", m(RI01, R(0, storage_offset=-1)), "/tensors/0/storage_offset", ["view"])
    X("byte-offset-float", "A byte_offset of 1.5 fails INT(byte_offset, 0).", "not_an_integer", m(RI01, R(0, byte_offset=Raw("1.5"))), "/tensors/0/byte_offset", ["view"])
    X("byte-offset-u64-overflow", "A byte_offset of 2^64 fails with u64_overflow.", "u64_overflow", m(RI01, R(0, byte_offset=U64 + 1)), "/tensors/0/byte_offset", ["view", "u64"])
    X("byte-offset-unaligned", "A byte_offset of 3 with itemsize 2 is not item-aligned, even under 'view'.", "byte_offset_unaligned",
      m(RI01, R(0, byte_offset=3)), "/tensors/0/byte_offset", ["view"], address_semantics="view")
    X("order-unaligned-before-view-requirement", "byte_offset alignment (step 4.3.7) is checked before the view requirement (4.3.8).", "byte_offset_unaligned",
      m(RI01, R(1, byte_offset=1)), "/tensors/1/byte_offset", ["order"])
    X("storage-offset-without-view", "A non-zero storage_offset without address_semantics 'view' is rejected.", "offsets_require_view_semantics",
      m(RI01, R(0, storage_offset=64)), None, ["view"])
    X("byte-offset-without-view", "A non-zero aligned byte_offset without 'view' is rejected.", "offsets_require_view_semantics",
      m(RI01, R(3, byte_offset=2)), None, ["view"], address_semantics=None)
    X("order-offset-reads-before-checks", "storage_offset and byte_offset are both read before either is checked.", "missing_field",
      m(RI01, R(0, storage_offset=-1, byte_offset=DEL)), "/tensors/0", ["order"])
    X("order-storage-offset-before-byte-offset", "INT(storage_offset) runs before INT(byte_offset).", "not_an_integer",
      m(RI01, R(0, storage_offset="0", byte_offset=-1)), "/tensors/0/storage_offset", ["order"])
    X("order-stride-before-offsets", "The stride check runs before the offsets are checked.", "non_canonical_stride",
      m(RI01, R(0, stride=[1, 8], storage_offset=-1)), "/tensors/0/stride", ["order"])

    # -- lease (§10.3 step 4.4)
    X("lease-generation-mismatch", "A record whose lease_generation differs from generation is rejected.", "lease_generation_mismatch",
      m(RI01, R(1, lease_generation=4)), "/tensors/1/lease_generation", ["lease"])
    X("lease-generation-u64-overflow", "lease_generation 2^64 with generation 3 is u64_overflow, not a mismatch (§16 D1).", "u64_overflow",
      m(RI01, R(0, lease_generation=U64 + 1)), "/tensors/0/lease_generation", ["lease", "u64"])
    X("lease-generation-negative", "A negative lease_generation fails INT(lease_generation, 0).", "below_minimum",
      m(RI01, R(2, lease_generation=-3)), "/tensors/2/lease_generation", ["lease"])
    X("order-view-before-lease", "The view checks run before the lease check.", "non_canonical_stride",
      m(RI01, R(0, stride=[16, 1], lease_generation=4)), "/tensors/0/stride", ["order"])
    X("order-lease-before-fragment-reads", "The lease check runs before fragment_id ... device are read.", "lease_generation_mismatch",
      m(RI01, R(0, lease_generation=2, address=DEL)), "/tensors/0/lease_generation", ["order"])

    # -- fragment (§10.3 steps 4.5, 4.6)
    for name, changes, code, path in (
        ("rank-dp-negative", R(0, rank=RK(dp=-1)), "below_minimum", "/tensors/0/rank/dp"),
        ("rank-ep-string", R(2, rank=m(RI01["tensors"][2]["rank"], {"/ep": "0"})), "not_an_integer", "/tensors/2/rank/ep"),
        ("rank-tp-u64-overflow", R(0, rank=RK(tp=U64 + 1)), "u64_overflow", "/tensors/0/rank/tp"),
        ("aliases-string", R(0, aliases="lm_head.weight"), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-object", R(0, aliases={"a": 1}), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-empty-name", R(0, aliases=[""]), "aliases_invalid", "/tensors/0/aliases"),
        ("aliases-duplicate", R(0, aliases=["x", "x"]), "aliases_duplicate", "/tensors/0/aliases"),
        ("global-offset-negative", R(0, global_offset=[0, -1]), "below_minimum", "/tensors/0/global_offset"),
        ("global-offset-null", R(0, global_offset=None), "not_a_sequence", "/tensors/0/global_offset"),
        ("fragment-id-empty", R(1, fragment_id=""), "empty_string", "/tensors/1/fragment_id"),
        ("worker-id-null", R(1, worker_id=None), "empty_string", "/tensors/1/worker_id"),
        ("endpoint-empty", R(1, endpoint=""), "empty_string", "/tensors/1/endpoint"),
        ("device-number", R(1, device=0), "empty_string", "/tensors/1/device"),
        ("address-zero", R(1, address=0), "below_minimum", "/tensors/1/address"),
        ("address-negative", R(1, address=-4096), "below_minimum", "/tensors/1/address"),
        ("address-hex-string", R(1, address="0x7f3a00000000"), "not_an_integer", "/tensors/1/address"),
        ("address-u64-overflow", R(1, address=U64 + 1), "u64_overflow", "/tensors/1/address"),
        ("nbytes-zero", R(1, nbytes=0), "below_minimum", "/tensors/1/nbytes"),
        ("placement-fragment-id-empty", R(0, placement_fragment_id=""), "empty_string", "/tensors/0/placement_fragment_id"),
        ("placement-fragment-id-number", R(0, placement_fragment_id=1), "empty_string", "/tensors/0/placement_fragment_id"),
    ):
        X(name, f"A record with {name.replace('-', ' ')} fails its RuntimeFragment or ParallelRank check.", code, m(RI01, changes), path, ["fragment"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end (§2.4 step 4).", "address_range_overflow",
      RINV([REC("rt/top", "w", [16], [0], [16], address=U64 - 31)]), None, ["u64", "address"])
    X("address-range-overflow-u64-max-address", "address 2^64-1 with nbytes 1 has an unrepresentable end.", "address_range_overflow",
      RINV([REC("rt/top", "w", [1], [0], [1], itemsize=1, address=U64)]), None, ["u64", "address"])
    X("order-rank-checks-before-fragment-checks", "The ParallelRank checks (step 4.5) run before the RuntimeFragment checks (4.6).", "below_minimum",
      m(RI01, R(0, rank=RK(dp=-1), fragment_id="")), "/tensors/0/rank/dp", ["order"])
    X("order-aliases-read-before-fragment-checks", "aliases that is not an array is rejected when read (4.5), before STR(fragment_id) (4.6).", "aliases_invalid",
      m(RI01, R(0, aliases="x", fragment_id="")), "/tensors/0/aliases", ["order"])
    X("order-fragment-checks-before-alias-elements", "An empty alias name is found by ALIASES (4.6 step 7), after STR(fragment_id).", "empty_string",
      m(RI01, R(0, aliases=[""], fragment_id="")), "/tensors/0/fragment_id", ["order"])
    X("order-global-offset-before-fragment-id", "INTS(global_offset) runs before STR(fragment_id).", "below_minimum",
      m(RI01, R(0, global_offset=[-1, 0], fragment_id="")), "/tensors/0/global_offset", ["order"])
    X("order-fragment-id-before-worker-id", "STR runs on fragment_id before worker_id.", "empty_string",
      m(RI01, R(0, worker_id="", fragment_id="")), "/tensors/0/fragment_id", ["order"])
    X("order-device-before-address", "STR(device) runs before the address checks.", "empty_string",
      m(RI01, R(0, device="", address=0)), "/tensors/0/device", ["order"])
    X("order-address-before-nbytes", "INT(address) runs before INT(nbytes).", "below_minimum",
      m(RI01, R(0, address=0, nbytes=0)), "/tensors/0/address", ["order"])
    X("order-aliases-before-placement-fragment-id", "ALIASES runs before STR(placement_fragment_id).", "aliases_duplicate",
      m(RI01, R(0, aliases=["a", "a"], placement_fragment_id="")), "/tensors/0/aliases", ["order"])

    # -- top-level strings and construction (§10.3 step 5, §8.4)
    for name, key in (("model-id-missing", "model_id"), ("revision-missing", "revision"), ("instance-id-missing", "instance_id")):
        X(name, f"A runtime inventory without {key} lacks a required member.", "missing_field", m(RI01, {f"/{key}": DEL}), "")
    X("order-records-before-model-id", "model_id is read only after every record.", "below_minimum",
      m(RI01, {"/model_id": DEL, "/tensors/3/address": 0}), "/tensors/3/address", ["order"])
    for name, key, val in (("model-id-empty", "model_id", ""), ("revision-null", "revision", None), ("instance-id-empty", "instance_id", ""),
                           ("lease-id-empty", "lease_id", ""), ("placement-id-empty", "placement_id", ""), ("lease-id-number", "lease_id", 3)):
        X(name, f"{key} {render(val)} fails STR({key}).", "empty_string", m(RI01, {f"/{key}": val}), f"/{key}")
    X("order-model-id-before-instance-id", "STR(model_id) runs before STR(instance_id).", "empty_string",
      m(RI01, {"/model_id": "", "/instance_id": ""}), "/model_id", ["order"])
    X("order-lease-id-before-placement-id", "STR(lease_id) runs before STR(placement_id).", "empty_string",
      m(RI01, {"/placement_id": "", "/lease_id": ""}), "/lease_id", ["order"])
    X("order-strings-before-fragment-set", "The manifest strings are checked before the fragment-set rules.", "empty_string",
      m(RI01, {"/instance_id": "", "/tensors/2/fragment_id": RI01["tensors"][0]["fragment_id"]}), "/instance_id", ["order"])

    # -- fragment-set rules (§8.2) on runtime fragments (id = fragment_id)
    X("duplicate-fragment-id", "Two records with one runtime fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(RI01, R(2, fragment_id=RI01["tensors"][0]["fragment_id"])), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two records of one tensor with the same rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(RI01, R(3, rank=RK(tp=0))), None, ["fragment-set"])
    X("fragment-rank-mismatch", "A 2-element global_offset for a 1-D tensor is rejected (F4).", "fragment_rank_mismatch",
      m(RI01, R(1, global_offset=[0, 0])), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A row split box past the end of the tensor is rejected (F5).", "fragment_out_of_bounds",
      m(RI01, R(2, global_offset=[12, 0])), None, ["fragment-set"])
    X("replicated-fragment-offset", "A replicated norm record with a non-zero offset is rejected (F6a).", "replicated_fragment_offset",
      m(RI01, R(1, global_offset=[4], local_shape=[4], stride=[1], nbytes=8)), None, ["fragment-set"])
    X("replicated-fragment-incomplete", "A replicated norm record covering half the tensor is rejected (F6b).", "replicated_fragment_incomplete",
      m(RI01, R(3, local_shape=[4], nbytes=8)), None, ["fragment-set"])
    X("non-shard-axis-offset", "A row split record with an offset on axis 1 is rejected (F7).", "non_shard_axis_offset",
      m(RI01, R(2, global_offset=[8, 4], local_shape=[8, 4], stride=[4, 1], nbytes=64)), None, ["fragment-set"])
    X("non-shard-axis-shape", "A row split record narrower than the tensor on axis 1 is rejected (F7).", "non_shard_axis_shape",
      m(RI01, R(0, local_shape=[8, 4], stride=[4, 1], nbytes=64)), None, ["fragment-set"])
    X("nbytes-mismatch", "A record whose nbytes is not the view's byte size is rejected (F8).", "nbytes_mismatch",
      m(RI01, R(0, nbytes=127)), None, ["fragment-set"])
    X("fragment-overlap", "Two row split boxes of one tensor on one rank that overlap are rejected (§8.3).", "fragment_overlap",
      m(RI01, R(2, rank=RK(tp=0), global_offset=[4, 0])), None, ["fragment-set", "overlap"])
    X("order-fragment-set-in-record-order", "Runtime fragments are checked in manifest (record) order: the first bad record wins.", "nbytes_mismatch",
      m(RI01, R(1, nbytes=17) | R(3, global_offset=[0, 0])), None, ["order"])

    # -- physical address rules (§8.5)
    X("address-overlap-same-device", "Two fragments on one worker and device with overlapping byte ranges are rejected.", "address_overlap",
      m(RI01, R(1, address=A0 + 64)), None, ["address"])
    X("address-overlap-nested", "A byte range nested inside another in one address space is rejected.", "address_overlap",
      RINV([REC("rt/a", "w", [64], [0], [64], address=4096), REC("rt/b", "v", [8], [0], [8], address=4096 + 32)]), None, ["address"])
    X("address-overlap-two-endpoints", "The endpoint is not part of the address space: two endpoints of one worker and device overlap.", "address_overlap",
      RINV([REC("rt/a", "w", [8], [0], [8], endpoint="10.0.0.1:17000"), REC("rt/b", "v", [8], [0], [8], endpoint="10.0.0.1:17001", address=4096 + 8)]), None, ["address"])
    X("address-overlap-moe-experts", "Two MoE expert weights on one worker placed at overlapping addresses are rejected.", "address_overlap",
      m(RI02, R(2, address=RI02["tensors"][1]["address"] + 64)), None, ["address", "realistic"])
    X("order-fragment-set-before-address", "The fragment-set rules run before the address rules.", "nbytes_mismatch",
      m(RI01, R(1, address=A0 + 64) | R(3, nbytes=15)), None, ["order"])
    for name, desc, changes in (
        ("alias-one-name", "A one-name alias list never qualifies as an exact declared alias pair.",
         {"/tensors/0/aliases": [EMB], "/tensors/1/aliases": [EMB]}),
        ("alias-one-side-only", "Aliases declared on only one of two fragments at one address do not qualify.", {"/tensors/1/aliases": DEL}),
        ("alias-different-lists", "Different alias lists do not qualify.", {"/tensors/1/aliases": [EMB, "output.weight"]}),
        ("alias-partial-overlap", "A partial overlap is rejected even with equal declared aliases.", {"/tensors/1/address": 65536 + 128}),
        ("alias-different-nbytes", "A nested range with equal aliases (different nbytes and shape) is rejected.",
         {"/tensors/1/local_shape": [8, 8], "/tensors/1/stride": [8, 1], "/tensors/1/nbytes": 128}),
        ("alias-different-dtype", "Different dtypes make the descriptors differ, so the pair does not qualify.", {"/tensors/1/dtype": "float16"}),
        ("alias-different-fingerprint", "Different layout fingerprints make the descriptors differ.", {"/tensors/1/layout_fingerprint": "other"}),
        ("alias-different-global-shape", "Different global shapes make the descriptors differ.", {"/tensors/1/global_shape": [48, 8]}),
        ("alias-different-layer-id", "Different layer_ids make the descriptors differ.", {"/tensors/1/layer_id": 1}),
        ("alias-different-box", "Different global offsets do not qualify as an exact pair.", {"/tensors/1/global_offset": [16, 0]}),
    ):
        X(name, desc, "address_overlap", m(TIED, changes), None, ["alias", "address"])


# ----------------------------------------------------------------------------------------
# placement_inventory/ : placement.from_inventory (§10.5)

def cases_placement_inventory():
    g = "placement_inventory/"
    op = "placement.from_inventory"
    # The TP=2 block as a placement inventory: one record per fragment, descriptor members
    # inline (shard_dims left out: it is optional here).
    descs = {t["tensor_id"]: {k: v for k, v in t.items() if k != "shard_dims"} for t in PB["tensors"]}
    PI = {"model_id": "example/dense-tp2", "revision": "r1",
          "tensors": [dict(descs[f["tensor_id"]], **{k: f[k] for k in (
              "placement_fragment_id", "global_offset", "local_shape", "nbytes", "rank")})
              for f in PB["fragments"]]}

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    P("tp2-dense-block", "A placement inventory of the TP=2 block gives the same placement as the wire form.", PI, ["realistic"])
    P("records-reordered", "Records in reverse order give the same placement.", m(PI, {"/tensors": PI["tensors"][::-1]}), ["order"])
    P("runtime-inventory-with-explicit-ids", "A runtime inventory whose records all carry placement_fragment_id is a valid placement inventory (§10.5 note).", RI01)
    P("physical-members-ignored", "Physical members (address 0, is_contiguous false, bad stride, other lease_generation) are not read.",
      m(RI01, {"/tensors/0/address": 0, "/tensors/0/is_contiguous": False, "/tensors/1/stride": "x",
               "/tensors/2/lease_generation": -1, "/generation": None, "/instance_id": ""}))
    P("ignored-members-any-value", "Numbers like 1e400 and 2^70 in ignored members are never checked.",
      m(PI, {"/tensors/0/scale": Raw("1e400"), "/tensors/1/serial": 2**70}))
    P("descriptor-spellings-merged", "partition_dim 0 and shard_dims [0] on two records of one tensor are merged.",
      m(PI, {"/tensors/1/partition_dim": None, "/tensors/1/shard_dims": [0]}), ["canonical"])
    P("placement-id-given", "A placement_id equal to the canonical id is accepted.", m(PI, {"/placement_id": PB_ID}))
    P("placement-id-null", "placement_id null means compute.", m(PI, {"/placement_id": None}))
    P("aliases-and-optional-nulls", "aliases null and layer_id null are not set; unsorted aliases are sorted.",
      m(PI, {"/tensors/0/aliases": ["z", "a"], "/tensors/1/aliases": None}))
    P("empty-inventory", "No records give the empty placement.", {"model_id": "m", "revision": "r", "tensors": []})

    X("tensors-missing", "A placement inventory without tensors lacks a required member.", "missing_field", m(PI, {"/tensors": DEL}), "")
    X("tensors-string", "tensors that is a string fails SEQ(placement inventory tensors).", "not_a_sequence", m(PI, {"/tensors": "x"}), "/tensors")
    X("record-not-an-object", "A record that is a string reads as an empty object: missing_field.", "missing_field", m(PI, {"/tensors/2": "x"}), "/tensors/2", ["structure"])
    X("record-missing-tensor-id", "A record without tensor_id lacks a required member.", "missing_field", m(PI, {"/tensors/0/tensor_id": DEL}), "/tensors/0", ["structure"])
    X("record-missing-partition-dim", "partition_dim is required even though it may be null.", "missing_field", m(PI, {"/tensors/4/partition_dim": DEL}), "/tensors/4", ["structure"])
    X("record-missing-placement-fragment-id", "A record without placement_fragment_id lacks a required member (W2 inventory).", "missing_field", RIW2, "/tensors/0", ["structure"])
    X("record-null-placement-fragment-id", "placement_fragment_id null fails STR in a placement inventory (§10.5 note).", "empty_string",
      m(PI, {"/tensors/1/placement_fragment_id": None}), "/tensors/1/placement_fragment_id")
    X("record-missing-rank", "A record without rank lacks a required member.", "missing_field", m(PI, {"/tensors/3/rank": DEL}), "/tensors/3", ["structure"])
    X("rank-missing-dp", "A rank without dp lacks a required member.", "missing_field", m(PI, {"/tensors/0/rank/dp": DEL}), "/tensors/0/rank", ["structure"])
    X("rank-not-an-object", "A rank that is an array reads as an empty object.", "missing_field", m(PI, {"/tensors/0/rank": [0, 0, 0, 0]}), "/tensors/0/rank", ["structure"])
    X("order-fragment-members-before-rank-members", "placement_fragment_id is read before the rank's members.", "missing_field",
      m(PI, {"/tensors/0/placement_fragment_id": DEL, "/tensors/0/rank": {}}), "/tensors/0", ["order"])
    X("order-descriptor-reads-before-checks", "All descriptor members are read before the checks run.", "missing_field",
      m(PI, {"/tensors/0/dtype": DEL, "/tensors/0/global_shape": []}), "/tensors/0", ["order"])
    X("itemsize-null", "itemsize null fails INT(itemsize, 1).", "not_an_integer", m(PI, {"/tensors/0/itemsize": None}), "/tensors/0/itemsize", ["descriptor"])
    X("global-shape-empty", "An empty global_shape is empty_shape.", "empty_shape", m(PI, {"/tensors/3/global_shape": []}), "/tensors/3/global_shape", ["descriptor"])
    X("partition-dim-out-of-range", "partition_dim 1 on a 1-D tensor is out of range.", "partition_dim_out_of_range", m(PI, {"/tensors/4/partition_dim": 1}), "/tensors/4/partition_dim", ["descriptor"])
    X("shard-dims-unsorted", "shard_dims [1, 0] is unsorted.", "shard_dims_unsorted", m(PI, {"/tensors/0/partition_dim": None, "/tensors/0/shard_dims": [1, 0]}), "/tensors/0/shard_dims", ["descriptor"])
    X("shard-dims-duplicate", "shard_dims [1, 1] has a duplicate.", "shard_dims_duplicate", m(PI, {"/tensors/2/partition_dim": None, "/tensors/2/shard_dims": [1, 1]}), "/tensors/2/shard_dims", ["descriptor"])
    X("shard-dims-out-of-range", "shard_dims [0, 2] names a dimension past ndim.", "shard_dims_out_of_range", m(PI, {"/tensors/0/partition_dim": None, "/tensors/0/shard_dims": [0, 2]}), "/tensors/0/shard_dims", ["descriptor"])
    X("partition-dim-conflict", "partition_dim 0 with shard_dims [] conflicts.", "partition_dim_conflict", m(PI, {"/tensors/0/shard_dims": []}), "/tensors/0/shard_dims", ["descriptor"])
    X("descriptor-mismatch-itemsize", "A second record of one tensor with another itemsize is a descriptor mismatch.", "descriptor_mismatch",
      m(PI, {"/tensors/1/itemsize": 4}), "/tensors/1", ["descriptor"])
    X("descriptor-mismatch-fingerprint", "A second record of one tensor with another layout_fingerprint is a descriptor mismatch.", "descriptor_mismatch",
      m(RI01, {"/tensors/3/layout_fingerprint": "hf:bf16:v2"}), "/tensors/3", ["descriptor"])
    X("order-descriptor-mismatch-before-rank", "descriptor_mismatch (step 3.2) wins over a missing rank (step 3.3).", "descriptor_mismatch",
      m(PI, {"/tensors/1/dtype": "float16", "/tensors/1/rank": DEL}), "/tensors/1", ["order"])
    X("aliases-string", "aliases that is not an array is rejected when read.", "aliases_invalid", m(PI, {"/tensors/0/aliases": "x"}), "/tensors/0/aliases", ["aliases"])
    X("aliases-duplicate", "Duplicate aliases are rejected.", "aliases_duplicate", m(PI, {"/tensors/5/aliases": ["x", "x"]}), "/tensors/5/aliases", ["aliases"])
    X("rank-tp-negative", "A negative tp coordinate fails INT.", "below_minimum", m(PI, {"/tensors/1/rank/tp": -1}), "/tensors/1/rank/tp", ["rank"])
    X("rank-dp-u64-overflow", "A dp coordinate of 2^64 is u64_overflow.", "u64_overflow", m(PI, {"/tensors/1/rank/dp": U64 + 1}), "/tensors/1/rank/dp", ["rank", "u64"])
    X("nbytes-zero", "nbytes 0 fails INT(nbytes, 1).", "below_minimum", m(PI, {"/tensors/5/nbytes": 0}), "/tensors/5/nbytes", ["fragment"])
    X("local-shape-zero", "A zero extent in local_shape fails INTS(local_shape, 1).", "below_minimum", m(PI, {"/tensors/2/local_shape": [4, 0]}), "/tensors/2/local_shape", ["fragment"])
    X("model-id-missing", "A placement inventory without model_id lacks a required member.", "missing_field", m(PI, {"/model_id": DEL}), "")
    X("order-records-before-model-id", "model_id is read only after every record.", "below_minimum",
      m(PI, {"/model_id": DEL, "/tensors/5/nbytes": 0}), "/tensors/5/nbytes", ["order"])
    X("revision-empty", "An empty revision fails STR(revision).", "empty_string", m(PI, {"/revision": ""}), "/revision")
    X("placement-id-empty", "An empty placement_id fails STR(placement_id).", "empty_string", m(PI, {"/placement_id": ""}), "/placement_id")
    X("placement-id-wrong", "A placement_id that is not the canonical id is rejected.", "placement_id_mismatch",
      m(PI, {"/placement_id": ID01["placement_id"]}))
    X("placement-id-mismatch-reference", "The 01 inventory with the id of placement 02 is rejected.", "placement_id_mismatch",
      m(RI01, {"/placement_id": ID02["placement_id"]}))
    X("duplicate-fragment-id", "Two records with one placement_fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(PI, {"/tensors/1/placement_fragment_id": "qkv/tp0"}), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two records of one tensor, rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(PI, {"/tensors/5/rank/tp": 0}), None, ["fragment-set"])
    X("fragment-overlap", "Overlapping boxes of one tensor on one rank are rejected.", "fragment_overlap",
      m(PI, {"/tensors/1/rank/tp": 0, "/tensors/1/global_offset": [3, 0]}), None, ["fragment-set", "overlap"])
    X("nbytes-mismatch", "nbytes that is not the box's byte size is rejected.", "nbytes_mismatch", m(PI, {"/tensors/0/nbytes": 16}), None, ["fragment-set"])
    X("non-shard-axis-shape", "A column split record narrower on axis 0 is rejected.", "non_shard_axis_shape",
      m(PI, {"/tensors/3/local_shape": [2, 4], "/tensors/3/nbytes": 16}), None, ["fragment-set"])
    X("replicated-fragment-incomplete", "A replicated record covering part of the tensor is rejected.", "replicated_fragment_incomplete",
      m(PI, {"/tensors/4/local_shape": [2], "/tensors/4/nbytes": 4}), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A record box past the tensor end is rejected.", "fragment_out_of_bounds",
      m(PI, {"/tensors/1/global_offset": [5, 0]}), None, ["fragment-set"])
    X("non-finite-in-ignored-member", "NaN in an ignored member is still non_finite_number.", "non_finite_number",
      m(PI, {"/tensors/0/address": Raw("NaN")}), None, ["reader"])
    X("duplicate-key-in-ignored-member", "A duplicate key inside an ignored member is still duplicate_key.", "duplicate_key",
      m(PI, {"/tensors/0/physical": Pairs(("address", 1), ("address", 1))}), None, ["reader"])
    X("duplicate-key-in-record", "A repeated key inside a record is duplicate_key.", "duplicate_key",
      m(PI, {"/tensors/2": dup(PI["tensors"][2], "nbytes")}), None, ["reader"])
    X("not-an-object", "A placement inventory that is a string is not an object.", "not_an_object", '"inventory"', "")


# ----------------------------------------------------------------------------------------
# binding_inventory/ : binding.from_inventory (§10.4, §8.6)

def cases_binding_inventory():
    g = "binding_inventory/"
    op = "binding.from_inventory"

    def P(name, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    def R(i, **changes):
        return {f"/fragments/{i}/{k}": v for k, v in changes.items()}

    P("fragments-reordered", "Binding fragments are emitted sorted by placement_fragment_id whatever the record order.",
      m(BI01, {"/fragments": BI01["fragments"][::-1]}), ["order"])
    P("option-view", "address_semantics 'view' is accepted.", BI01, address_semantics="view", tags=["view"])
    P("lease-generation-absent", "lease_generation is optional in binding records.", m(BI01, R(0, lease_generation=DEL) | R(1, lease_generation=None)), ["lease"])
    P("offsets-zero-without-view", "storage_offset and byte_offset of 0 need no view semantics.", m(BI01, R(0, storage_offset=0, byte_offset=0)), ["view"])
    P("offsets-with-view", "Non-zero offsets are accepted under 'view', with no alignment rule (byte_offset 3).",
      m(BI01, R(0, storage_offset=5, byte_offset=3)), ["view"], address_semantics="view")
    P("unknown-members-ignored", "Unknown members of the inventory and its records are ignored.",
      m(BI01, {"/note": [1, 2], "/fragments/2/stride": "ignored"}))
    P("overlapping-addresses-not-checked", "A binding manifest does not check address overlap (§2.8); bind does.",
      m(BI01, R(2, address=BI01["fragments"][0]["address"])), ["address"])
    P("placement-id-format-not-checked", "A binding's placement_id is any non-empty string (§2.8).", m(BI01, {"/placement_id": "my-placement"}))
    P("address-top-of-range", "address 2^64-33 with nbytes 32 is accepted.", m(BI01, R(3, address=U64 - 32, nbytes=32)), ["u64", "address"])
    P("no-fragments", "A binding inventory with no fragments is valid.", m(BI01, {"/fragments": []}))
    P("generation-u64-max", "generation 2^64-1 is accepted; records without lease_generation follow it.",
      m(BI01, {"/generation": U64, "/fragments": [m(f, {"/lease_generation": DEL}) for f in BI01["fragments"]]}), ["u64"])

    for name, val in (("option-empty", ""), ("option-uppercase", "VIEW")):
        X(name, f"address_semantics {val!r} is not exactly 'view'.", "address_semantics_invalid", BI01, address_semantics=val, tags=["view"])
    X("order-option-before-generation", "The option is checked before generation is read.", "address_semantics_invalid",
      m(BI01, {"/generation": DEL}), address_semantics="View", tags=["order"])
    X("generation-missing", "A binding inventory without generation lacks a required member.", "missing_field", m(BI01, {"/generation": DEL}), "")
    X("generation-negative", "A negative generation fails INT(generation, 0).", "below_minimum", m(BI01, {"/generation": -1}), "/generation")
    X("generation-float", "A generation written 3.0 fails INT.", "not_an_integer", m(BI01, {"/generation": Raw("3.0")}), "/generation")
    X("order-generation-before-other-members", "generation is read and checked before the other members are read.", "not_an_integer",
      m(BI01, {"/generation": "3", "/model_id": DEL}), "/generation", ["order"])
    for key in ("model_id", "placement_digest", "lease_id", "fragments"):
        X(f"{key.replace('_', '-')}-missing", f"A binding inventory without {key} lacks a required member.", "missing_field", m(BI01, {f"/{key}": DEL}), "")
    X("fragments-object", "fragments that is an object fails SEQ(runtime binding fragments).", "not_a_sequence", m(BI01, {"/fragments": {}}), "/fragments")
    X("record-not-an-object", "A record that is a number reads as an empty object: missing_field.", "missing_field", m(BI01, {"/fragments/1": 0}), "/fragments/1", ["structure"])
    for key in ("is_contiguous", "placement_fragment_id", "fragment_id", "device", "nbytes"):
        X(f"record-missing-{key.replace('_', '-')}", f"A record without {key} lacks a required member.", "missing_field",
          m(BI01, {f"/fragments/2/{key}": DEL}), "/fragments/2", ["structure"])
    X("is-contiguous-false", "is_contiguous false is rejected.", "not_contiguous", m(BI01, R(1, is_contiguous=False)), "/fragments/1/is_contiguous", ["view"])
    X("is-contiguous-string", "is_contiguous \"true\" is not the literal true.", "not_contiguous", m(BI01, R(0, is_contiguous="true")), "/fragments/0/is_contiguous", ["view"])
    X("lease-generation-mismatch", "A record lease_generation that differs from generation is rejected.", "lease_generation_mismatch",
      m(BI01, R(2, lease_generation=2)), "/fragments/2/lease_generation", ["lease"])
    X("lease-generation-negative", "A negative record lease_generation fails INT.", "below_minimum", m(BI01, R(0, lease_generation=-1)), "/fragments/0/lease_generation", ["lease"])
    X("storage-offset-without-view", "A non-zero storage_offset without 'view' is rejected.", "offsets_require_view_semantics", m(BI01, R(0, storage_offset=8)), None, ["view"])
    X("byte-offset-without-view", "A non-zero byte_offset without 'view' is rejected.", "offsets_require_view_semantics", m(BI01, R(3, byte_offset=2, storage_offset=0)), None, ["view"])
    X("storage-offset-negative", "A negative storage_offset fails INT.", "below_minimum", m(BI01, R(0, storage_offset=-1)), "/fragments/0/storage_offset", ["view"])
    X("byte-offset-string", "A string byte_offset fails INT.", "not_an_integer", m(BI01, R(0, byte_offset="0")), "/fragments/0/byte_offset", ["view"])
    X("order-contiguous-before-lease", "is_contiguous is checked before lease_generation.", "not_contiguous",
      m(BI01, R(0, is_contiguous=False, lease_generation=9)), "/fragments/0/is_contiguous", ["order"])
    X("order-lease-before-offsets", "lease_generation is checked before the offsets.", "lease_generation_mismatch",
      m(BI01, R(0, lease_generation=9, storage_offset=8)), "/fragments/0/lease_generation", ["order"])
    X("order-offsets-before-fragment-members", "The offsets are checked before placement_fragment_id ... device are read.", "offsets_require_view_semantics",
      m(BI01, R(0, storage_offset=8, device=DEL)), None, ["order"])
    for name, changes, code, path in (
        ("placement-fragment-id-empty", R(0, placement_fragment_id=""), "empty_string", "/fragments/0/placement_fragment_id"),
        ("fragment-id-null", R(1, fragment_id=None), "empty_string", "/fragments/1/fragment_id"),
        ("worker-id-empty", R(1, worker_id=""), "empty_string", "/fragments/1/worker_id"),
        ("endpoint-number", R(1, endpoint=17000), "empty_string", "/fragments/1/endpoint"),
        ("address-zero", R(2, address=0), "below_minimum", "/fragments/2/address"),
        ("address-float", R(2, address=Raw("4096.0")), "not_an_integer", "/fragments/2/address"),
        ("nbytes-zero", R(2, nbytes=0), "below_minimum", "/fragments/2/nbytes"),
        ("nbytes-u64-overflow", R(2, nbytes=U64 + 1), "u64_overflow", "/fragments/2/nbytes"),
    ):
        X(name, f"A record with {name.replace('-', ' ')} fails its RuntimeBindingFragment check.", code, m(BI01, changes), path, ["fragment"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end.", "address_range_overflow",
      m(BI01, R(3, address=U64 - 31, nbytes=32)), None, ["u64", "address"])
    X("order-device-before-address", "STR(device) runs before the address checks.", "empty_string",
      m(BI01, R(0, device="", address=0)), "/fragments/0/device", ["order"])
    X("order-records-before-manifest-strings", "Records are checked before the manifest's own strings (construction, step 5).", "below_minimum",
      m(BI01, {"/model_id": ""} | R(3, address=0)), "/fragments/3/address", ["order"])
    for name, key, val in (("model-id-empty", "model_id", ""), ("revision-null", "revision", None), ("placement-id-empty", "placement_id", ""),
                           ("instance-id-empty", "instance_id", ""), ("lease-id-empty", "lease_id", ""), ("placement-digest-empty", "placement_digest", "")):
        X(name, f"{key} {render(val)} fails STR({key}).", "empty_string", m(BI01, {f"/{key}": val}), f"/{key}")
    X("order-lease-id-before-digest", "STR(lease_id) runs before the placement_digest checks.", "empty_string",
      m(BI01, {"/lease_id": "", "/placement_digest": "XYZ"}), "/lease_id", ["order"])
    d = BI01["placement_digest"]
    for name, val, what in (("digest-uppercase", d.upper(), "uppercase hex"), ("digest-prefixed", "sha256:" + d, "a sha256: prefix"),
                            ("digest-63-chars", d[:-1], "63 characters"), ("digest-65-chars", d + "0", "65 characters"),
                            ("digest-non-hex", "g" + d[1:], "a non-hex character"), ("digest-placement-id", ID01["placement_id"], "the placement_id")):
        X(name, f"A placement_digest with {what} is not a bare lowercase SHA-256 digest.", "digest_format", m(BI01, {"/placement_digest": val}), None, ["digest"])
    X("duplicate-binding-fragment", "Two records with one placement_fragment_id are rejected.", "duplicate_binding_fragment",
      m(BI01, R(1, placement_fragment_id="gate_up_proj/tp0")))
    X("duplicate-runtime-fragment-id", "Two records with one runtime fragment_id are rejected.", "duplicate_runtime_fragment_id",
      m(BI01, R(3, fragment_id="rt/worker-tp0/gate_up")))
    X("order-duplicate-binding-before-runtime-id", "duplicate_binding_fragment (step 6) wins over a duplicate fragment_id (step 7).", "duplicate_binding_fragment",
      m(BI01, {"/fragments/4": BI01["fragments"][0]}), None, ["order"])
    X("order-digest-format-before-duplicates", "The placement_digest format check (step 4) runs before the duplicate checks (steps 6, 7).", "digest_format",
      m(BI01, {"/placement_digest": d.upper(), "/fragments/4": BI01["fragments"][0]}), None, ["order"])


# ----------------------------------------------------------------------------------------
# binding/ : binding.parse (§9.2, §8.6)

def cases_binding():
    g = "binding/"
    op = "binding.parse"
    base_text = ref_text("derived/01_tp_sharded_2d.binding.json")

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    P("canonical-roundtrip", "The canonical binding JSON of model 01 parses back to exactly itself (§13.4).", base_text)
    P("pretty-roundtrip", "An indented binding JSON gives the canonical text.", pretty(BM01))
    P("fragments-reordered", "Fragments given out of order are emitted sorted by placement_fragment_id.", m(BM02, {"/fragments": BM02["fragments"][::-1]}), ["order"])
    P("overlap-not-checked", "Binding manifests do not check address overlap.", m(BM01, {"/fragments/2/address": BM01["fragments"][0]["address"]}), ["address"])
    P("no-fragments", "A binding manifest without fragments is valid.", m(BM01, {"/fragments": []}))
    P("address-top-of-range", "address 2^64-33 with nbytes 32 is accepted.", m(BM01, {"/fragments/3/address": U64 - 32, "/fragments/3/nbytes": 32}), ["u64"])

    X("top-missing-lease-id", "A binding manifest without lease_id does not have the eight keys.", "fields_mismatch", m(BM01, {"/lease_id": DEL}), "", ["structure"])
    X("top-extra-schema", "A schema member is not part of the binding wire form.", "fields_mismatch", m(BM01, {"/schema": "binding"}), "", ["structure"])
    X("fragment-missing-endpoint", "A binding fragment without endpoint does not have the seven keys.", "fields_mismatch", m(BM01, {"/fragments/2/endpoint": DEL}), "/fragments/2", ["structure"])
    X("fragment-extra-is-contiguous", "An inventory-only member in a binding fragment fails the key set.", "fields_mismatch", m(BM01, {"/fragments/0/is_contiguous": True}), "/fragments/0", ["structure"])
    X("fragment-not-an-object", "A binding fragment that is a string fails the key set.", "fields_mismatch", m(BM01, {"/fragments/1": "x"}), "/fragments/1", ["structure"])
    X("fragments-not-an-array", "fragments that is null fails SEQ(runtime binding fragments).", "not_a_sequence", m(BM01, {"/fragments": None}), "/fragments", ["structure"])
    X("generation-null", "generation is not nullable in a binding manifest.", "not_an_integer", m(BM01, {"/generation": None}), "/generation")
    X("lease-id-null", "lease_id is not nullable in a binding manifest.", "empty_string", m(BM01, {"/lease_id": None}), "/lease_id")
    X("placement-digest-empty", "An empty placement_digest fails STR first.", "empty_string", m(BM01, {"/placement_digest": ""}), "/placement_digest", ["digest"])
    X("digest-uppercase", "An uppercase placement_digest is rejected.", "digest_format", m(BM01, {"/placement_digest": BM01["placement_digest"].upper()}), None, ["digest"])
    X("digest-prefixed", "A sha256:-prefixed placement_digest is rejected.", "digest_format", m(BM01, {"/placement_digest": "sha256:" + BM01["placement_digest"]}), None, ["digest"])
    X("address-zero", "address 0 is the reserved null sentinel (§17).", "below_minimum", m(BM01, {"/fragments/1/address": 0}), "/fragments/1/address", ["address"])
    X("address-range-overflow", "address 2^64-32 with nbytes 32 has an unrepresentable end.", "address_range_overflow",
      m(BM01, {"/fragments/3/address": U64 - 31, "/fragments/3/nbytes": 32}), None, ["u64", "address"])
    X("worker-id-empty", "An empty worker_id fails STR.", "empty_string", m(BM01, {"/fragments/3/worker_id": ""}), "/fragments/3/worker_id")
    X("duplicate-binding-fragment", "Two fragments with one placement_fragment_id are rejected.", "duplicate_binding_fragment",
      m(BM01, {"/fragments/1/placement_fragment_id": BM01["fragments"][0]["placement_fragment_id"]}))
    X("duplicate-runtime-fragment-id", "Two fragments with one fragment_id are rejected.", "duplicate_runtime_fragment_id",
      m(BM01, {"/fragments/1/fragment_id": BM01["fragments"][0]["fragment_id"]}))
    X("order-fragments-before-model-id", "Fragment checks (§9.2 step 3) run before the manifest's strings (step 4).", "below_minimum",
      m(BM01, {"/model_id": "", "/fragments/0/address": 0}), "/fragments/0/address", ["order"])
    X("order-strings-before-generation", "In a binding manifest STR(model_id) runs before INT(generation) (unlike the inventory).", "empty_string",
      m(BM01, {"/model_id": "", "/generation": -1}), "/model_id", ["order"])
    X("order-digest-before-generation", "The placement_digest checks run before INT(generation).", "digest_format",
      m(BM01, {"/placement_digest": "abc", "/generation": -1}), None, ["order"])


# ----------------------------------------------------------------------------------------
# runtime/ : runtime.parse (§9.1, §8.4, §8.5)

def cases_runtime():
    g = "runtime/"
    op = "runtime.parse"

    def P(name, desc, doc, tags=()):
        ok(g + name, op, desc, tags, document=doc)

    def X(name, desc, code, doc, path=None, tags=()):
        bad(g + name, op, desc, code, path, tags, document=doc)

    def gens(doc, *values):
        return m(doc, {f"/fragments/{i}/lease_generation": v for i, v in enumerate(values)})

    P("canonical-roundtrip", "The canonical runtime JSON of model 01 parses back to exactly itself (§13.4).", ref_text("derived/01_tp_sharded_2d.runtime.json"))
    P("bound-runtime-roundtrip", "The bound runtime manifest of model 02 parses back to exactly itself.", ref_text("derived/02_moe_ep_pp.bound-runtime.json"))
    P("tied-alias-pair", "Model 03 with its exact declared alias pairs parses.", RM03, ["alias"])
    P("pretty", "An indented runtime manifest gives the canonical text.", pretty(RM01))
    P("generation-null-derived", "generation null becomes the fragments' common lease_generation (§8.4 step 7).", m(RM01, {"/generation": None}))
    P("generation-null-no-fragments", "Without fragments generation null stays null.", m(RM01, {"/generation": None, "/fragments": [], "/tensors": []}))
    P("no-fragments-with-generation", "A runtime manifest without fragments keeps its generation.", m(RM01, {"/generation": 11, "/fragments": []}))
    P("lease-id-and-placement-id-null", "lease_id and placement_id may be null.", m(RM01, {"/lease_id": None, "/placement_id": None}))
    P("placement-id-not-checked", "A runtime manifest's placement_id is not compared with the canonical id (§8.4).", m(RM01, {"/placement_id": "sha256:" + "f" * 64}))
    P("non-canonical-spelling", "A descriptor spelled partition_dim 0, shard_dims null is emitted canonical.", m(RM01, {"/tensors/0/shard_dims": None}), ["canonical"])
    P("replicated-spelling-null", "A replicated descriptor with shard_dims null is emitted with shard_dims [].", m(RM01, {"/tensors/1/shard_dims": None}), ["canonical"])
    P("aliases-sorted", "Aliases are emitted sorted.", m(RM03, {"/fragments/0/aliases": RM03["fragments"][0]["aliases"][::-1],
                                                                "/fragments/1/aliases": RM03["fragments"][1]["aliases"][::-1]}), ["alias"])
    P("fragments-not-resorted", "Fragments keep manifest order (not re-sorted).", m(RM01, {"/fragments": RM01["fragments"][::-1]}), ["order"])
    P("tensors-not-resorted", "Tensors keep manifest order (not re-sorted).", m(RM01, {"/tensors": RM01["tensors"][::-1]}), ["order"])
    P("explicit-placement-fragment-id-null", "placement_fragment_id null means not set.", m(RM01, {"/fragments/0/placement_fragment_id": None}))

    X("top-missing-generation", "generation must be present (it may be null).", "fields_mismatch", m(RM01, {"/generation": DEL}), "", ["structure"])
    X("top-extra-key", "An unknown top-level member fails the eight keys.", "fields_mismatch", m(RM01, {"/owner": None}), "", ["structure"])
    X("tensor-missing-shard-dims", "A runtime tensor without shard_dims fails the nine keys.", "fields_mismatch", m(RM01, {"/tensors/1/shard_dims": DEL}), "/tensors/1", ["structure"])
    X("tensor-extra-key", "A runtime tensor with an unknown member fails the nine keys.", "fields_mismatch", m(RM01, {"/tensors/0/owner": None}), "/tensors/0", ["structure"])
    X("rank-extra-key", "A runtime rank with an unknown member fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/0/rank/world": 2}), "/fragments/0/rank", ["structure"])
    X("fragment-missing-placement-fragment-id", "placement_fragment_id must be present (it may be null).", "fields_mismatch",
      m(RM01, {"/fragments/2/placement_fragment_id": DEL}), "/fragments/2", ["structure"])
    X("fragment-extra-owner", "owner is never serialised, so it fails the fragment key set.", "fields_mismatch", m(RM01, {"/fragments/0/owner": None}), "/fragments/0", ["structure"])
    X("fragment-not-an-object", "A fragment that is a number fails the fragment key set.", "fields_mismatch", m(RM01, {"/fragments/3": 1}), "/fragments/3", ["structure"])
    X("rank-missing-dp", "A runtime rank without dp fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/1/rank/dp": DEL}), "/fragments/1/rank", ["structure"])
    X("rank-not-an-object", "A runtime rank that is a list fails the rank key set.", "fields_mismatch", m(RM01, {"/fragments/1/rank": [0, 0, 0, 0]}), "/fragments/1/rank", ["structure"])
    X("tensors-not-an-array", "tensors that is a string fails SEQ(runtime tensors).", "not_a_sequence", m(RM01, {"/tensors": "x"}), "/tensors", ["structure"])
    X("fragments-null", "fragments that is null fails SEQ(runtime fragments).", "not_a_sequence", m(RM01, {"/fragments": None}), "/fragments", ["structure"])
    X("aliases-null", "aliases null fails ALIASES in a runtime manifest.", "aliases_invalid", m(RM01, {"/fragments/0/aliases": None}), "/fragments/0/aliases", ["aliases"])
    X("aliases-duplicate", "Duplicate aliases are rejected.", "aliases_duplicate", m(RM01, {"/fragments/0/aliases": ["a", "a"]}), "/fragments/0/aliases", ["aliases"])
    X("placement-fragment-id-empty", "An empty explicit placement_fragment_id fails STR.", "empty_string",
      m(RM01, {"/fragments/1/placement_fragment_id": ""}), "/fragments/1/placement_fragment_id")
    X("address-zero", "address 0 is the reserved null sentinel.", "below_minimum", m(RM01, {"/fragments/0/address": 0}), "/fragments/0/address", ["address"])
    X("address-range-overflow", "An address range ending past 2^64-1 is rejected.", "address_range_overflow",
      m(RM01, {"/fragments/1/address": U64 - 15}), None, ["u64", "address"])
    X("endpoint-empty", "An empty endpoint fails STR.", "empty_string", m(RM01, {"/fragments/2/endpoint": ""}), "/fragments/2/endpoint")
    X("lease-generation-negative", "A negative lease_generation fails INT.", "below_minimum", m(RM01, {"/fragments/0/lease_generation": -1}), "/fragments/0/lease_generation")
    X("itemsize-zero", "itemsize 0 fails INT(itemsize, 1).", "below_minimum", m(RM01, {"/tensors/0/itemsize": 0}), "/tensors/0/itemsize", ["descriptor"])
    X("partition-dim-conflict", "partition_dim 0 with shard_dims [1] conflicts.", "partition_dim_conflict", m(RM01, {"/tensors/0/shard_dims": [1]}), "/tensors/0/shard_dims", ["descriptor"])
    X("global-shape-empty", "An empty global_shape is empty_shape.", "empty_shape", m(RM01, {"/tensors/1/global_shape": []}), "/tensors/1/global_shape", ["descriptor"])
    X("instance-id-empty", "An empty instance_id fails STR.", "empty_string", m(RM01, {"/instance_id": ""}), "/instance_id")
    X("lease-id-empty", "An empty lease_id fails STR.", "empty_string", m(RM01, {"/lease_id": ""}), "/lease_id")
    X("placement-id-empty", "An empty placement_id fails STR.", "empty_string", m(RM01, {"/placement_id": ""}), "/placement_id")
    X("generation-negative", "A negative generation fails INT.", "below_minimum", m(RM01, {"/generation": -1}), "/generation")
    X("order-lease-id-before-generation", "STR(lease_id) runs before INT(generation).", "empty_string", m(RM01, {"/lease_id": "", "/generation": -1}), "/lease_id", ["order"])
    X("order-fragments-before-model-id", "Fragment checks run before the manifest's strings.", "below_minimum",
      m(RM01, {"/model_id": "", "/fragments/3/address": 0}), "/fragments/3/address", ["order"])
    X("inconsistent-lease-generations", "Fragments with two lease generations are rejected (generation null).", "inconsistent_lease_generations",
      gens(m(RM01, {"/generation": None}), 3, 3, 4, 3), None, ["lease"])
    X("inconsistent-lease-generations-with-generation", "Two lease generations are rejected even when one equals generation.", "inconsistent_lease_generations",
      gens(RM01, 3, 5, 3, 3), None, ["lease"])
    X("generation-mismatch", "A generation that differs from the common lease_generation is rejected.", "generation_mismatch",
      m(RM01, {"/generation": 4}), None, ["lease"])
    X("generation-mismatch-tied", "Model 03 with generation 0 while its fragments carry 1 is rejected.", "generation_mismatch",
      m(RM03, {"/generation": 0}), None, ["lease"])
    X("order-generation-before-fragment-set", "The generation rule (step 7) runs before the fragment-set rules (step 8).", "generation_mismatch",
      m(RM01, {"/generation": 4, "/tensors/2": RM01["tensors"][0]}), None, ["order"])
    X("duplicate-tensor-id", "A tensor listed twice is rejected (T1).", "duplicate_tensor_id", m(RM01, {"/tensors/2": RM01["tensors"][1]}), None, ["fragment-set"])
    X("unknown-tensor-id", "A fragment of an unlisted tensor is rejected (F3).", "unknown_tensor_id", m(RM01, {"/tensors": RM01["tensors"][:1]}), None, ["fragment-set"])
    X("duplicate-fragment-id", "Two fragments with one fragment_id are rejected (F1).", "duplicate_fragment_id",
      m(RM01, {"/fragments/3/fragment_id": RM01["fragments"][1]["fragment_id"]}), None, ["fragment-set"])
    X("duplicate-logical-fragment", "Two fragments of one tensor, rank and box are rejected (F2).", "duplicate_logical_fragment",
      m(RM01, {"/fragments/3/rank": RK()}), None, ["fragment-set"])
    X("fragment-out-of-bounds", "A box past the tensor end is rejected (F5).", "fragment_out_of_bounds", m(RM01, {"/fragments/2/global_offset": [9, 0]}), None, ["fragment-set"])
    X("nbytes-mismatch", "nbytes that is not the box's byte size is rejected (F8).", "nbytes_mismatch", m(RM01, {"/fragments/1/nbytes": 32}), None, ["fragment-set"])
    X("fragment-overlap", "Overlapping boxes on one rank are rejected (§8.3).", "fragment_overlap",
      m(RM01, {"/fragments/2/rank": RK(), "/fragments/2/global_offset": [4, 0]}), None, ["fragment-set", "overlap"])
    X("address-overlap", "Overlapping byte ranges on one worker and device are rejected.", "address_overlap",
      m(RM01, {"/fragments/1/address": RM01["fragments"][0]["address"] + 112}), None, ["address"])
    X("address-overlap-two-endpoints", "Two endpoints of one worker and device share an address space.", "address_overlap",
      m(RM01, {"/fragments/2/worker_id": "worker-tp0", "/fragments/2/device": "cuda:0", "/fragments/2/endpoint": "10.0.0.1:17001"}), None, ["address"])
    X("alias-near-miss-one-name", "Tied fragments whose alias lists have one name do not qualify as an alias pair.", "address_overlap",
      m(RM03, {"/fragments/0/aliases": ["lm_head.weight"], "/fragments/1/aliases": ["lm_head.weight"]}), None, ["alias", "address"])
    X("alias-near-miss-dtype", "Tied fragments whose descriptors differ in dtype do not qualify.", "address_overlap",
      m(RM03, {"/tensors/0/dtype": "float16"}), None, ["alias", "address"])
    X("order-fragment-set-before-address", "The fragment-set rules run before the address rules.", "nbytes_mismatch",
      m(RM01, {"/fragments/1/address": RM01["fragments"][0]["address"] + 112, "/fragments/3/nbytes": 8}), None, ["order"])


# ----------------------------------------------------------------------------------------
# project/ : project.placement and project.binding (§11)

def cases_project():
    g = "project/"
    PP, PBD = "project.placement", "project.binding"
    pid01, pidw2 = ID01["placement_id"], ref_json("w2.expected.json")["placement_id"]
    moved = m(RI01, {"/instance_id": "another-instance", "/generation": 8, "/lease_id": "lease-8",
                     **{f"/tensors/{i}/{k}": v for i in range(4) for k, v in (
                         ("lease_generation", 8), ("address", 4096 + 4096 * i), ("worker_id", f"host-{i}"),
                         ("endpoint", f"h{i}:1"), ("device", "cuda:7"), ("fragment_id", f"new-{i}"))}})

    def P(name, op, desc, doc, tags=(), **kw):
        ok(g + name, op, desc, tags, document=doc, **kw)

    def X(name, op, desc, code, doc, path=None, tags=(), **kw):
        bad(g + name, op, desc, code, path, tags, document=doc, **kw)

    P("placement-argument-correct", PP, "The canonical id given as the argument is accepted.", RI01, placement_id=pid01)
    P("placement-argument-null", PP, "An argument of null means not given.", RI01, placement_id=None)
    P("placement-inventory-id-correct", PP, "The inventory's own placement_id equal to the canonical id is accepted.", m(RI01, {"/placement_id": pid01}))
    P("placement-argument-overrides-inventory", PP, "The argument is used instead of the inventory's (wrong) placement_id (§11.1 step 3).",
      m(RI01, {"/placement_id": "sha256:" + "0" * 64}), placement_id=pid01, tags=["order"])
    P("placement-physical-independence", PP, "Other instance, generation, lease, addresses, workers, devices and fragment_ids give the same placement.",
      moved, placement_id=pid01)
    P("placement-view-offsets", PP, "Offsets under 'view' do not enter the placement.", m(RI01, {"/tensors/0/storage_offset": 8}), address_semantics="view", tags=["view"])
    P("placement-generated-ids", PP, "Records without placement_fragment_id get logical ids (W2).", RIW2, placement_id=pidw2)
    P("placement-mixed-ids", PP, "Explicit and generated placement_fragment_ids can be mixed.",
      m(RI01, {"/tensors/1/placement_fragment_id": DEL, "/tensors/3/placement_fragment_id": None}))
    P("placement-tied-aliases", PP, "The tied-embedding inventory projects with its aliases in the logical ids.", TIED, tags=["alias", "realistic"])
    P("binding-argument-correct", PBD, "project.binding with the canonical id as argument.", RI01, placement_id=pid01)
    P("binding-physical-moved", PBD, "A moved runtime inventory projects to a binding with the same placement_id and digest.", moved)
    P("binding-generated-ids", PBD, "project.binding on the tied inventory carries the logical ids.", TIED, tags=["alias"])
    P("binding-view-offsets", PBD, "project.binding under 'view' with offsets.", m(TIED, {"/tensors/2/byte_offset": 2}), address_semantics="view", tags=["view"])

    X("placement-argument-wrong", PP, "An argument that is not the canonical id is rejected.", "placement_id_mismatch", RI01, placement_id=ID02["placement_id"])
    X("placement-argument-empty", PP, "An empty argument fails STR(placement_id) (§11.1 step 2).", "empty_string", RI01, placement_id="")
    X("placement-argument-digest", PP, "The digest given as the argument is rejected.", "placement_id_mismatch", RI01, placement_id=ID01["digest"])
    X("placement-inventory-id-wrong", PP, "A wrong placement_id in the inventory is rejected by the projection.", "placement_id_mismatch",
      m(RI01, {"/placement_id": pidw2}))
    X("placement-duplicate-explicit-id", PP, "Two runtime fragments with one explicit placement_fragment_id fail at projection (§11.1).", "duplicate_fragment_id",
      m(RI01, {"/tensors/2/placement_fragment_id": "gate_up_proj/tp0"}), tags=["fragment-set"])
    X("placement-explicit-id-equals-generated", PP, "An explicit id equal to another fragment's generated logical id is a duplicate.", "duplicate_fragment_id",
      m(TIED, {"/tensors/2/placement_fragment_id": logical_id(runtime_fragment(TIED["tensors"][0]))}), tags=["fragment-set"])
    X("placement-inventory-error-first", PP, "The inventory is read (and fails) before the argument is checked.", "non_canonical_stride",
      m(RI01, {"/tensors/0/stride": [1, 8]}), "/tensors/0/stride", ["order"], placement_id="")
    X("placement-stride-rank-mismatch", PP, "A stride rank mismatch in the inventory fails the projection.", "stride_rank_mismatch",
      m(RI01, {"/tensors/1/stride": [1, 1]}), "/tensors/1/stride", ["stride"])
    X("placement-byte-offset-unaligned", PP, "An unaligned byte_offset fails the projection.", "byte_offset_unaligned",
      m(RI01, {"/tensors/1/byte_offset": 1}), "/tensors/1/byte_offset", ["view"], address_semantics="view")
    X("placement-option-invalid", PP, "An invalid address_semantics fails the projection.", "address_semantics_invalid", RI01, address_semantics="VIEW")
    X("placement-not-contiguous", PP, "A non-contiguous record fails the projection.", "not_contiguous",
      m(RI01, {"/tensors/2/is_contiguous": False}), "/tensors/2/is_contiguous", ["view"])
    X("binding-missing-lease-id", PBD, "A runtime manifest without lease_id cannot give a binding.", "missing_lease_id", m(RI01, {"/lease_id": DEL}), tags=["lease"])
    X("binding-null-lease-id", PBD, "lease_id null is not set, so no binding can be made.", "missing_lease_id", m(TIED, {"/lease_id": None}), tags=["lease"])
    X("binding-missing-lease-id-before-argument", PBD, "missing_lease_id (§11.2 step 1) wins over a wrong argument.", "missing_lease_id",
      m(RI01, {"/lease_id": DEL}), placement_id="sha256:wrong", tags=["order"])
    X("binding-argument-wrong", PBD, "A wrong argument fails the binding projection.", "placement_id_mismatch", RI01, placement_id=pidw2)
    X("binding-argument-empty", PBD, "An empty argument fails STR(placement_id).", "empty_string", TIED, placement_id="")
    X("binding-inventory-id-wrong", PBD, "A wrong inventory placement_id fails the binding projection.", "placement_id_mismatch",
      m(TIED, {"/placement_id": pid01}))
    X("binding-duplicate-explicit-id", PBD, "Duplicate explicit placement_fragment_ids fail the binding projection.", "duplicate_fragment_id",
      m(RI01, {"/tensors/3/placement_fragment_id": "post_attention_layernorm/tp0"}), tags=["fragment-set"])
    X("binding-address-overlap", PBD, "An address overlap in the inventory fails the binding projection.", "address_overlap",
      m(TIED, {"/tensors/1/aliases": [EMB]}), tags=["alias", "address"])
    X("binding-byte-offset-unaligned", PBD, "An unaligned byte_offset fails the binding projection.", "byte_offset_unaligned",
      m(TIED, {"/tensors/0/byte_offset": 3}), "/tensors/0/byte_offset", ["view"], address_semantics="view")
    X("binding-non-canonical-stride", PBD, "A non-canonical stride fails the binding projection.", "non_canonical_stride",
      m(TIED, {"/tensors/2/stride": [2]}), "/tensors/2/stride", ["stride"])


# ----------------------------------------------------------------------------------------
# bind/ : bind (§12)

def cases_bind():
    g = "bind/"
    op = "bind"
    p01, p02, p03 = ref_text("01_tp_sharded_2d.placement.json"), ref_text("02_moe_ep_pp.placement.json"), ref_text("03_tied_aliases.placement.json")

    def P(name, desc, placement, binding, tags=(), **kw):
        ok(g + name, op, desc, tags, placement=placement, binding=binding, **kw)

    def X(name, desc, code, placement, binding, tags=(), **kw):
        bad(g + name, op, desc, code, None, tags, placement=placement, binding=binding, **kw)

    def BF(i, **changes):
        return {f"/fragments/{i}/{k}": v for k, v in changes.items()}

    P("pretty-placement", "An indented placement binds like its canonical text.", ref_text("01_tp_sharded_2d.placement.pretty.json"), BI01)
    P("non-canonical-placement", "A placement with reordered content and non-canonical spellings binds (the digest is of the normalised form).",
      m(P01, {"/fragments": P01["fragments"][::-1], "/tensors/0/shard_dims": None}), BI01, ["canonical"])
    P("binding-reordered", "The order of the binding's fragments does not affect the result.", p01, m(BI01, {"/fragments": BI01["fragments"][::-1]}), ["order"])
    P("rebind-new-physical", "A new instance, generation, lease and addresses bind to the same placement (§13.3).", p01,
      m(BI01, {"/instance_id": "restarted", "/generation": 4, "/lease_id": "lease-4",
               **{f"/fragments/{i}/{k}": v for i in range(4) for k, v in (("lease_generation", 4), ("address", 8192 * (i + 1)), ("fragment_id", f"r{i}"))}}))
    P("one-rank-over-many-workers", "The fragments of one rank may live on several workers and devices.", p01,
      m(BI01, BF(2, worker_id="worker-tp0-b", device="cuda:2", endpoint="10.0.0.3:17000")), ["realistic"])
    P("empty-placement-empty-binding", "An empty placement with an empty binding gives an empty runtime manifest with the binding's generation and lease_id (§12).",
      ref_text("empty.placement.json"),
      {"model_id": "m", "revision": "r", "placement_id": ref_json("empty.expected.json")["placement_id"],
       "placement_digest": ref_json("empty.expected.json")["digest"], "instance_id": "i", "generation": 6, "lease_id": "l", "fragments": []})
    P("view-offsets", "Binding records with offsets bind under 'view'.", p03, m(BI03, BF(0, storage_offset=16)), ["view"], address_semantics="view")
    P("lease-generation-absent", "Binding records without lease_generation take the binding generation as the fence.", p02,
      m(BI02, {f"/fragments/{i}/lease_generation": DEL for i in range(len(BI02["fragments"]))}), ["lease"])

    X("model-id-mismatch", "A binding for another model_id is rejected.", "model_id_mismatch", p01, m(BI01, {"/model_id": "example/other"}))
    X("model-id-mismatch-tied", "A binding with the model_id of model 01 for placement 03 is rejected.", "model_id_mismatch", p03, m(BI03, {"/model_id": ID01["model_id"]}))
    X("order-model-id-before-revision", "model_id is compared before revision.", "model_id_mismatch", p01, m(BI01, {"/model_id": "x", "/revision": "y"}), ["order"])
    X("revision-mismatch", "A binding for another revision is rejected.", "revision_mismatch", p01, m(BI01, {"/revision": "rev-2024-02"}))
    X("revision-mismatch-moe", "A binding for another revision of the MoE model is rejected.", "revision_mismatch", p02, m(BI02, {"/revision": "main"}))
    X("order-revision-before-placement-id", "revision is compared before placement_id.", "revision_mismatch", p01, m(BI01, {"/revision": "y", "/placement_id": "z"}), ["order"])
    X("placement-id-mismatch", "A binding naming another placement_id is rejected.", "binding_placement_id_mismatch", p01, m(BI01, {"/placement_id": ID02["placement_id"]}))
    X("placement-id-mismatch-free-form", "A binding with a free-form placement_id is rejected by bind.", "binding_placement_id_mismatch", p03, m(BI03, {"/placement_id": "tied"}))
    X("order-placement-id-before-digest", "placement_id is compared before the digest.", "binding_placement_id_mismatch", p01,
      m(BI01, {"/placement_id": "z", "/placement_digest": "0" * 64}), ["order"])
    X("digest-mismatch", "A binding with the digest of another placement is rejected.", "digest_mismatch", p01, m(BI01, {"/placement_digest": ID02["digest"]}))
    X("digest-mismatch-zero", "An all-zero digest is well-formed but does not match.", "digest_mismatch", p02, m(BI02, {"/placement_digest": "0" * 64}))
    X("order-digest-before-fragments", "The digest is compared before the fragments.", "digest_mismatch", p01,
      m(BI01, {"/placement_digest": "0" * 64, "/fragments": []}), ["order"])
    X("unknown-binding-fragment", "A binding fragment whose id is not in the placement is rejected.", "unknown_binding_fragment", p01,
      m(BI01, {"/fragments/4": m(BI01["fragments"][0], {"/placement_fragment_id": "gate_up_proj/tp2", "/fragment_id": "extra"})}))
    X("order-unknown-before-missing", "A renamed fragment is unknown (step 5) before the original is missing (step 6).", "unknown_binding_fragment", p01,
      m(BI01, BF(1, placement_fragment_id="gate_up_proj/TP1")), ["order"])
    X("missing-binding-fragment", "A placement fragment without a binding fragment is rejected.", "missing_binding_fragment", p01,
      m(BI01, {"/fragments/3": DEL}))
    X("missing-binding-fragment-moe", "A MoE binding that lacks one expert fragment is rejected.", "missing_binding_fragment", p02,
      m(BI02, {"/fragments/7": DEL}), ["realistic"])
    X("order-missing-before-nbytes", "A missing fragment (step 6) is reported before an nbytes mismatch (step 7).", "missing_binding_fragment", p01,
      m(BI01, {"/fragments/3": DEL} | BF(0, nbytes=64)), ["order"])
    X("binding-nbytes-mismatch", "A binding fragment whose nbytes differs from the placement is rejected.", "binding_nbytes_mismatch", p01, m(BI01, BF(2, nbytes=32)))
    X("binding-nbytes-mismatch-tied", "A tied binding fragment with twice the bytes is rejected.", "binding_nbytes_mismatch", p03, m(BI03, BF(5, nbytes=512)))
    X("order-nbytes-before-overlap", "nbytes is compared (step 7) before address overlap (step 9).", "binding_nbytes_mismatch", p01,
      m(BI01, BF(0, nbytes=64) | BF(2, worker_id="worker-tp0", device="cuda:0", address=BI01["fragments"][0]["address"] + 8)), ["order"])
    X("address-overlap", "Binding two fragments to overlapping ranges on one worker and device fails at bind.", "address_overlap", p01,
      m(BI01, BF(2, address=BI01["fragments"][0]["address"] + 64)), ["address"])
    X("address-overlap-across-ranks", "Fragments of two TP ranks bound to one worker and device at one address overlap.", "address_overlap", p01,
      m(BI01, BF(1, worker_id="worker-tp0", device="cuda:0")), ["address"])
    assert any(f["fragment_id"] == "rt/worker-dp0-tp0/lm_head.weight" for f in BI03["fragments"])
    X("address-overlap-tied-shifted", "A tied pair whose second half is bound 16 bytes later is a partial overlap.", "address_overlap", p03,
      m(BI03, {f"/fragments/{i}/address": f["address"] + 16 for i, f in enumerate(BI03["fragments"]) if f["fragment_id"] == "rt/worker-dp0-tp0/lm_head.weight"}), ["alias", "address"])
    X("placement-error-first", "The placement is parsed before the binding inventory is read.", "fields_mismatch", m(P01, {"/schema": "x"}), "[]", ["order"])
    X("placement-invalid-json", "An invalid placement text fails bind.", "invalid_json", p01 + ",", BI01, ["reader"])
    X("placement-id-mismatch-in-placement", "A placement document whose own placement_id is wrong fails bind.", "placement_id_mismatch",
      m(P01, {"/placement_id": ID03["placement_id"]}), BI01)
    X("binding-option-invalid", "An invalid address_semantics fails the binding inventory read.", "address_semantics_invalid", p01, BI01, address_semantics="")
    X("binding-offsets-without-view", "Binding offsets without 'view' fail the binding inventory read.", "offsets_require_view_semantics", p01, m(BI01, BF(0, byte_offset=2)), ["view"])
    X("binding-digest-format", "A malformed placement_digest fails before bind compares anything.", "digest_format", p01, m(BI01, {"/placement_digest": ID01["digest"].upper()}), ["digest"])
    X("binding-lease-mismatch", "A binding record lease_generation mismatch fails the binding inventory read.", "lease_generation_mismatch", p02, m(BI02, BF(0, lease_generation=11)), ["lease"])
    X("binding-duplicate-fragment", "A duplicate binding fragment fails the binding construction before bind.", "duplicate_binding_fragment", p01,
      m(BI01, {"/fragments/4": BI01["fragments"][0]}))


# ----------------------------------------------------------------------------------------
# reference/ : every reference vector through every operation that applies

def cases_reference():
    g = "reference/"
    for mname in MODELS:
        short = mname.replace("_", "-")
        wire = ref_text(f"{mname}.placement.json")
        ids = ref_json("ids.json")[mname]
        pexp = {"canonical": wire, "placement_id": ids["placement_id"], "digest": ids["digest"]}
        rinv, binv = ref_text(f"{mname}.runtime-inventory.json"), ref_text(f"{mname}.binding-inventory.json")
        runtime, binding = ref_text(f"derived/{mname}.runtime.json"), ref_text(f"derived/{mname}.binding.json")
        bound = ref_text(f"derived/{mname}.bound-runtime.json")
        tags = ["reference", "realistic"]
        ok(f"{g}{short}-placement-parse", "placement.parse", f"Reference placement {mname} parses to its own bytes, id and digest.", tags, pexp, document=wire)
        ok(f"{g}{short}-placement-parse-pretty", "placement.parse", f"The indented reference placement {mname} gives the canonical bytes, id and digest.", tags, pexp,
           document=ref_text(f"{mname}.placement.pretty.json"))
        ok(f"{g}{short}-runtime-from-inventory", "runtime.from_inventory", f"The reference runtime inventory {mname} gives the derived runtime JSON.", tags,
           {"runtime": runtime}, document=rinv)
        ok(f"{g}{short}-project-placement", "project.placement", f"Projecting the reference runtime inventory {mname} gives the reference placement.", tags, pexp, document=rinv)
        ok(f"{g}{short}-project-placement-with-id", "project.placement", f"Projecting {mname} with its placement_id as argument gives the reference placement.", tags, pexp,
           document=rinv, placement_id=ids["placement_id"])
        ok(f"{g}{short}-project-binding", "project.binding", f"The binding projection of {mname} gives the derived binding JSON.", tags, {"binding": binding}, document=rinv)
        ok(f"{g}{short}-binding-from-inventory", "binding.from_inventory", f"The reference binding inventory {mname} gives the derived binding JSON.", tags,
           {"binding": binding}, document=binv)
        ok(f"{g}{short}-bind", "bind", f"Binding the reference placement {mname} to its binding inventory gives the derived bound runtime JSON.", tags,
           {"runtime": bound}, placement=wire, binding=binv)
        ok(f"{g}{short}-runtime-parse", "runtime.parse", f"The derived runtime JSON of {mname} parses back to itself.", tags, {"runtime": runtime}, document=runtime)
        ok(f"{g}{short}-bound-runtime-parse", "runtime.parse", f"The derived bound runtime JSON of {mname} parses back to itself.", tags, {"runtime": bound}, document=bound)
        ok(f"{g}{short}-binding-parse", "binding.parse", f"The derived binding JSON of {mname} parses back to itself.", tags, {"binding": binding}, document=binding)
    ok(f"{g}01-tp-sharded-2d-placement-from-inventory", "placement.from_inventory",
       "The 01 runtime inventory read as a placement inventory gives the reference placement (§10.5 note).", ["reference"],
       {"canonical": ref_text("01_tp_sharded_2d.placement.json"), "placement_id": ID01["placement_id"], "digest": ID01["digest"]},
       document=ref_text("01_tp_sharded_2d.runtime-inventory.json"))
    for w in WORKED:
        e = ref_json(f"{w}.expected.json")
        pexp = {"canonical": e["digest_payload"], "placement_id": e["placement_id"], "digest": e["digest"]}
        ok(f"{g}{w}-placement-parse", "placement.parse", f"Worked example {w} parses to its own bytes, id and digest.", ["reference"], pexp,
           document=ref_text(f"{w}.placement.json"))
    for w in ("w2", "w3"):
        e = ref_json(f"{w}.expected.json")
        pexp = {"canonical": e["digest_payload"], "placement_id": e["placement_id"], "digest": e["digest"]}
        rinv = ref_text(f"{w}.runtime-inventory.json")
        ok(f"{g}{w}-runtime-from-inventory", "runtime.from_inventory", f"The {w} runtime inventory gives the derived runtime JSON.", ["reference"],
           {"runtime": ref_text(f"derived/{w}.runtime.json")}, document=rinv)
        ok(f"{g}{w}-project-placement", "project.placement", f"Projecting the {w} runtime inventory gives the {w} placement with generated logical ids.", ["reference"], pexp, document=rinv)
        ok(f"{g}{w}-project-binding", "project.binding", f"The binding projection of {w} gives the derived binding JSON.", ["reference"],
           {"binding": ref_text(f"derived/{w}.binding.json")}, document=rinv)


# ----------------------------------------------------------------------------------------
# coverage/ and plan/ : the coverage analysis and the reshard planner (codes added by this
# implementation; README "Codes added by this implementation", schema/coverage.schema.json,
# schema/plan.schema.json). The oracle below works on small inputs by direct enumeration.

# The codes this implementation adds that conformance operations raise (the rest are API-only).
ADDED_CODES = [c["code"] for c in codes_file() if c["origin"] == "implementation" and "api_only" not in c]
DEFAULT_MAX_REGIONS = 1 << 20
DEFAULT_MAX_SEGMENTS = 1 << 28


def _box_end(b, k):
    return b[0][k] + b[1][k]


def _intersect(a, b):
    return all(a[0][k] < _box_end(b, k) and b[0][k] < _box_end(a, k) for k in range(len(a[0])))


def _overlap_pair(boxes):
    """The pair the §8.3 procedure names for `boxes` in the given order, or None."""
    if len(boxes) < 2:
        return None
    ndim = len(boxes[0][0])
    counts = [len({(b[0][k], _box_end(b, k)) for b in boxes}) for k in range(ndim)]
    s = counts.index(max(counts))
    order = sorted(range(len(boxes)), key=lambda i: boxes[i][0][s])
    active = []
    for c in order:
        active = [p for p in active if _box_end(boxes[p], s) > boxes[c][0][s]]
        for p in active:
            if _intersect(boxes[p], boxes[c]):
                return [p, c]
        active.append(c)
    return None


def _tiling(shape, boxes):
    """(status, uncovered elements, first uncovered coordinate, overlap pair) of distinct
    boxes: by pairwise intersection and a walk over the compressed grid in lex order."""
    pair = _overlap_pair(boxes)
    if pair is not None:
        return "ambiguous", None, None, pair
    total = prod(shape)
    covered = sum(prod(b[1]) for b in boxes)
    if covered == total:
        return "complete", None, None, None
    cuts = []
    for k in range(len(shape)):
        cs = {0}
        for b in boxes:
            cs |= {b[0][k], _box_end(b, k)}
        cuts.append(sorted(c for c in cs if c < shape[k]))

    def first(prefix):
        k = len(prefix)
        if k == len(shape):
            return None if any(all(b[0][j] <= prefix[j] < _box_end(b, j) for j in range(k)) for b in boxes) else prefix
        for c in cuts[k]:
            found = first(prefix + [c])
            if found is not None:
                return found
        return None
    return "gaps", str(total - covered), first([]), None


def _distinct(frags):
    return sorted({(tuple(f["global_offset"]), tuple(f["local_shape"])) for f in frags})


def _as_lists(boxes):
    return [(list(o), list(e)) for o, e in boxes]


def coverage_report(doc: dict) -> dict:
    p = placement_from_wire(doc)["_value"]
    tensors = []
    for t in p["tensors"]:
        mine = [f for f in p["fragments"] if f["tensor_id"] == t["tensor_id"]]
        boxes = _as_lists(_distinct(mine))
        status, uncovered, coordinate, pair = _tiling(t["global_shape"], boxes)
        tensors.append({
            "boxes": [{"global_offset": o, "local_shape": e,
                       "replicas": sum(1 for f in mine if f["global_offset"] == o and f["local_shape"] == e)}
                      for o, e in boxes],
            "dp": [{"dp": d, "status": _tiling(t["global_shape"], _as_lists(_distinct(
                [f for f in mine if f["rank"]["dp"] == d])))[0]} for d in sorted({f["rank"]["dp"] for f in mine})],
            "overlap": pair, "status": status, "tensor_id": t["tensor_id"],
            "uncovered_coordinate": coordinate, "uncovered_elements": uncovered,
        })
    count = lambda s: sum(1 for t in tensors if t["status"] == s)  # noqa: E731
    return {"digest": sha(cj(p)), "model_id": p["model_id"], "placement_id": p["placement_id"],
            "revision": p["revision"], "tensors": tensors, "tensors_ambiguous": count("ambiguous"),
            "tensors_complete": count("complete"), "tensors_with_gaps": count("gaps")}


def _region_geometry(src, tgt, lo, shape, itemsize):
    """Offsets, run and loops of copying box (lo, shape) between two row-major buffers."""
    ndim = len(shape)

    def strides(extent):
        out, s = [0] * ndim, itemsize
        for k in reversed(range(ndim)):
            out[k], s = s, s * extent[k]
        return out
    ss, ts = strides(src["local_shape"]), strides(tgt["local_shape"])
    s_off = sum((lo[k] - src["global_offset"][k]) * ss[k] for k in range(ndim))
    t_off = sum((lo[k] - tgt["global_offset"][k]) * ts[k] for k in range(ndim))
    first = ndim - 1
    while first > 0 and shape[first] == src["local_shape"][first] == tgt["local_shape"][first]:
        first -= 1
    run = itemsize * prod(shape[first:])
    loops = [[shape[k], ss[k], ts[k]] for k in range(first) if shape[k] > 1]
    merged = True
    while merged:
        merged = False
        for i in range(len(loops) - 1):
            a, b = loops[i], loops[i + 1]
            if a[1] == b[0] * b[1] and a[2] == b[0] * b[2]:
                loops[i:i + 2] = [[a[0] * b[0], b[1], b[2]]]
                merged = True
                break
    return s_off, t_off, run, loops


class PlanError(Exception):
    pass


def reshard_plan(src_doc: dict, tgt_doc: dict, max_regions=None, max_segments=None) -> dict:
    s = placement_from_wire(src_doc)
    t = placement_from_wire(tgt_doc)
    sp, tp = s["_value"], t["_value"]
    if sp["model_id"] != tp["model_id"] or sp["revision"] != tp["revision"]:
        raise PlanError("plan_model_mismatch")
    if [x["tensor_id"] for x in sp["tensors"]] != [x["tensor_id"] for x in tp["tensors"]]:
        raise PlanError("plan_tensor_mismatch")
    for a, b in zip(sp["tensors"], tp["tensors"]):
        for key in ("global_shape", "dtype", "itemsize", "layout_fingerprint", "layer_id", "expert_id"):
            if a[key] != b[key]:
                raise PlanError("plan_tensor_mismatch")
    rank_key = lambda f: (f["rank"]["dp"], f["rank"]["tp"], f["rank"]["pp"], f["rank"]["ep"])  # noqa: E731

    def tiles_of(frags):
        """Distinct boxes (box order) with their holders in rank order."""
        return [((list(o), list(e)), sorted((f for f in frags if tuple(f["global_offset"]) == o
                                              and tuple(f["local_shape"]) == e), key=rank_key))
                for o, e in _distinct(frags)]

    jobs = []
    for desc in sp["tensors"]:
        tid, shape = desc["tensor_id"], desc["global_shape"]
        targets = [f for f in tp["fragments"] if f["tensor_id"] == tid]
        if not targets:
            continue
        mine = [f for f in sp["fragments"] if f["tensor_id"] == tid]
        tiles = tiles_of(mine)
        if _tiling(shape, [b for b, _ in tiles])[0] == "complete":
            covers = {None: tiles}
        else:
            covers = {}
            for d in sorted({f["rank"]["dp"] for f in mine}):
                own = tiles_of([f for f in mine if f["rank"]["dp"] == d])
                if _tiling(shape, [b for b, _ in own])[0] == "complete":
                    covers[d] = own
            if not covers:
                raise PlanError("plan_uncovered_tensor")
        turn = 0
        for tf in targets:
            if None in covers:
                cover = covers[None]
            elif tf["rank"]["dp"] in covers:
                cover = covers[tf["rank"]["dp"]]
            else:
                cover = list(covers.values())[turn % len(covers)]
                turn += 1
            tbox = (tf["global_offset"], tf["local_shape"])
            for box, holders in cover:
                if _intersect(box, tbox):
                    jobs.append((desc, tf, box, holders))
    regions_max = DEFAULT_MAX_REGIONS if max_regions is None else max_regions
    segments_max = DEFAULT_MAX_SEGMENTS if max_segments is None else max_segments
    if len(jobs) > regions_max:
        raise PlanError("plan_limit_exceeded")
    loads, regions, segments = {}, [], 0
    for desc, tf, box, holders in jobs:
        ndim = len(box[0])
        lo = [max(box[0][k], tf["global_offset"][k]) for k in range(ndim)]
        shape = [min(_box_end(box, k), tf["global_offset"][k] + tf["local_shape"][k]) - lo[k] for k in range(ndim)]
        same = [h for h in holders if h["rank"]["dp"] == tf["rank"]["dp"]]
        candidates = same or holders
        chosen = min(candidates, key=lambda h: (loads.get(rank_key(h), 0), rank_key(h)))
        s_off, t_off, run, loops = _region_geometry(chosen, tf, lo, shape, desc["itemsize"])
        nbytes = run * prod(l[0] for l in loops)
        segments += prod(l[0] for l in loops)
        loads[rank_key(chosen)] = loads.get(rank_key(chosen), 0) + nbytes
        regions.append({
            "global_offset": lo,
            "loops": [{"count": c, "source_stride": a, "target_stride": b} for c, a, b in loops],
            "nbytes": nbytes, "run_bytes": run, "shape": shape,
            "source_fragment_id": chosen["placement_fragment_id"], "source_offset": s_off,
            "target_fragment_id": tf["placement_fragment_id"], "target_offset": t_off,
            "tensor_id": desc["tensor_id"],
        })
    if segments > segments_max:
        raise PlanError("plan_limit_exceeded")
    refs = {"source": {"digest": s["digest"], "placement_id": s["placement_id"]},
            "target": {"digest": t["digest"], "placement_id": t["placement_id"]}}
    payload = dict(refs, model_id=sp["model_id"], regions=regions, revision=sp["revision"], schema="weight-plan")
    plan_id = "sha256:" + sha(cj(payload))
    wire = dict(refs, model_id=sp["model_id"], plan_id=plan_id, regions=regions, revision=sp["revision"])
    return {"plan": cj(wire), "plan_id": plan_id}


def even(prefix, tid, shape, axis, parts, nbytes_per_item=2, **rank_of):
    """Fragments of an even split of `shape` on `axis`; rank_of maps a coordinate name to a
    function of the part index (default: tp = part)."""
    step = shape[axis] // parts
    out = []
    for i in range(parts):
        off = [0] * len(shape)
        ext = list(shape)
        off[axis], ext[axis] = i * step, step
        rank = {k: f(i) for k, f in rank_of.items()} if rank_of else {"tp": i}
        out.append(F(f"{prefix}/{i}", tid, off, ext, prod(ext) * nbytes_per_item, **rank))
    return out


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


# ----------------------------------------------------------------------------------------
# Limits (code limit_exceeded, added by this implementation; SECURITY.md "Limits in force",
# src/limits). The oracle below finds the first default limit a request's documents cross,
# in the implementation's order: the document size; then, left to right in the text, a
# container nested deeper than max_depth or a string (member names included) longer than
# max_string_bytes in decoded UTF-8 (an earlier syntax error or duplicate key wins); then
# the parse-layer counts, each right after its member is found to be a sequence.

LIMITS = {"max_document_bytes": 1 << 30, "max_depth": 128, "max_dims": 64,
          "max_tensors": 1 << 22, "max_fragments": 1 << 24, "max_string_bytes": 65536}


def _ptr(segments) -> str:
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


class _Stop(Exception):
    """The reader stops here: a limit (`at` is its pointer) or another reader error (None)."""

    def __init__(self, at=None):
        super().__init__(at)
        self.at = at


_WS = " \t\n\r"
_SCALAR = re.compile(r'-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null')


def _reader_limit(text: str):
    """The pointer of the first reader limit crossed in `text` (None: none, or a reader
    error comes first)."""
    pos = 0

    def ws():
        nonlocal pos
        while pos < len(text) and text[pos] in _WS:
            pos += 1

    def string():
        nonlocal pos
        end = pos + 1
        while True:
            if end >= len(text) or ord(text[end]) < 0x20:
                raise _Stop()
            if text[end] == "\\":
                end += 2
            elif text[end] == '"':
                break
            else:
                end += 1
        try:
            s = json.loads(text[pos:end + 1])
            s.encode("utf-8")  # a lone surrogate escape is invalid_json
        except (ValueError, UnicodeEncodeError):
            raise _Stop()
        pos = end + 1
        return s

    def value(path, depth):
        nonlocal pos
        ws()
        c = text[pos] if pos < len(text) else ""
        if c in "[{":
            if depth >= LIMITS["max_depth"]:
                raise _Stop(_ptr(path))
            pos += 1
            ws()
            if c == "[":
                i = 0
                if text.startswith("]", pos):
                    pos += 1
                    return
                while True:
                    value(path + [i], depth + 1)
                    i += 1
                    ws()
                    if text.startswith(",", pos):
                        pos += 1
                    elif text.startswith("]", pos):
                        pos += 1
                        return
                    else:
                        raise _Stop()
            keys = []
            if text.startswith("}", pos):
                pos += 1
                return
            while True:
                if not text.startswith('"', pos):
                    raise _Stop()
                key = string()
                if len(key.encode("utf-8")) > LIMITS["max_string_bytes"]:
                    raise _Stop(_ptr(path))
                ws()
                if not text.startswith(":", pos):
                    raise _Stop()
                pos += 1
                value(path + [key], depth + 1)
                keys.append(key)
                ws()
                if text.startswith(",", pos):
                    pos += 1
                    ws()
                elif text.startswith("}", pos):
                    pos += 1
                    if len(set(keys)) != len(keys):
                        raise _Stop()  # duplicate_key
                    return
                else:
                    raise _Stop()
        elif c == '"':
            s = string()
            if len(s.encode("utf-8")) > LIMITS["max_string_bytes"]:
                raise _Stop(_ptr(path))
        else:
            m = _SCALAR.match(text, pos)
            if not m:
                raise _Stop()
            pos = m.end()

    try:
        value([], 0)
    except _Stop as stop:
        return stop.at
    return None


def _count_limit(doc, op: str):
    """The pointer of the first parse-layer limit crossed in a read document of `op`'s
    kind, for documents whose members have the contract's types."""
    def too_many(items, key):
        return isinstance(items, list) and len(items) > LIMITS[key]

    def dims(shape):
        return isinstance(shape, list) and len(shape) > LIMITS["max_dims"]

    if not isinstance(doc, dict):
        return None
    if op in ("placement", "runtime"):
        tensors = doc.get("tensors")
        if too_many(tensors, "max_tensors"):
            return "/tensors"
        for i, t in enumerate(tensors if isinstance(tensors, list) else []):
            if isinstance(t, dict) and dims(t.get("global_shape")):
                return f"/tensors/{i}/global_shape"
        return "/fragments" if too_many(doc.get("fragments"), "max_fragments") else None
    if op == "binding":
        return "/fragments" if too_many(doc.get("fragments"), "max_fragments") else None
    # the runtime and placement inventories: records, then per record dims and tensor_ids
    records = doc.get("tensors")
    if too_many(records, "max_fragments"):
        return "/tensors"
    seen = set()
    for i, r in enumerate(records if isinstance(records, list) else []):
        if isinstance(r, dict) and dims(r.get("global_shape")):
            return f"/tensors/{i}/global_shape"
        if isinstance(r, dict):
            seen.add(r.get("tensor_id"))
            if len(seen) > LIMITS["max_tensors"]:
                return f"/tensors/{i}"
    return None


def _document_limit(text: str, kind: str):
    """The pointer of the first limit a document of `kind` crosses, else None."""
    if len(text.encode("utf-8")) > LIMITS["max_document_bytes"]:
        return ""
    at = _reader_limit(text)
    if at is not None:
        return at
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return _count_limit(doc, kind)


# The documents of each op, in the order they are read, with their kind.
_OP_DOCUMENTS = {
    "placement.parse": [("document", "placement")], "coverage": [("document", "placement")],
    "plan": [("source", "placement"), ("target", "placement")],
    "placement.from_inventory": [("document", "inventory")],
    "runtime.from_inventory": [("document", "inventory")],
    "project.placement": [("document", "inventory")], "project.binding": [("document", "inventory")],
    "bind": [("placement", "placement"), ("binding", "binding")],
    "runtime.parse": [("document", "runtime")], "binding.parse": [("document", "binding")],
    "binding.from_inventory": [("document", "binding")],
}


def limit_violation(op: str, inp: dict):
    """The pointer of the first limit a request crosses (None: within every limit)."""
    for member, kind in _OP_DOCUMENTS[op]:
        if member in inp:
            at = _document_limit(inp[member], kind)
            if at is not None:
                return at
    return None

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


# ----------------------------------------------------------------------------------------
# Coverage, schema check, writing

GROUPS = ("placement", "placement_inventory", "runtime_inventory", "binding_inventory", "project",
          "bind", "runtime", "binding", "reader", "reference", "coverage", "plan")


def contract_table() -> list[str]:
    """Every code of the §18 table of docs/contract.md, the contract's and then this
    implementation's (after "### Codes added by this implementation")."""
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    table = text[text.index("## 18. Error codes"):]
    return re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.M)


def api_only_codes() -> dict[str, str]:
    """The codes no conformance operation can raise, with the reason."""
    return {c["code"]: c["api_only"] for c in codes_file() if "api_only" in c}


OPS = {"placement.parse", "placement.from_inventory", "runtime.from_inventory", "binding.from_inventory",
       "project.placement", "project.binding", "bind", "runtime.parse", "binding.parse", "coverage", "plan"}
INPUT_KEYS = {"document", "placement", "binding", "address_semantics", "placement_id", "source", "target",
              "require_complete", "max_regions", "max_segments"}
EXPECT_KEYS = {"ok", "code", "path", "canonical", "placement_id", "digest", "runtime", "binding", "generation",
               "report", "plan", "plan_id"}


def check_fixture(cid: str, fx: dict) -> None:
    """A hand-written check of schema/conformance-fixture.schema.json."""
    def need(cond, what):
        if not cond:
            sys.exit(f"generate.py: {cid}: not valid against the fixture schema: {what}")
    need(set(fx) <= {"description", "op", "input", "expect", "tags"}, "top-level keys")
    need({"description", "op", "input", "expect"} <= set(fx), "required keys")
    need(isinstance(fx["description"], str), "description")
    need(fx["op"] in OPS, "op")
    need(set(fx["input"]) <= INPUT_KEYS, "input keys")
    for k, v in fx["input"].items():
        if k == "require_complete":
            need(v is None or isinstance(v, bool), f"input.{k}")
        elif k in ("max_regions", "max_segments"):
            need(v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64), f"input.{k}")
        else:
            need(isinstance(v, str) or (v is None and k in ("address_semantics", "placement_id")), f"input.{k}")
    if fx["op"] == "bind":
        need("placement" in fx["input"] and "binding" in fx["input"], "op inputs")
    elif fx["op"] == "plan":
        need("source" in fx["input"] and "target" in fx["input"], "op inputs")
    else:
        need("document" in fx["input"], "op inputs")
    e = fx["expect"]
    need(set(e) <= EXPECT_KEYS and isinstance(e.get("ok"), bool), "expect keys")
    if e["ok"]:
        need("code" not in e and "path" not in e, "ok forbids code/path")
    else:
        need(isinstance(e.get("code"), str) and re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", e["code"]), "code")
    for k in ("path", "canonical", "placement_id", "digest", "runtime", "binding", "report", "plan", "plan_id"):
        need(k not in e or isinstance(e[k], str), k)
    need("generation" not in e or e["generation"] is None or (isinstance(e["generation"], int) and 0 <= e["generation"] <= U64), "generation")
    need("tags" not in fx or all(isinstance(t, str) for t in fx["tags"]), "tags")


def build() -> dict[str, str]:
    """All output files (path relative to tests/conformance -> text)."""
    check_oracle_against_reference()
    CASES.clear()
    for group in GROUPS:
        globals()["cases_" + group]()
    cases_limits()
    files = {}
    coverage: dict[str, list[str]] = {}
    ops_seen: dict[str, set] = {op: set() for op in OPS}
    for cid, fx in sorted(CASES.items()):
        assert cid.split("/")[0] in GROUPS, cid
        check_fixture(cid, fx)
        ops_seen[fx["op"]].add(fx["expect"]["ok"])
        if not fx["expect"]["ok"]:
            coverage.setdefault(fx["expect"]["code"], []).append(cid)
        files[cid + ".json"] = json.dumps(fx, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    for op, seen in ops_seen.items():
        assert seen == {True, False}, f"op {op} lacks accepting or rejecting cases"
    listed, api_only = codes_file(), api_only_codes()
    codes = [c["code"] for c in listed if c["origin"] == "contract"]
    assert len(codes) == 57, f"expected the 57 codes of §18, found {len(codes)}"
    assert contract_table() == [c["code"] for c in listed], "docs/contract.md §18 rows are not schema/codes.json's codes in order"
    raised_by = {c["code"]: set(c["raised_by"]) for c in listed}
    for cid, fx in ((cid, fx) for cid, fx in CASES.items() if not fx["expect"]["ok"]):
        code = fx["expect"]["code"]
        assert code in raised_by, f"{cid}: {code} is not a code of schema/codes.json"
        assert fx["op"] in raised_by[code], f"{cid}: schema/codes.json does not list {fx['op']} as raising {code}"
    codes = codes + ADDED_CODES
    for code in coverage:
        assert code in codes, f"fixture code {code} is not in contract §18 nor added by this implementation"
    for code in codes:
        if code in api_only:
            assert code not in coverage, f"{code} is listed as API-only but a fixture expects it"
        else:
            assert len(coverage.get(code, [])) >= 2, f"code {code} has fewer than two fixtures: {coverage.get(code)}"
    cov = {"api_only": api_only, "codes": {c: coverage.get(c, []) for c in codes}}
    files["coverage.json"] = json.dumps(cov, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return files


def existing_files() -> set[str]:
    out = {"coverage.json"} if (HERE / "coverage.json").exists() else set()
    for group in GROUPS:
        d = HERE / group
        if d.is_dir():
            out |= {f"{group}/{p.name}" for p in d.iterdir() if p.suffix == ".json"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the checked-in files differ from what would be generated")
    args = ap.parse_args()
    files = build()
    have = existing_files()
    if args.check:
        bad_files = sorted(p for p in files if not (HERE / p).exists() or (HERE / p).read_text(encoding="utf-8") != files[p])
        extra = sorted(have - set(files))
        for p in bad_files:
            print(f"differs or missing: tests/conformance/{p}")
        for p in extra:
            print(f"extra: tests/conformance/{p}")
        if bad_files or extra:
            print("run: python3 tests/conformance/generate.py")
            return 1
        print(f"{len(files) - 1} fixtures up to date")
        return 0
    for p in sorted(have - set(files)):
        (HERE / p).unlink()
    for p, text in files.items():
        path = HERE / p
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    counts = {}
    for p in files:
        if "/" in p:
            counts[p.split("/")[0]] = counts.get(p.split("/")[0], 0) + 1
    print(", ".join(f"{g}: {counts.get(g, 0)}" for g in GROUPS) + f"; total {len(files) - 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
