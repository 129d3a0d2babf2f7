"""Placement cases: accepted texts in every order, and mutations reaching every rule of
upstream's reader, of its parts, of the whole placement and of its coverage."""

from __future__ import annotations

import copy
import json

from mooncake.reshard import weight as mw

from .common import add, dumps, mutate


def cases_accepted(placements):
    for name, p in placements:
        text = mw.weight_placement_to_json(p)
        add(f"ok/{name}", text, generated_ids=True)
        if len(text) > 12000:
            continue  # the variants of the small bases exercise the same writer
        d = json.loads(text)
        # Not canonical, same placement: upstream writes it back canonically.
        shuffled = copy.deepcopy(d)
        shuffled["tensors"].reverse()
        shuffled["parts"].reverse()
        shuffled["topology"]["participants"].reverse()
        for part in shuffled["parts"]:
            part["fragments"].reverse()
            for f in part["fragments"]:
                f["aliases"].reverse()
        for t in shuffled["tensors"]:
            t["parallel_axes"].reverse()
        add(f"ok/{name}/reordered", dumps(shuffled, indent=1, ensure_ascii=False), generated_ids=True)
        add(f"ok/{name}/unsorted-keys", dumps(d, sort_keys=False, separators=(", ", ": ")), generated_ids=True)


def first_fragment(d, part=0):
    return d["parts"][part]["fragments"][0]


def cases_reader(base):
    text = mw.weight_placement_to_json(base)
    add("reject/reader/truncated", text[:-1], code="invalid_json")
    add("reject/reader/not-json", "placement", code="invalid_json")
    add("reject/reader/duplicate-top-key", '{"revision":"a",' + text[1:], code="duplicate_key")
    add("reject/reader/duplicate-rank-key", text.replace('"rank":{"dp":0', '"rank":{"dp":0,"dp":0', 1), code="duplicate_key")
    add("reject/reader/nan", text.replace('"weight_generation":3', '"weight_generation":NaN'), code="non_finite_number")
    add("reject/reader/infinity", text.replace('"nbytes":', '"nbytes":Infinity,"x":', 1), code="non_finite_number")
    add("reject/reader/array-top", "[]", code="not_an_object", pointer="")
    add("reject/reader/string-top", '"x"', code="not_an_object", pointer="")




def cases_rejected(placements, name):
    base = dict(placements)[name]
    d0 = json.loads(mw.weight_placement_to_json(base))
    m = lambda cid, fn, **kw: mutate(f"reject/{name}/{cid}", d0, fn, **kw)  # noqa: E731
    if name == "tp2":
        cases_reader(base)
    ntensors = len(d0["tensors"])


    m("missing-revision", lambda d: d.pop("revision"), code="fields_mismatch", pointer="")
    m("extra-key", lambda d: d.update(model_id="m"), code="fields_mismatch", pointer="")
    m("kind-other", lambda d: d.update(resource_kind="kv_cache"), code="mooncake_resource_kind", pointer="/resource_kind")
    m("kind-case", lambda d: d.update(resource_kind="MODEL_WEIGHT"), code="mooncake_resource_kind", pointer="/resource_kind")
    m("kind-empty", lambda d: d.update(resource_kind=""), code="empty_string", pointer="/resource_kind")
    for k in ("resource_id", "revision", "placement_set_id", "placement_id"):
        m(f"{k}-empty", lambda d, k=k: d.update({k: ""}), code="empty_string", pointer=f"/{k}")
        m(f"{k}-number", lambda d, k=k: d.update({k: 7}), code="empty_string", pointer=f"/{k}")
    m("generation-negative", lambda d: d.update(weight_generation=-1), code="below_minimum", pointer="/weight_generation")
    m("generation-string", lambda d: d.update(weight_generation="3"), code="not_an_integer", pointer="/weight_generation")
    m("generation-float", lambda d: d.update(weight_generation=3.0), code="not_an_integer", pointer="/weight_generation")
    m("generation-bool", lambda d: d.update(weight_generation=True), code="not_an_integer", pointer="/weight_generation")
    m("placement-id-other", lambda d: d.update(placement_id="sha256:" + "0" * 64), code="placement_id_mismatch", pointer="/placement_id")
    m("placement-id-changed-revision", lambda d: d.update(revision="r2"), code="placement_id_mismatch", pointer="/placement_id")
    m("placement-id-changed-set", lambda d: d.update(placement_set_id="other"), code="placement_id_mismatch", pointer="/placement_id")
    m("tensors-object", lambda d: d.update(tensors={}), code="not_a_sequence", pointer="/tensors")
    m("parts-string", lambda d: d.update(parts="x"), code="not_a_sequence", pointer="/parts")

    # The topology.
    T = "/topology"
    m("topology-list", lambda d: d.update(topology=[]), code="not_an_object", pointer=T)
    m("topology-extra", lambda d: d["topology"].update(world_size=2), code="fields_mismatch", pointer=T)
    m("topology-size-zero", lambda d: d["topology"].update(tp_size=0), code="below_minimum", pointer=f"{T}/tp_size")
    m("topology-dp-zero", lambda d: d["topology"].update(dp_size=0), code="below_minimum", pointer=f"{T}/dp_size")
    m("topology-size-string", lambda d: d["topology"].update(pp_size="1"), code="not_an_integer", pointer=f"{T}/pp_size")
    m("topology-id-other", lambda d: d["topology"].update(topology_id="sha256:" + "1" * 64), code="mooncake_topology_id_mismatch", pointer=f"{T}/topology_id")
    m("topology-id-stale", lambda d: d["topology"].update(tp_size=4), code="mooncake_topology_id_mismatch", pointer=f"{T}/topology_id")
    m("topology-id-empty", lambda d: d["topology"].update(topology_id=""), code="empty_string", pointer=f"{T}/topology_id")
    m("topology-empty", lambda d: d["topology"].update(participants=[]), code="mooncake_topology_invalid", pointer=f"{T}/participants")
    m("topology-dup-name", lambda d: d["topology"]["participants"][1].update(participant_id=d["topology"]["participants"][0]["participant_id"]), code="mooncake_topology_invalid", pointer=f"{T}/participants/1")
    m("topology-dup-rank", lambda d: d["topology"]["participants"][1].update(rank=dict(d["topology"]["participants"][0]["rank"])), code="mooncake_topology_invalid", pointer=f"{T}/participants/1")
    m("topology-rank-range-tp", lambda d: d["topology"]["participants"][1]["rank"].update(tp=2), code="mooncake_topology_invalid", pointer=f"{T}/participants/1/rank/tp")
    m("topology-rank-range-ep", lambda d: d["topology"]["participants"][0]["rank"].update(ep=1), code="mooncake_topology_invalid", pointer=f"{T}/participants/0/rank/ep")
    m("topology-rank-extra", lambda d: d["topology"]["participants"][0]["rank"].update(cp=0), code="fields_mismatch", pointer=f"{T}/participants/0/rank")
    m("topology-rank-negative", lambda d: d["topology"]["participants"][0]["rank"].update(dp=-1), code="below_minimum", pointer=f"{T}/participants/0/rank/dp")
    m("topology-participant-extra", lambda d: d["topology"]["participants"][0].update(host="h"), code="fields_mismatch", pointer=f"{T}/participants/0")
    m("topology-participant-empty-name", lambda d: d["topology"]["participants"][0].update(participant_id=""), code="empty_string", pointer=f"{T}/participants/0/participant_id")
    m("topology-participants-object", lambda d: d["topology"].update(participants={}), code="not_a_sequence", pointer=f"{T}/participants")

    # Tensor descriptors and axes (tensor 0 is "w.norm", replicated on tp; 1 is "w.q", split).
    t = lambda i: f"/tensors/{i}"  # noqa: E731
    m("tensor-extra", lambda d: d["tensors"][0].update(partition_dim=None), code="fields_mismatch", pointer=t(0))
    m("tensor-not-object", lambda d: d["tensors"].__setitem__(0, 1), code="not_an_object", pointer=t(0))
    m("tensor-empty-id", lambda d: d["tensors"][0].update(tensor_id=""), code="empty_string", pointer=f"{t(0)}/tensor_id")
    m("tensor-empty-dtype", lambda d: d["tensors"][1].update(dtype=""), code="empty_string", pointer=f"{t(1)}/dtype")
    m("tensor-empty-layout", lambda d: d["tensors"][1].update(layout_fingerprint=""), code="empty_string", pointer=f"{t(1)}/layout_fingerprint")
    m("tensor-empty-shape", lambda d: d["tensors"][0].update(global_shape=[]), code="empty_shape", pointer=f"{t(0)}/global_shape")
    m("tensor-zero-extent", lambda d: d["tensors"][0].update(global_shape=[0]), code="below_minimum", pointer=f"{t(0)}/global_shape/0")
    m("tensor-shape-string", lambda d: d["tensors"][0].update(global_shape="4"), code="not_a_sequence", pointer=f"{t(0)}/global_shape")
    m("tensor-itemsize-zero", lambda d: d["tensors"][0].update(itemsize=0), code="below_minimum", pointer=f"{t(0)}/itemsize")
    m("tensor-itemsize-float", lambda d: d["tensors"][0].update(itemsize=4.0), code="not_an_integer", pointer=f"{t(0)}/itemsize")
    m("tensor-layer-negative", lambda d: d["tensors"][0].update(layer_id=-2), code="below_minimum", pointer=f"{t(0)}/layer_id")
    m("tensor-expert-string", lambda d: d["tensors"][0].update(expert_id="1"), code="not_an_integer", pointer=f"{t(0)}/expert_id")
    m("tensor-shard-dup", lambda d: d["tensors"][1].update(shard_dims=[0, 0]), code="shard_dims_duplicate", pointer=f"{t(1)}/shard_dims")
    m("tensor-shard-unsorted", lambda d: (d["tensors"][1].update(global_shape=[8, 4, 2], shard_dims=[1, 0])), code="shard_dims_unsorted", pointer=f"{t(1)}/shard_dims")
    m("tensor-shard-range", lambda d: d["tensors"][1].update(shard_dims=[2]), code="shard_dims_out_of_range", pointer=f"{t(1)}/shard_dims")
    m("tensor-shard-negative", lambda d: d["tensors"][1].update(shard_dims=[-1]), code="below_minimum", pointer=f"{t(1)}/shard_dims/0")
    m("tensor-shard-conflict", lambda d: d["tensors"][1].update(shard_dims=[1]), code="mooncake_axis_invalid", pointer=f"{t(1)}/parallel_axes")
    m("tensor-shard-missing", lambda d: d["tensors"][1].update(shard_dims=[]), code="mooncake_axis_invalid", pointer=f"{t(1)}/parallel_axes")
    m("tensor-duplicate", lambda d: d["tensors"].append(copy.deepcopy(d["tensors"][0])), code="duplicate_tensor_id", pointer=t(ntensors))
    ax = lambda i, j: f"{t(i)}/parallel_axes/{j}"  # noqa: E731
    m("axis-not-object", lambda d: d["tensors"][0]["parallel_axes"].__setitem__(0, "tp"), code="not_an_object", pointer=ax(0, 0))
    m("axis-no-semantics", lambda d: d["tensors"][0]["parallel_axes"][0].pop("semantics"), code="empty_string", pointer=ax(0, 0))
    m("axis-semantics-number", lambda d: d["tensors"][0]["parallel_axes"][0].update(semantics=1), code="empty_string", pointer=f"{ax(0, 0)}/semantics")
    m("axis-semantics-unknown", lambda d: d["tensors"][0]["parallel_axes"][0].update(semantics="sharded"), code="mooncake_axis_invalid", pointer=f"{ax(0, 0)}/semantics")
    m("axis-kind-unknown", lambda d: d["tensors"][0]["parallel_axes"][0].update(kind="cp"), code="mooncake_axis_invalid", pointer=f"{ax(0, 0)}/kind")
    m("axis-kind-empty", lambda d: d["tensors"][0]["parallel_axes"][0].update(kind=""), code="empty_string", pointer=f"{ax(0, 0)}/kind")
    m("axis-replicated-dim", lambda d: d["tensors"][0]["parallel_axes"][0].update(dim=0), code="fields_mismatch", pointer=ax(0, 0))
    m("axis-split-no-dim", lambda d: d["tensors"][1]["parallel_axes"][0].pop("dim"), code="fields_mismatch", pointer=ax(1, 0))
    m("axis-split-dp", lambda d: d["tensors"][1]["parallel_axes"][0].update(kind="dp"), code="mooncake_axis_invalid", pointer=f"{ax(1, 0)}/kind")
    m("axis-split-pp", lambda d: d["tensors"][1]["parallel_axes"][0].update(kind="pp"), code="mooncake_axis_invalid", pointer=f"{ax(1, 0)}/kind")
    m("axis-ep-dim1", lambda d: d["tensors"][1]["parallel_axes"][0].update(kind="ep", dim=1), code="mooncake_axis_invalid", pointer=f"{ax(1, 0)}/dim")
    m("axis-dim-negative", lambda d: d["tensors"][1]["parallel_axes"][0].update(dim=-1), code="below_minimum", pointer=f"{ax(1, 0)}/dim")
    m("axis-dup-kind", lambda d: d["tensors"][0]["parallel_axes"].append({"semantics": "ownership", "kind": "tp"}), code="mooncake_axis_invalid", pointer=f"{t(0)}/parallel_axes")
    m("axis-two-splits-one-dim", lambda d: (d["tensors"][1]["parallel_axes"].append({"semantics": "split", "kind": "ep", "dim": 0})), code="mooncake_axis_invalid", pointer=f"{t(1)}/parallel_axes")
    m("axis-split-dim-range", lambda d: (d["tensors"][1]["parallel_axes"][0].update(dim=5), d["tensors"][1].update(shard_dims=[])), code="mooncake_axis_invalid", pointer=f"{t(1)}/parallel_axes")
    m("axis-expert-ep-split", lambda d: (d["tensors"][1]["parallel_axes"][0].update(kind="ep"), d["tensors"][1].update(expert_id=0)), code="mooncake_axis_invalid", pointer=f"{t(1)}/expert_id")
    m("axes-object", lambda d: d["tensors"][0].update(parallel_axes={}), code="not_a_sequence", pointer=f"{t(0)}/parallel_axes")

    # Parts and fragments (part 0 is w0-0-0-0; fragment order is by id).
    P = "/parts/0"
    F = "/parts/0/fragments/0"
    m("part-extra", lambda d: d["parts"][0].update(topology_id="x"), code="fields_mismatch", pointer=P)
    m("part-not-object", lambda d: d["parts"].__setitem__(0, []), code="not_an_object", pointer=P)
    m("part-fragments-object", lambda d: d["parts"][0].update(fragments={}), code="not_a_sequence", pointer=f"{P}/fragments")
    m("part-rank-extra", lambda d: d["parts"][0]["rank"].update(sp=0), code="fields_mismatch", pointer=f"{P}/rank")
    m("part-missing", lambda d: d["parts"].pop(1), code="mooncake_participant_mismatch", pointer="/parts")
    m("part-duplicate", lambda d: d["parts"].append(copy.deepcopy(d["parts"][0])), code="mooncake_participant_mismatch", pointer="/parts/2/participant_id")
    m("part-duplicate-empty", lambda d: d["parts"].append({"participant_id": d["parts"][0]["participant_id"], "rank": d["parts"][0]["rank"], "fragments": []}), code="mooncake_participant_mismatch", pointer="/parts/2/participant_id")
    m("part-unknown", lambda d: d["parts"].append({"participant_id": "zz", "rank": {"dp": 0, "tp": 0, "pp": 0, "ep": 0}, "fragments": []}), code="mooncake_participant_mismatch", pointer="/parts/2/participant_id")
    m("part-renamed", lambda d: d["parts"][1].update(participant_id="other"), code="mooncake_participant_mismatch")
    m("part-rank-other", lambda d: (d["parts"][0].update(rank={"dp": 0, "tp": 1, "pp": 0, "ep": 0}), [f.update(rank={"dp": 0, "tp": 1, "pp": 0, "ep": 0}) for f in d["parts"][0]["fragments"]]), code="mooncake_participant_mismatch", pointer=f"{P}/rank")
    m("fragment-rank-other", lambda d: first_fragment(d).update(rank={"dp": 0, "tp": 1, "pp": 0, "ep": 0}), code="mooncake_participant_mismatch", pointer=f"{F}/rank")
    m("fragment-not-object", lambda d: d["parts"][0]["fragments"].__setitem__(0, None), code="not_an_object", pointer=F)
    m("fragment-extra", lambda d: first_fragment(d).update(runtime=1), code="fields_mismatch", pointer=F)
    m("fragment-missing-aliases", lambda d: first_fragment(d).pop("aliases"), code="fields_mismatch", pointer=F)
    m("fragment-id-empty", lambda d: first_fragment(d).update(placement_fragment_id=""), code="empty_string", pointer=f"{F}/placement_fragment_id")
    m("fragment-nbytes-zero", lambda d: first_fragment(d).update(nbytes=0), code="below_minimum", pointer=f"{F}/nbytes")
    m("fragment-nbytes-wrong", lambda d: first_fragment(d).update(nbytes=first_fragment(d)["nbytes"] + 1), code="nbytes_mismatch", pointer=f"{F}/nbytes")
    m("fragment-nbytes-big", lambda d: first_fragment(d).update(nbytes=1 << 64), code="u64_overflow", pointer=f"{F}/nbytes")
    m("fragment-offset-negative", lambda d: first_fragment(d).update(global_offset=[-1] * len(first_fragment(d)["global_offset"])), code="below_minimum", pointer=f"{F}/global_offset/0")
    m("fragment-shape-zero", lambda d: first_fragment(d)["local_shape"].__setitem__(0, 0), code="below_minimum", pointer=f"{F}/local_shape/0")
    m("fragment-shape-string", lambda d: first_fragment(d).update(local_shape="x"), code="not_a_sequence", pointer=f"{F}/local_shape")
    m("fragment-ndim", lambda d: (first_fragment(d).update(global_offset=first_fragment(d)["global_offset"] + [0], local_shape=first_fragment(d)["local_shape"] + [1])), code="fragment_rank_mismatch", pointer=F)
    m("fragment-oob", lambda d: first_fragment(d)["global_offset"].__setitem__(0, 100), code="fragment_out_of_bounds", pointer=F)
    m("fragment-unknown-tensor", lambda d: first_fragment(d).update(tensor_id="nope"), code="unknown_tensor_id", pointer=f"{F}/tensor_id")
    m("fragment-stage-negative", lambda d: first_fragment(d).update(pipeline_stage_id=-1), code="below_minimum", pointer=f"{F}/pipeline_stage_id")
    m("fragment-stage-string", lambda d: first_fragment(d).update(pipeline_stage_id="0"), code="not_an_integer", pointer=f"{F}/pipeline_stage_id")
    m("fragment-aliases-string", lambda d: first_fragment(d).update(aliases="x"), code="not_a_sequence", pointer=f"{F}/aliases")
    m("fragment-alias-empty", lambda d: first_fragment(d).update(aliases=[""]), code="aliases_invalid", pointer=f"{F}/aliases/0")
    m("fragment-alias-number", lambda d: first_fragment(d).update(aliases=[first_fragment(d)["tensor_id"], 3]), code="aliases_invalid", pointer=f"{F}/aliases/1")
    m("fragment-alias-dup", lambda d: first_fragment(d).update(aliases=["a", "a"]), code="aliases_duplicate", pointer=f"{F}/aliases")
    m("fragment-alias-single", lambda d: first_fragment(d).update(aliases=[first_fragment(d)["tensor_id"]]), code="mooncake_alias_group_invalid", pointer=f"{F}/aliases")
    m("fragment-alias-not-own", lambda d: first_fragment(d).update(aliases=["p", "q"]), code="mooncake_alias_group_invalid", pointer=f"{F}/aliases")
    m("fragment-alias-unknown", lambda d: first_fragment(d).update(aliases=sorted([first_fragment(d)["tensor_id"], "ghost"])), code="mooncake_alias_group_invalid", pointer=f"{F}/aliases")
    m("fragment-alias-partial", lambda d: [f.update(aliases=sorted([f["tensor_id"], "w.norm" if f["tensor_id"] == "w.q" else "w.q"])) for f in d["parts"][0]["fragments"]], code="mooncake_alias_group_invalid")
    m("fragment-dup-id-in-part", lambda d: d["parts"][0]["fragments"][1].update(placement_fragment_id=first_fragment(d)["placement_fragment_id"]), code="duplicate_fragment_id")
    m("fragment-dup-id-across-parts", lambda d: d["parts"][1]["fragments"][0].update(placement_fragment_id=first_fragment(d)["placement_fragment_id"]), code="duplicate_fragment_id", pointer="/parts/1/fragments/0/placement_fragment_id")
    m("fragment-dup-logical", lambda d: d["parts"][0]["fragments"].append(dict(first_fragment(d), placement_fragment_id="sha256:dup")), code="duplicate_logical_fragment")
    m("fragment-dropped", lambda d: d["parts"][1]["fragments"].pop(0), code=None)
    m("fragment-all-dropped", lambda d: [p.update(fragments=[]) for p in d["parts"]], code="mooncake_unreferenced_tensor")
    m("tensor-unreferenced", lambda d: d["tensors"].append(dict(d["tensors"][0], tensor_id="zzz")), code="mooncake_unreferenced_tensor", pointer=t(ntensors))
    m("placement-empty", lambda d: (d.update(tensors=[]), [p.update(fragments=[]) for p in d["parts"]]), code="mooncake_not_covered", pointer="/tensors")


def split_frag(f, dim, at, tid_suffix=""):
    """Two fragments from one, cut along `dim` at `at` (ids made up: readers take any)."""
    a, b = copy.deepcopy(f), copy.deepcopy(f)
    item = f["nbytes"] // _vol(f["local_shape"])
    a["local_shape"][dim] = at
    b["global_offset"][dim] += at
    b["local_shape"][dim] -= at
    a["nbytes"], b["nbytes"] = _vol(a["local_shape"]) * item, _vol(b["local_shape"]) * item
    a["placement_fragment_id"] += ".a" + tid_suffix
    b["placement_fragment_id"] += ".b" + tid_suffix
    return a, b


def _vol(shape):
    n = 1
    for e in shape:
        n *= e
    return n


def frags_of(d, tensor_id):
    return [(pi, fi, f) for pi, p in enumerate(d["parts"]) for fi, f in enumerate(p["fragments"]) if f["tensor_id"] == tensor_id]


def cases_coverage(placements):
    """Mutations that reach the whole-placement rules (coverage, axes, alias groups)."""
    P = dict(placements)
    for name in ("tp2", "tp2-dp2", "pp2-tp2", "ep2-tp2", "dp2-pp2-ep2-tp2", "grid-tp2-dp2-pp2", "tied"):
        d0 = json.loads(mw.weight_placement_to_json(P[name]))
        m = lambda cid, fn, **kw: mutate(f"cover/{name}/{cid}", d0, fn, **kw)  # noqa: E731
        split_tensors = [t for t in d0["tensors"] if t["shard_dims"]]
        full_tensors = [t for t in d0["tensors"] if not t["shard_dims"]]
        if split_tensors:
            t = split_tensors[0]
            i = d0["tensors"].index(t)
            tid = t["tensor_id"]
            dim = t["shard_dims"][0]

            def drop_one(d, tid=tid):
                pi, fi, _ = frags_of(d, tid)[-1]
                d["parts"][pi]["fragments"].pop(fi)
            m("drop-split-fragment", drop_one, pointer=f"/tensors/{i}")

            def shift(d, tid=tid, dim=dim):
                pi, fi, f = frags_of(d, tid)[0]
                f["global_offset"][dim] += 1
            m("shift-split-fragment", shift)

            def undeclare(d, i=i):
                t = d["tensors"][i]
                t["parallel_axes"] = [a for a in t["parallel_axes"] if a.get("semantics") != "split" or a["kind"] != "tp"]
                t["shard_dims"] = sorted(a["dim"] for a in t["parallel_axes"] if a["semantics"] == "split")
            m("undeclare-tp-split", undeclare)

            def as_replicated(d, i=i):
                t = d["tensors"][i]
                t["parallel_axes"] = [dict(a, semantics="replicated") if a.get("semantics") == "split" else a for a in t["parallel_axes"]]
                for a in t["parallel_axes"]:
                    a.pop("dim", None)
                t["shard_dims"] = []
            m("split-as-replicated", as_replicated)

            def as_ownership(d, i=i):
                t = d["tensors"][i]
                t["parallel_axes"] = [{"semantics": "ownership", "kind": a["kind"]} if a.get("semantics") == "split" else a for a in t["parallel_axes"]]
                t["shard_dims"] = []
            m("split-as-ownership", as_ownership)

            def swap_ranks(d, tid=tid, dim=dim):
                fs = frags_of(d, tid)
                (pa, fa, a), (pb, fb, b) = fs[0], fs[1]
                if a["global_offset"] != b["global_offset"]:
                    a["global_offset"], b["global_offset"] = b["global_offset"], a["global_offset"]
            m("swap-split-boxes", swap_ranks)

            def split_in_two(d, tid=tid):
                pi, fi, f = frags_of(d, tid)[0]
                cut = next((k for k, e in enumerate(f["local_shape"]) if e > 1), None)
                if cut is None:
                    return
                a, b = split_frag(f, cut, 1)
                d["parts"][pi]["fragments"][fi:fi + 1] = [a, b]
            m("split-fragment-in-two", split_in_two)

            def overlap(d, tid=tid):
                pi, fi, f = frags_of(d, tid)[0]
                g = copy.deepcopy(f)
                g["placement_fragment_id"] += ".copy"
                cut = next((k for k, e in enumerate(g["local_shape"]) if e > 1), None)
                if cut is None:
                    return
                g["local_shape"][cut] -= 1
                g["nbytes"] = g["nbytes"] // f["local_shape"][cut] * g["local_shape"][cut]
                d["parts"][pi]["fragments"].append(g)
            m("overlap-in-rank", overlap)
        if full_tensors:
            t = full_tensors[0]
            i = d0["tensors"].index(t)
            tid = t["tensor_id"]

            def drop_replica(d, tid=tid):
                pi, fi, _ = frags_of(d, tid)[-1]
                d["parts"][pi]["fragments"].pop(fi)
            m("drop-replica", drop_replica)

            def shrink(d, tid=tid):
                _, _, f = frags_of(d, tid)[0]
                k = next((k for k, e in enumerate(f["local_shape"]) if e > 1), None)
                if k is None:
                    return
                item = f["nbytes"] // _vol(f["local_shape"])
                f["local_shape"][k] -= 1
                f["nbytes"] = _vol(f["local_shape"]) * item
            m("shrink-replica", shrink)

            def drop_axes(d, i=i):
                d["tensors"][i]["parallel_axes"] = []
            m("drop-axes", drop_axes)

            def own_instead(d, i=i):
                d["tensors"][i]["parallel_axes"] = [{"semantics": "ownership", "kind": a["kind"]} for a in d["tensors"][i]["parallel_axes"]]
            m("ownership-instead", own_instead)

            def split_replica_two(d, tid=tid):
                pi, fi, f = frags_of(d, tid)[0]
                cut = next((k for k, e in enumerate(f["local_shape"]) if e > 1), None)
                if cut is None:
                    return
                a, b = split_frag(f, cut, 1)
                d["parts"][pi]["fragments"][fi:fi + 1] = [a, b]
            m("split-replica-in-two", split_replica_two)

        def move_fragment(d):
            # Move the first fragment of part 0 to the last part (and its rank).
            f = d["parts"][0]["fragments"].pop(0)
            f["rank"] = dict(d["parts"][-1]["rank"])
            d["parts"][-1]["fragments"].append(f)
        m("move-fragment", move_fragment)

        if not any(f["aliases"] for p in d0["parts"] for f in p["fragments"]):
            continue

        def unalias(d):
            for p in d["parts"]:
                for f in p["fragments"]:
                    if f["aliases"]:
                        f["aliases"] = []
                        return
        m("drop-one-alias-group", unalias)


def cases_rules():
    """Hand-built documents reaching rules mutations of the bases do not."""
    def doc(sizes, tensors, parts):
        participants = [{"participant_id": pid, "rank": r} for pid, r, _ in parts]
        topo = mw.ParallelTopology(
            tp_size=sizes[0], pp_size=sizes[1], ep_size=sizes[2], dp_size=sizes[3],
            participants=tuple(mw.TopologyParticipant(participant_id=p["participant_id"], rank=mw.ParallelRank(**p["rank"])) for p in participants),
        )
        return {
            "resource_kind": "model_weight", "resource_id": "m", "revision": "r", "weight_generation": 0,
            "placement_set_id": "s", "placement_id": "sha256:x",
            "topology": {"tp_size": sizes[0], "pp_size": sizes[1], "ep_size": sizes[2], "dp_size": sizes[3],
                         "topology_id": topo.topology_id, "participants": participants},
            "tensors": tensors,
            "parts": [{"participant_id": pid, "rank": r, "fragments": fs} for pid, r, fs in parts],
        }

    def tensor(tid, shape, axes):
        return {"tensor_id": tid, "global_shape": shape, "dtype": "u8", "itemsize": 1,
                "shard_dims": sorted(a["dim"] for a in axes if a["semantics"] == "split"),
                "layout_fingerprint": "l", "parallel_axes": axes, "layer_id": None, "expert_id": None}

    def frag(fid, tid, off, shape, r):
        return {"placement_fragment_id": fid, "tensor_id": tid, "global_offset": off, "local_shape": shape,
                "nbytes": _vol(shape), "rank": r, "aliases": []}

    R = lambda dp=0, tp=0, pp=0, ep=0: {"dp": dp, "tp": tp, "pp": pp, "ep": ep}  # noqa: E731
    split = lambda k, d: {"semantics": "split", "kind": k, "dim": d}  # noqa: E731
    # EP and TP on the same workers: an expert tensor owned on ep, undeclared tp coupled to ep.
    coupled = [("w0", R(ep=0, tp=0)), ("w1", R(ep=1, tp=1))]
    t = tensor("e", [4], [{"semantics": "ownership", "kind": "ep"}])
    add("rules/coupled-ep-tp-ok", dumps(doc((2, 1, 2, 1), [t], [(p, r, [frag(p + ".e", "e", [0], [4], r)]) for p, r in coupled])), code="placement_id_mismatch")
    # tp undeclared and varying with no declared axis varying.
    t = tensor("e", [4], [{"semantics": "replicated", "kind": "ep"}])
    parts = [("w0", R(ep=0, tp=0), [frag("a", "e", [0], [4], R(ep=0, tp=0))]), ("w1", R(ep=0, tp=1), [frag("b", "e", [0], [4], R(ep=0, tp=1))])]
    add("rules/undeclared-varies", dumps(doc((2, 1, 1, 1), [t], parts)), code="mooncake_undeclared_axis", pointer="/tensors/0")
    # tp undeclared varying independently of ep.
    grid = [("w%d%d" % (e, tp), R(ep=e, tp=tp)) for e in range(2) for tp in range(2)]
    t = tensor("e", [4], [{"semantics": "ownership", "kind": "ep"}])
    parts = [(p, r, [frag(p, "e", [0], [4], r)] if r["ep"] == 0 else []) for p, r in grid]
    add("rules/undeclared-independent", dumps(doc((2, 1, 2, 1), [t], parts)), code="mooncake_undeclared_axis", pointer="/tensors/0")
    # A non-Cartesian split grid over tp x ep (2 of 4 coordinates).
    t = tensor("s", [2, 2], [split("ep", 0), split("tp", 1)])
    cells = {(0, 0): ([0, 0], [2, 1]), (1, 1): ([0, 1], [2, 1])}
    parts = [(p, r, [frag(p, "s", *cells[(r["ep"], r["tp"])], r)] if (r["ep"], r["tp"]) in cells else []) for p, r in grid]
    add("rules/non-cartesian", dumps(doc((2, 1, 2, 1), [t], parts)), code=None)
    # Three of the four ep x tp participants: every axis range is held, the grid is not.
    three = [("p00", R(ep=0, tp=0)), ("p01", R(ep=0, tp=1)), ("p10", R(ep=1, tp=0))]
    boxes3 = {"p00": ([0, 0], [1, 1]), "p01": ([0, 1], [1, 1]), "p10": ([1, 0], [1, 2])}
    t = tensor("s", [2, 2], [split("ep", 0), split("tp", 1)])
    add("rules/non-cartesian-three", dumps(doc((2, 1, 2, 1), [t], [(p, r, [frag(p, "s", *boxes3[p], r)]) for p, r in three])), code="mooncake_split_geometry", pointer="/tensors/0")
    t = tensor("s", [2, 4], [split("ep", 0), split("tp", 1)])
    boxes3 = {"p00": ([0, 0], [1, 2]), "p01": ([0, 2], [1, 2]), "p10": ([1, 0], [1, 4])}
    add("rules/non-cartesian-wide", dumps(doc((2, 1, 2, 1), [t], [(p, r, [frag(p, "s", *boxes3[p], r)]) for p, r in three])), code="mooncake_split_geometry", pointer="/tensors/0")
    # Boxes that tile the tensor but cross along the split dimension.
    t = tensor("s", [4, 2], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a1", "s", [0, 0], [2, 1], R(tp=0)), frag("a2", "s", [2, 1], [2, 1], R(tp=0))]),
             ("b", R(tp=1), [frag("b1", "s", [2, 0], [2, 1], R(tp=1)), frag("b2", "s", [0, 1], [2, 1], R(tp=1))])]
    add("rules/split-crossing", dumps(doc((2, 1, 1, 1), [t], parts)), code="mooncake_split_geometry", pointer="/tensors/0")
    t = tensor("s", [4, 4], [split("tp", 1)])
    parts = [("a", R(tp=0), [frag("a1", "s", [0, 0], [2, 2], R(tp=0)), frag("a2", "s", [2, 2], [2, 2], R(tp=0))]),
             ("b", R(tp=1), [frag("b1", "s", [2, 0], [2, 2], R(tp=1)), frag("b2", "s", [0, 2], [2, 2], R(tp=1))])]
    add("rules/split-crossing-dim1", dumps(doc((2, 1, 1, 1), [t], parts)), code="mooncake_split_geometry", pointer="/tensors/0")
    # Split boxes out of rank order along the split dim.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a", "s", [2], [2], R(tp=0))]), ("b", R(tp=1), [frag("b", "s", [0], [2], R(tp=1))])]
    add("rules/split-out-of-order", dumps(doc((2, 1, 1, 1), [t], parts)), code=None)
    # Split over tp but one rank holds two pieces interleaved with the other's.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a1", "s", [0], [1], R(tp=0)), frag("a2", "s", [2], [1], R(tp=0))]),
             ("b", R(tp=1), [frag("b1", "s", [1], [1], R(tp=1)), frag("b2", "s", [3], [1], R(tp=1))])]
    add("rules/split-interleaved", dumps(doc((2, 1, 1, 1), [t], parts)), code=None)
    # One tp rank holds the whole tensor, the other nothing.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a", "s", [0], [4], R(tp=0))]), ("b", R(tp=1), [frag("b", "t", [0], [1], R(tp=1))])]
    t2 = tensor("t", [1], [{"semantics": "ownership", "kind": "tp"}])
    add("rules/split-one-rank", dumps(doc((2, 1, 1, 1), [t, t2], parts)), code=None)
    # Ownership on pp with a participant-less replica: dp replicated but one dp rank lacks it.
    grid2 = [("d%dp%d" % (dp, pp), R(dp=dp, pp=pp)) for dp in range(2) for pp in range(2)]
    t = tensor("x", [2], [{"semantics": "replicated", "kind": "dp"}, {"semantics": "ownership", "kind": "pp"}])
    parts = [(p, r, [frag(p, "x", [0], [2], r)] if (r["pp"] == 0 and r["dp"] == 0) or (r["pp"] == 1 and r["dp"] == 1) else []) for p, r in grid2]
    add("rules/replica-missing-owner", dumps(doc((1, 2, 1, 2), [t], parts)), code="mooncake_replica_coverage", pointer="/tensors/0")
    # dp undeclared while dp is active.
    t = tensor("x", [2], [{"semantics": "ownership", "kind": "pp"}])
    parts = [(p, r, [frag(p, "x", [0], [2], r)] if r["pp"] == 0 else []) for p, r in grid2]
    add("rules/dp-undeclared", dumps(doc((1, 2, 1, 2), [t], parts)), code="mooncake_undeclared_axis", pointer="/tensors/0")
    # Two overlapping fragments of different tp ranks inside one replica's cover.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a", "s", [0], [3], R(tp=0))]), ("b", R(tp=1), [frag("b", "s", [2], [2], R(tp=1))])]
    add("rules/cross-rank-overlap", dumps(doc((2, 1, 1, 1), [t], parts)), code="mooncake_not_covered", pointer="/tensors/0")
    # A fragment outside the tensor.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a", "s", [0], [2], R(tp=0))]), ("b", R(tp=1), [frag("b", "s", [3], [2], R(tp=1))])]
    add("rules/out-of-bounds", dumps(doc((2, 1, 1, 1), [t], parts)), code="fragment_out_of_bounds", pointer="/parts/1/fragments/0")
    # Same-rank overlap of one tensor inside one part (before any coverage rule).
    parts = [("a", R(tp=0), [frag("a1", "s", [0], [2], R(tp=0)), frag("a2", "s", [1], [2], R(tp=0))]), ("b", R(tp=1), [frag("b", "s", [2], [2], R(tp=1))])]
    add("rules/same-rank-overlap", dumps(doc((2, 1, 1, 1), [t], parts)), code="fragment_overlap", pointer="/parts/0/fragments/1")
    # Split on tp with tp size 4 but only two tp participants.
    t = tensor("s", [4], [split("tp", 0)])
    parts = [("a", R(tp=0), [frag("a", "s", [0], [2], R(tp=0))]), ("b", R(tp=1), [frag("b", "s", [2], [2], R(tp=1))])]
    add("rules/split-partial-range", dumps(doc((4, 1, 1, 1), [t], parts)), code="mooncake_split_participation", pointer="/tensors/0")
    parts = [("a", R(tp=0), [frag("a", "s", [0], [2], R(tp=0))]), ("b", R(tp=2), [frag("b", "s", [2], [2], R(tp=2))])]
    add("rules/split-partial-range-gap", dumps(doc((3, 1, 1, 1), [t], parts)), code="mooncake_split_participation", pointer="/tensors/0")
