"""What every case module shares: rendering documents (Raw, Pairs, m, dup, splice), the
case registry (ok, bad), and the building blocks of documents (T, F, PL, REC, RINV and the
base documents). The case modules import all of it with `from cases.common import *`."""

from __future__ import annotations

import copy
import json
import re

from oracle.analysis import ADDED_CODES, PlanError, coverage_report, reshard_plan  # noqa: F401
from oracle.core import (ROOT, U64, cj, loads, logical_id, placement_from_wire, prod,  # noqa: F401
                         runtime_fragment, sha)
from oracle.limits import limit_violation
from oracle.locate import EXEMPT, LOCATED, locate
from oracle.ops import oracle  # noqa: F401
from oracle.plan_bind import PlanBindError, plan_id_of  # noqa: F401
from oracle.quantize import quantized_plan  # noqa: F401
from oracle.reference import MODELS, WORKED, ref_json, ref_text  # noqa: F401

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
            max_segments=DEL, plan=None, source_binding=None, target_binding=None,
            source_generation=DEL, target_generation=DEL, quantization=None) -> dict:
    inp = {}
    if quantization is not None:
        inp["quantization"] = _doc(quantization)
    for key, text in (("plan", plan), ("source_binding", source_binding),
                      ("target_binding", target_binding)):
        if text is not None:
            inp[key] = _doc(text)
    for key, value in (("source_generation", source_generation),
                       ("target_generation", target_generation)):
        if value is not DEL:
            inp[key] = value
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


def plan_bind_oracle(op: str, inp: dict) -> dict:
    """The oracle's answer to a plan.bind request (raises PlanBindError)."""
    assert op == "plan.bind"
    return oracle(op, inp)


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
        if op == "plan.bind":
            try:
                plan_bind_oracle(op, inp)
                raise AssertionError(f"{cid}: the oracle accepts")
            except PlanBindError as e:
                assert str(e) == code, f"{cid}: the oracle rejects with {e}"
        elif op == "plan" and "quantization" in inp:
            try:
                quantized_plan(loads(inp["source"]), loads(inp["target"]), inp["quantization"],
                               inp.get("max_regions"), inp.get("max_segments"))
                raise AssertionError(f"{cid}: the oracle accepts")
            except PlanError as e:
                assert str(e) == code, f"{cid}: the oracle rejects with {e}"
                at = getattr(e, "path", None)
                assert path is None or path == at, f"{cid}: the oracle locates it at {at}"
                path = at
        elif op == "plan":
            try:
                reshard_plan(loads(inp["source"]), loads(inp["target"]), inp.get("max_regions"), inp.get("max_segments"))
                raise AssertionError(f"{cid}: the oracle accepts")
            except PlanError as e:
                assert str(e) == code, f"{cid}: the oracle rejects with {e}"
        else:
            report = coverage_report(loads(inp["document"]))
            assert report["tensors_complete"] < len(report["tensors"]), f"{cid}: the oracle finds it complete"
    inp = _inputs(**inputs)
    if "document" in inp and code in LOCATED:  # the location oracle gives the pointer
        at = locate(op, inp, code)
        assert path is None or path == at, f"{cid}: the location oracle says {at}, the case {path}"
        path = at
    if "document" in inp and path is not None and readable(inp["document"]):
        path = element_of(json.loads(inp["document"]), path, code)
    if "document" in inp and code not in EXEMPT:
        # A projection's placement_id argument is not part of the document.
        argument = op.startswith("project.") and inp.get("placement_id") is not None \
            and code in ("placement_id_mismatch", "empty_string", "wrong_type")
        assert path is not None or argument, f"{cid}: a rejection of a document needs the pointer it carries"
        if path is not None and readable(inp["document"]):
            assert resolves(inp["document"], path), f"{cid}: {path} is not a value of the document"
    exp = {"ok": False, "code": code}
    if path is not None:
        exp["path"] = path
    _add(cid, op, description, inp, exp, tags)


# The value checks of one list element (§1.4 INTS, ALIASES): an element that fails is
# located at itself, `/tensors/0/global_shape/1`.
ELEMENT_CODES = {"not_an_integer", "below_minimum", "u64_overflow", "aliases_invalid", "aliases_duplicate"}
MIN_ELEMENT = {"global_shape": 1, "local_shape": 1}


def element_of(doc, path: str, code: str) -> str:
    """The pointer of the failing element when `path` names a list checked element by
    element: the first element that is not an integer in [min, 2^64-1] (min 1 for shapes,
    else 0), not a non-empty string (aliases), or repeats an earlier one (aliases)."""
    if code not in ELEMENT_CODES:
        return path
    value = doc
    for part in path.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value.get(part) if isinstance(value, dict) else None
    if not isinstance(value, list):
        return path
    member = path.rsplit("/", 1)[-1]
    for i, item in enumerate(value):
        if code == "aliases_invalid":
            bad = not (isinstance(item, str) and item)
        elif code == "aliases_duplicate":
            bad = item in value[:i]
        else:
            bad = not (isinstance(item, int) and not isinstance(item, bool)
                       and MIN_ELEMENT.get(member, 0) <= item <= U64)
        if bad:
            return f"{path}/{i}"
    return path


def readable(text: str) -> bool:
    """Whether Python reads the text as JSON (a text cut short after the error is not)."""
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def resolves(text: str, pointer: str) -> bool:
    """Whether `pointer` names a value of the JSON `text` (a text Python cannot read, or
    with a key repeated, is checked as Python reads it: the last of the repeated keys)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False
    return True


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
