"""The oracle of planning with a quantization spec (contract §17.8), written from the
contract's text: the spec's reading rules, the rules against the two placements in their
order, and the regions by direct enumeration: every target tensor in tensor_id order, a
scale tensor reading the source boxes of its tensor divided into 128x128 blocks."""

from __future__ import annotations

import json

from oracle.analysis import (DEFAULT_MAX_REGIONS, DEFAULT_MAX_SEGMENTS, PlanError, _box_end, _distinct,
                             _intersect, _region_geometry, _tiling)
from oracle.core import cj, placement_from_wire, prod, sha

BLOCK = 128
U64 = (1 << 64) - 1


class QuantizeError(PlanError):
    """A rejection: str() is the code, `path` the pointer into the spec (or None)."""

    def __init__(self, code: str, path: str | None = None):
        super().__init__(code)
        self.path = path


def read_spec(text: str) -> list[tuple[str, str]]:
    """The (tensor_id, scale_tensor_id) entries of a spec, or the rejection."""
    doc = json.loads(text)
    invalid = QuantizeError("quantization_document_invalid")
    if not isinstance(doc, dict) or set(doc) != {"block_size", "fmt", "quant_method", "tensors"}:
        raise invalid
    size = doc["block_size"]
    if not isinstance(size, list) or not all(type(x) is int and 0 <= x <= U64 for x in size):
        raise invalid
    if doc["fmt"] != "e4m3" or doc["quant_method"] != "fp8" or not isinstance(doc["tensors"], list):
        raise invalid
    entries = []
    for e in doc["tensors"]:
        if not isinstance(e, dict) or set(e) != {"scale_tensor_id", "tensor_id"} \
                or not all(isinstance(v, str) for v in e.values()):
            raise invalid
        entries.append((e["tensor_id"], e["scale_tensor_id"]))
    if size != [BLOCK, BLOCK]:
        raise QuantizeError("quantization_unsupported", "/block_size")
    seen = set()
    for i, (tid, sid) in enumerate(entries):
        for member, name in (("tensor_id", tid), ("scale_tensor_id", sid)):
            if name in seen:
                raise QuantizeError("quantization_document_invalid", f"/tensors/{i}/{member}")
            seen.add(name)
    return entries


def _whole_blocks(frag, shape) -> bool:
    """Each of the last two axes starts at a multiple of 128 and ends at one or at the extent."""
    for k in (len(shape) - 2, len(shape) - 1):
        lo, end = frag["global_offset"][k], frag["global_offset"][k] + frag["local_shape"][k]
        if lo % BLOCK or (end % BLOCK and end != shape[k]):
            return False
    return True


def _ceil_blocks(n: int) -> int:
    return -(-n // BLOCK)


def _as_scales(frag):
    """A source fragment as the box of its scale blocks (the same id and rank)."""
    out = dict(frag, global_offset=list(frag["global_offset"]), local_shape=list(frag["local_shape"]))
    for k in (len(frag["local_shape"]) - 2, len(frag["local_shape"]) - 1):
        lo, end = frag["global_offset"][k], frag["global_offset"][k] + frag["local_shape"][k]
        out["global_offset"][k] = lo // BLOCK
        out["local_shape"][k] = _ceil_blocks(end) - lo // BLOCK
    return out


def _rules(sp, tp, entries) -> dict:
    """§17.8's rules in order; by target tensor_id: (transform, the quantized tensor_id)."""
    src = {t["tensor_id"]: t for t in sp["tensors"]}
    tgt = {t["tensor_id"]: t for t in tp["tensors"]}
    roles = {}
    for i, (tid, sid) in enumerate(entries):
        at = f"/tensors/{i}/"
        if tid not in src or tid not in tgt:
            raise QuantizeError("quantization_tensor_missing", at + "tensor_id")
        a, b = src[tid], tgt[tid]
        if (a["dtype"], a["itemsize"], b["dtype"], b["itemsize"]) != ("bfloat16", 2, "float8_e4m3fn", 1) \
                or len(b["global_shape"]) < 2:
            raise QuantizeError("quantization_unsupported", at + "tensor_id")
        if sid not in tgt:
            raise QuantizeError("quantization_scale_missing", at + "scale_tensor_id")
        s, shape = tgt[sid], b["global_shape"]
        want = shape[:-2] + [_ceil_blocks(shape[-2]), _ceil_blocks(shape[-1])]
        if s["dtype"] != "float32" or s["itemsize"] != 4 or s["global_shape"] != want \
                or s["layer_id"] != b["layer_id"] or s["expert_id"] != b["expert_id"] or sid in src:
            raise QuantizeError("quantization_scale_invalid", at + "scale_tensor_id")
        for side in (tp, sp):
            if not all(_whole_blocks(f, shape) for f in side["fragments"] if f["tensor_id"] == tid):
                raise QuantizeError("quantization_block_cut", at + "tensor_id")
        roles[tid] = ("fp8_e4m3_block_values", tid)
        roles[sid] = ("fp8_e4m3_block_scales", tid)
    return roles


def _compatible(sp, tp, roles) -> None:
    """§17.3 step 2 with a quantization: scale tensors are the target's alone; a quantized
    tensor's dtype, itemsize and layout_fingerprint are not compared."""
    tgt = [t for t in tp["tensors"] if roles.get(t["tensor_id"], ("",))[0] != "fp8_e4m3_block_scales"]
    if [x["tensor_id"] for x in sp["tensors"]] != [x["tensor_id"] for x in tgt]:
        raise PlanError("plan_tensor_mismatch")
    for a, b in zip(sp["tensors"], tgt):
        keys = ("global_shape", "layer_id", "expert_id") if a["tensor_id"] in roles else \
            ("global_shape", "dtype", "itemsize", "layout_fingerprint", "layer_id", "expert_id")
        if any(a[k] != b[k] for k in keys):
            raise PlanError("plan_tensor_mismatch")


def quantized_plan(src_doc: dict, tgt_doc: dict, spec_text: str, max_regions=None, max_segments=None) -> dict:
    s, t = placement_from_wire(src_doc), placement_from_wire(tgt_doc)
    sp, tp = s["_value"], t["_value"]
    entries = read_spec(spec_text)
    if sp["model_id"] != tp["model_id"] or sp["revision"] != tp["revision"]:
        raise PlanError("plan_model_mismatch")
    roles = _rules(sp, tp, entries)
    _compatible(sp, tp, roles)
    rank_key = lambda f: (f["rank"]["dp"], f["rank"]["tp"], f["rank"]["pp"], f["rank"]["ep"])  # noqa: E731

    def tiles_of(frags):
        return [((list(o), list(e)), sorted((f for f in frags if tuple(f["global_offset"]) == o
                                              and tuple(f["local_shape"]) == e), key=rank_key))
                for o, e in _distinct(frags)]

    jobs = []
    for desc in tp["tensors"]:
        tid, shape = desc["tensor_id"], desc["global_shape"]
        targets = [f for f in tp["fragments"] if f["tensor_id"] == tid]
        if not targets:
            continue
        transform, of = roles.get(tid, (None, tid))
        mine = [f for f in sp["fragments"] if f["tensor_id"] == of]
        if transform == "fp8_e4m3_block_scales":
            mine = [_as_scales(f) for f in mine]
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
                    jobs.append((desc, transform, tf, box, holders))
    if len(jobs) > (DEFAULT_MAX_REGIONS if max_regions is None else max_regions):
        raise PlanError("plan_limit_exceeded")
    loads, regions, segments = {}, [], 0
    for desc, transform, tf, box, holders in jobs:
        ndim = len(box[0])
        lo = [max(box[0][k], tf["global_offset"][k]) for k in range(ndim)]
        shape = [min(_box_end(box, k), tf["global_offset"][k] + tf["local_shape"][k]) - lo[k] for k in range(ndim)]
        same = [h for h in holders if h["rank"]["dp"] == tf["rank"]["dp"]]
        chosen = min(same or holders, key=lambda h: (loads.get(rank_key(h), 0), rank_key(h)))
        s_off, t_off, run, loops = _region_geometry(chosen, tf, lo, shape, desc["itemsize"])
        nbytes = run * prod(l[0] for l in loops)
        segments += prod(l[0] for l in loops)
        loads[rank_key(chosen)] = loads.get(rank_key(chosen), 0) + nbytes
        region = {
            "global_offset": lo,
            "loops": [{"count": c, "source_stride": a, "target_stride": b} for c, a, b in loops],
            "nbytes": nbytes, "run_bytes": run, "shape": shape,
            "source_fragment_id": chosen["placement_fragment_id"], "source_offset": s_off,
            "target_fragment_id": tf["placement_fragment_id"], "target_offset": t_off,
            "tensor_id": desc["tensor_id"],
        }
        if transform is not None:
            region["transform"] = transform
        regions.append(region)
    if segments > (DEFAULT_MAX_SEGMENTS if max_segments is None else max_segments):
        raise PlanError("plan_limit_exceeded")
    refs = {"source": {"digest": s["digest"], "placement_id": s["placement_id"]},
            "target": {"digest": t["digest"], "placement_id": t["placement_id"]}}
    payload = dict(refs, model_id=sp["model_id"], regions=regions, revision=sp["revision"], schema="weight-plan")
    plan_id = "sha256:" + sha(cj(payload))
    wire = dict(refs, model_id=sp["model_id"], plan_id=plan_id, regions=regions, revision=sp["revision"])
    return {"plan": cj(wire), "plan_id": plan_id}
