"""The oracle of the analysis operations added by this implementation: the coverage
report (contract §17.2) and the reshard planner (§17.3), by direct enumeration over
small inputs."""

from __future__ import annotations

from oracle.core import cj, codes_file, placement_from_wire, prod, sha

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
