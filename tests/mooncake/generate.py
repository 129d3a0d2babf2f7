#!/usr/bin/env python3
"""Generate the Mooncake oracle corpus (tests/mooncake/corpus/*.json) with upstream's own code.

    python tests/mooncake/generate.py          # (re)write the corpus
    python tests/mooncake/generate.py --check  # exit 1 if any file would change

Needs the wheel `mooncake-transfer-engine-non-cuda==0.3.13.post1` (its `mooncake.reshard` is
pure Python). Every expectation is what upstream does with the case's input text:
`weight_placement_from_json` accepts it (then its `weight_placement_to_json` bytes,
`placement_id`, `digest`, `topology_id` are recorded) or rejects it (then its message is
recorded and mapped to this project's code by the table CODES below, one upstream message
family per code). Pointers are written down with the mutation that breaks a value, never
taken from this project's output. The corpus is data only: tests/mooncake_oracle.rs runs it
without the wheel.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
OUT = HERE / "corpus"

from mooncake.reshard import weight as mw  # noqa: E402

# Upstream message family -> this project's code. The first pattern that matches wins.
CODES = [
    (r"is not valid JSON", "invalid_json"),
    (r"^duplicate JSON field", "duplicate_key"),
    (r"^non-finite JSON number", "non_finite_number"),
    (r"must be a JSON object$", "not_an_object"),
    (r"schema fields do not match contract$|has an invalid schema$", "fields_mismatch"),
    (r"must be a sequence$", "not_a_sequence"),
    (r"alias must be a non-empty string$", "aliases_invalid"),
    (r"must be a non-empty string$", "empty_string"),
    (r"must be an integer at least", "below_minimum|not_an_integer"),
    (r"must fit in an unsigned 64-bit integer", "u64_overflow"),
    (r"resource_kind must be model_weight", "mooncake_resource_kind"),
    (r"participants must not be empty|^duplicate topology participant_id|^duplicate topology parallel rank|rank is out of range for participant", "mooncake_topology_invalid"),
    (r"^topology_id does not match", "mooncake_topology_id_mismatch"),
    (r"^unsupported parallel axis|cannot use split semantics|^EP must split|must not contain duplicate kinds|^split axes must not share|^split axis dimension is out of range|conflict with shard_dims|individually allocated expert", "mooncake_axis_invalid"),
    (r"^global_shape must not be empty", "empty_shape"),
    (r"^shard_dims must not contain duplicates", "shard_dims_duplicate"),
    (r"^shard_dims must be sorted", "shard_dims_unsorted"),
    (r"^shard_dims contains an out-of-range", "shard_dims_out_of_range"),
    (r"^duplicate tensor_id", "duplicate_tensor_id"),
    (r"^unknown tensor_id", "unknown_tensor_id"),
    (r"^aliases must not contain duplicates", "aliases_duplicate"),
    (r"^alias group", "mooncake_alias_group_invalid"),
    (r"fragment rank differs from part rank|^duplicate placement participant|^missing topology participant|^unknown topology participant|part rank differs from topology", "mooncake_participant_mismatch"),
    (r"^duplicate fragment_id", "duplicate_fragment_id"),
    (r"^duplicate logical fragment", "duplicate_logical_fragment"),
    (r"^fragment rank mismatch", "fragment_rank_mismatch"),
    (r"^fragment is out of bounds", "fragment_out_of_bounds"),
    (r"^fragment byte size mismatch", "nbytes_mismatch"),
    (r"^logical fragment boxes overlap", "fragment_overlap"),
    (r"unreferenced tensor", "mooncake_unreferenced_tensor"),
    (r"requires explicit parallel semantics|varies across undeclared|varies independently across undeclared", "mooncake_undeclared_axis"),
    (r"missing or unexpected replicated-axis participant", "mooncake_replica_coverage"),
    (r"missing or unexpected split-axis participant", "mooncake_split_participation"),
    (r"is not fully covered|must contain tensors|must contain fragments", "mooncake_not_covered"),
    (r"^non-Cartesian split-axis|split-axis rank geometry conflicts", "mooncake_split_geometry"),
    (r"^placement_id does not match", "placement_id_mismatch"),
]

# The placement rules every one of which the corpus must reject at least twice.
RULE_CODES = [
    "mooncake_resource_kind", "mooncake_topology_invalid", "mooncake_topology_id_mismatch",
    "mooncake_axis_invalid", "mooncake_alias_group_invalid", "mooncake_participant_mismatch",
    "mooncake_unreferenced_tensor", "mooncake_undeclared_axis", "mooncake_replica_coverage",
    "mooncake_not_covered", "mooncake_split_participation", "mooncake_split_geometry",
    "placement_id_mismatch", "duplicate_fragment_id", "duplicate_logical_fragment",
    "fragment_out_of_bounds", "fragment_rank_mismatch", "nbytes_mismatch", "fragment_overlap",
    "unknown_tensor_id", "duplicate_tensor_id", "fields_mismatch", "empty_string",
    "not_a_sequence", "not_an_object", "below_minimum", "not_an_integer", "duplicate_key",
    "non_finite_number", "invalid_json", "empty_shape", "shard_dims_duplicate",
    "shard_dims_unsorted", "shard_dims_out_of_range", "aliases_duplicate", "aliases_invalid",
]


def code_of(message: str) -> str:
    for pattern, code in CODES:
        if re.search(pattern, message):
            return code
    raise SystemExit(f"no code for upstream message: {message!r}")


# ------------------------------------------------------------------------------------------
# Building valid placements with upstream's constructors

AXIS_ORDER = ("dp", "pp", "ep", "tp")


def rank_tuple(r):
    return {"dp": r.dp, "tp": r.tp, "pp": r.pp, "ep": r.ep}


def build(name, sizes, tensors, *, names=None, resource="model-a", revision="r1", generation=3, pset="set-0", stage=None):
    """A placement over the full grid of `sizes` (dict tp/pp/ep/dp); each tensor is
    (id, shape, itemsize, axes, owner) with axes a list of ("split", kind, dim) /
    ("replicated", kind) / ("ownership", kind), owner a dict kind -> coordinate for the
    ownership axes; tensors may carry aliases through a 6th element."""
    grid = [dict(zip(AXIS_ORDER, c)) for c in itertools.product(*(range(sizes[k]) for k in AXIS_ORDER))]
    participants = []
    for i, c in enumerate(grid):
        pid = names(i, c) if names else f"w{c['dp']}-{c['pp']}-{c['ep']}-{c['tp']}"
        participants.append(mw.TopologyParticipant(participant_id=pid, rank=mw.ParallelRank(**c)))
    topology = mw.ParallelTopology(
        tp_size=sizes["tp"], pp_size=sizes["pp"], ep_size=sizes["ep"], dp_size=sizes["dp"],
        participants=tuple(participants),
    )
    descriptors, fragments = [], []
    for spec in tensors:
        tid, shape, itemsize, axes, owner = spec[:5]
        extra = spec[5] if len(spec) > 5 else {}
        parallel = []
        for a in axes:
            if a[0] == "split":
                parallel.append(mw.SplitAxis(kind=a[1], dim=a[2]))
            elif a[0] == "replicated":
                parallel.append(mw.ReplicatedAxis(kind=a[1]))
            else:
                parallel.append(mw.OwnershipAxis(kind=a[1]))
        shard_dims = tuple(sorted(a[2] for a in axes if a[0] == "split"))
        descriptors.append(mw.TensorDescriptor(
            tensor_id=tid, global_shape=tuple(shape), dtype=extra.get("dtype", "bfloat16"), itemsize=itemsize,
            shard_dims=shard_dims, layout_fingerprint=extra.get("layout", "row-major"),
            parallel_axes=tuple(parallel), layer_id=extra.get("layer"), expert_id=extra.get("expert"),
        ))
        for c in grid:
            if any(c[k] != v for k, v in owner.items()):
                continue
            offset, local = [0] * len(shape), list(shape)
            for a in axes:
                if a[0] == "split":
                    n = sizes[a[1]]
                    step = shape[a[2]] // n
                    offset[a[2]] = c[a[1]] * step
                    local[a[2]] = step
            nbytes = itemsize
            for e in local:
                nbytes *= e
            fragments.append(mw.PlacementFragment(
                tensor_id=tid, global_offset=tuple(offset), local_shape=tuple(local), nbytes=nbytes,
                rank=mw.ParallelRank(**c), pipeline_stage_id=extra.get("stage"), aliases=tuple(extra.get("aliases", ())),
            ))
    placement = mw.WeightPlacementManifest.from_fragments(
        resource_id=resource, revision=revision, weight_generation=generation, placement_set_id=pset,
        topology=topology, tensors=descriptors, fragments=fragments,
    )
    return name, placement


def one(sizes):
    return {"tp": 1, "pp": 1, "ep": 1, "dp": 1, **sizes}


def bases():
    """The valid placements every mutation starts from."""
    out = []
    out.append(build("tp2", one({"tp": 2}), [
        ("w.q", [8, 4], 2, [("split", "tp", 0)], {}),
        ("w.norm", [4], 4, [("replicated", "tp")], {}),
    ]))
    out.append(build("tp2b", one({"tp": 2}), [
        ("a.norm", [6], 1, [("replicated", "tp")], {}, {"layer": 1}),
        ("b.proj", [4, 6], 1, [("split", "tp", 0)], {}, {"layer": 1}),
        ("c.out", [6, 2], 1, [("split", "tp", 0)], {}),
    ], resource="other", revision="main", generation=0, pset="p"))
    out.append(build("tp2-dp2", one({"tp": 2, "dp": 2}), [
        ("a.weight", [4, 6], 2, [("replicated", "dp"), ("split", "tp", 1)], {}),
        ("b.bias", [6], 2, [("replicated", "dp"), ("replicated", "tp")], {}),
    ]))
    out.append(build("pp2-tp2", one({"tp": 2, "pp": 2}), [
        (f"layers.{l}.w", [4, 8], 1, [("ownership", "pp"), ("split", "tp", 1)], {"pp": l}, {"layer": l}) for l in range(2)
    ] + [("embed", [16, 4], 2, [("ownership", "pp"), ("replicated", "tp")], {"pp": 0})]))
    out.append(build("ep2-tp2", one({"tp": 2, "ep": 2}), [
        (f"experts.{e}.w", [4, 4], 2, [("ownership", "ep"), ("split", "tp", 0)], {"ep": e % 2}, {"expert": e}) for e in range(4)
    ] + [("router", [4, 4], 4, [("replicated", "ep"), ("replicated", "tp")], {}),
         ("stacked", [4, 8], 1, [("split", "ep", 0), ("split", "tp", 1)], {})]))
    out.append(build("tied", one({"tp": 2}), [
        ("embed", [8, 4], 2, [("split", "tp", 0)], {}, {"aliases": ["embed", "lm_head"]}),
        ("lm_head", [8, 4], 2, [("split", "tp", 0)], {}, {"aliases": ["embed", "lm_head"]}),
    ]))
    out.append(build("stages", one({"pp": 2}), [
        (f"l{l}", [4], 2, [("ownership", "pp")], {"pp": l}, {"stage": l * 2}) for l in range(2)
    ]))
    out.append(build("unicode", one({"tp": 2}), [
        ("caf\u00e9.\u6743\u91cd.\U0001f600", [2, 2], 2, [("split", "tp", 1)], {}, {"dtype": "bf\"16\\", "layout": "tab\there"}),
    ], resource="mod\u00e8le", revision="r\u00e9v", pset="set/\u00e9"))
    out.append(build("dp2-pp2-ep2-tp2", {"tp": 2, "pp": 2, "ep": 2, "dp": 2}, [
        (f"L{l}.E{e}.w", [4, 8], 2, [("replicated", "dp"), ("ownership", "pp"), ("ownership", "ep"), ("split", "tp", 1)], {"pp": l, "ep": e}, {"layer": l, "expert": e})
        for l in range(2) for e in range(2)
    ] + [(f"L{l}.attn", [8, 8], 2, [("replicated", "dp"), ("ownership", "pp"), ("replicated", "ep"), ("split", "tp", 0)], {"pp": l}, {"layer": l}) for l in range(2)]))
    out.append(build("names", one({"tp": 2, "dp": 2}), [
        ("x", [2, 2, 4], 1, [("replicated", "dp"), ("split", "tp", 2)], {}),
    ], names=lambda i, c: ["zeta", "alpha", "Mid", "0"][i]))
    # Generated placements of several sizes, for volume.
    for tp, dp, pp in itertools.product((1, 2, 4), (1, 2), (1, 2)):
        sizes = one({"tp": tp, "dp": dp, "pp": pp})
        tensors = []
        for l in range(pp * 2):
            axes = [("replicated", "dp")] if dp > 1 else []
            if pp > 1:
                axes.append(("ownership", "pp"))
            tensors.append((f"m.{l}.qkv", [8 * tp, 4], 2, axes + ([("split", "tp", 0)] if tp > 1 else []), {"pp": l % pp} if pp > 1 else {}, {"layer": l}))
            tensors.append((f"m.{l}.ln", [4], 4, axes + ([("replicated", "tp")] if tp > 1 else []), {"pp": l % pp} if pp > 1 else {}, {"layer": l}))
        out.append(build(f"grid-tp{tp}-dp{dp}-pp{pp}", sizes, tensors, generation=tp * 100 + dp * 10 + pp))
    return out


# ------------------------------------------------------------------------------------------
# Cases

CASES: dict[str, dict] = {}


def run_upstream(text: str):
    try:
        placement = mw.weight_placement_from_json(text)
    except ValueError as error:
        return None, str(error)
    return placement, None


def add(cid, text, *, code=None, pointer=None, generated_ids=False):
    placement, message = run_upstream(text)
    case = {"input": text}
    if placement is not None:
        if code is not None:
            print(f"PREDICTION {cid}: upstream accepts it, the case expected {code}", file=sys.stderr)
        case["expect"] = {
            "ok": True,
            "canonical": mw.weight_placement_to_json(placement),
            "placement_id": placement.placement_id,
            "digest": placement.digest,
            "topology_id": placement.topology.topology_id,
            "generated_ids": generated_ids,
        }
    else:
        mapped = code_of(message)
        if "|" in mapped:
            assert code in mapped.split("|"), f"{cid}: upstream says {message!r}, expected {code}"
            mapped = code
        if code is not None and code != mapped:
            print(f"PREDICTION {cid}: upstream says {message!r} ({mapped}), expected {code}", file=sys.stderr)
            pointer = None
        case["expect"] = {"ok": False, "code": mapped, "upstream_message": message}
        if pointer is not None:
            case["expect"]["pointer"] = pointer
    assert cid not in CASES, cid
    CASES[cid] = case


def dumps(d, **kw):
    return json.dumps(d, **kw)


def with_upstream_id(text):
    """The document with the placement_id upstream computes for it, if upstream accepts it
    otherwise (upstream's reader with the check of the given id left out)."""
    import mooncake.reshard.weight.serde as serde
    original = serde.WeightPlacementManifest
    serde.WeightPlacementManifest = lambda **kw: original(**{k: v for k, v in kw.items() if k != "placement_id"})
    try:
        placement = serde.weight_placement_from_json(text)
    finally:
        serde.WeightPlacementManifest = original
    return mw.weight_placement_to_json(placement)


def mutate(cid, base, fn, *, code=None, pointer=None):
    d = copy.deepcopy(base)
    fn(d)
    add(cid, dumps(d), code=code, pointer=pointer)
    if CASES[cid]["expect"].get("code") == "placement_id_mismatch" and cid.startswith("cover/"):
        # A mutation upstream accepts but for its id: the accepted document joins the corpus.
        add(cid.replace("cover/", "ok/mutant/", 1), with_upstream_id(dumps(d)))


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


def cases_storage_rules():
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


# ------------------------------------------------------------------------------------------
# The Store's manifest (storage_manifest.WeightManifest): its own reader and rules

STORAGE: dict[str, dict] = {}


def add_storage(cid, text, *, code=None, pointer=None):
    try:
        manifest = mw.WeightManifest.from_json(text)
    except ValueError as error:
        message = str(error)
        mapped = storage_code_of(message)
        if "|" in mapped:
            mapped = code if code in mapped.split("|") else mapped.split("|")[0]
        if code is not None and code != mapped:
            print(f"PREDICTION {cid}: upstream says {message!r} ({mapped}), expected {code}", file=sys.stderr)
            pointer = None
        case = {"input": text, "expect": {"ok": False, "code": mapped, "upstream_message": message}}
        if pointer is not None:
            case["expect"]["pointer"] = pointer
    else:
        if code is not None:
            print(f"PREDICTION {cid}: upstream accepts it, the case expected {code}", file=sys.stderr)
        case = {"input": text, "expect": {"ok": True, "text": manifest.to_json(), "digest": manifest.manifest_digest}}
    assert cid not in STORAGE, cid
    STORAGE[cid] = case


STORAGE_CODES = [
    (r"manifest_key does not belong|object_key does not belong", "mooncake_storage_key"),
    (r"^duplicate fragment geometry", "mooncake_storage_duplicate_geometry"),
    (r"^tensor is not fully covered", "mooncake_storage_not_covered"),
    (r"^stored alias", "mooncake_storage_alias"),
    (r"object ranges overlap", "mooncake_storage_object_overlap"),
    (r"weight manifest resource_kind must be model_weight", "mooncake_resource_kind"),
    (r"must be an integer$", "not_an_integer"),
    (r"must be at least \d+$", "below_minimum"),
    (r"must fit in an unsigned 64-bit integer", "u64_overflow"),
]


def storage_code_of(message):
    for pattern, code in STORAGE_CODES:
        if re.search(pattern, message):
            return code
    return code_of(message)


def storage_base(name, group="g1", unicode=False, split=2):
    tid = "emb\u00e9d.\u6743" if unicode else "embed"
    tensors = [
        mw.TensorDescriptor(tensor_id=tid, global_shape=(8, 4), dtype="bfloat16", itemsize=2, shard_dims=(0,),
                            layout_fingerprint="row-major", parallel_axes=(mw.SplitAxis(kind="tp", dim=0),)),
        mw.TensorDescriptor(tensor_id="lm_head", global_shape=(8, 4), dtype="bfloat16", itemsize=2, shard_dims=(0,),
                            layout_fingerprint="row-major", parallel_axes=(mw.SplitAxis(kind="tp", dim=0),)),
        mw.TensorDescriptor(tensor_id="norm", global_shape=(4,), dtype="float32", itemsize=4, shard_dims=(),
                            layout_fingerprint="row-major", parallel_axes=(mw.ReplicatedAxis(kind="tp"),), layer_id=0),
    ]
    frags = []
    rows = 8 // split
    for k in range(split):
        for t in (tid, "lm_head"):
            frags.append(mw.StoredFragment(
                fragment_id=f"{t}/{k}", tensor_id=t, global_offset=(k * rows, 0), local_shape=(rows, 4),
                object_key=f"{group}/payload/{k}", object_offset=0 if t == "lm_head" else 4096, nbytes=rows * 4 * 2, aliases=(tid, "lm_head")))
    frags.append(mw.StoredFragment(fragment_id="norm/0", tensor_id="norm", global_offset=(0,), local_shape=(4,),
                                   object_key=f"{group}/payload/norm", object_offset=0, nbytes=16))
    return name, mw.WeightManifest(namespace="ns", resource_id="model-a", revision="r1", weight_generation=7,
                                   group_id=group, manifest_key=f"{group}/manifest", tensors=tuple(tensors),
                                   fragments=tuple(frags), created_at="2026-12-01T00:00:00Z")


def cases_storage():
    bases_ = [storage_base("small"), storage_base("unicode", group="gr\u00fcppe/\u00e9", unicode=True), storage_base("four", split=4)]
    for name, m0 in bases_:
        text = m0.to_json()
        add_storage(f"ok/{name}", text)
        d = json.loads(text)
        add_storage(f"ok/{name}/pretty", json.dumps(d, indent=2, ensure_ascii=True))
        shuffled = copy.deepcopy(d)
        for f in shuffled["fragments"]:
            f["aliases"].reverse()
        add_storage(f"ok/{name}/aliases-reversed", json.dumps(shuffled, sort_keys=False))
        reordered = copy.deepcopy(d)
        reordered["tensors"].reverse()
        reordered["fragments"].reverse()
        add_storage(f"ok/{name}/reordered", json.dumps(reordered))
        axes = copy.deepcopy(d)
        axes["tensors"][0]["parallel_axes"].append({"semantics": "replicated", "kind": "dp"})
        axes["tensors"][1]["parallel_axes"].append({"semantics": "replicated", "kind": "dp"})
        add_storage(f"ok/{name}/axes-unsorted", json.dumps(axes))

        def m(cid, fn, **kw):
            x = copy.deepcopy(d)
            fn(x)
            add_storage(f"reject/{name}/{cid}", json.dumps(x, ensure_ascii=False), **kw)
        F = lambda i: f"/fragments/{i}"  # noqa: E731
        m("extra", lambda x: x.update(x=1), code="fields_mismatch", pointer="")
        m("missing", lambda x: x.pop("created_at"), code="fields_mismatch", pointer="")
        m("kind", lambda x: x.update(resource_kind="kv"), code="mooncake_resource_kind", pointer="/resource_kind")
        m("kind-number", lambda x: x.update(resource_kind=1), code="mooncake_resource_kind", pointer="/resource_kind")
        for k in ("namespace", "resource_id", "revision", "group_id", "manifest_key", "created_at"):
            m(f"{k}-empty", lambda x, k=k: x.update({k: ""}), code="empty_string", pointer=f"/{k}")
        m("generation-negative", lambda x: x.update(weight_generation=-1), code="below_minimum", pointer="/weight_generation")
        m("generation-string", lambda x: x.update(weight_generation="7"), code="not_an_integer", pointer="/weight_generation")
        m("generation-big", lambda x: x.update(weight_generation=1 << 64), code="u64_overflow", pointer="/weight_generation")
        m("tensors-object", lambda x: x.update(tensors={}), code="not_a_sequence", pointer="/tensors")
        m("fragments-string", lambda x: x.update(fragments="f"), code="not_a_sequence", pointer="/fragments")
        m("tensor-extra", lambda x: x["tensors"][0].update(rank=1), code="fields_mismatch", pointer="/tensors/0")
        m("tensor-axes-object", lambda x: x["tensors"][0].update(parallel_axes={}), code="not_a_sequence", pointer="/tensors/0/parallel_axes")
        m("tensor-axis-kind", lambda x: x["tensors"][0]["parallel_axes"][0].update(kind="xp"), code="mooncake_axis_invalid", pointer="/tensors/0/parallel_axes/0/kind")
        m("tensor-shape-empty", lambda x: x["tensors"][2].update(global_shape=[]), code="empty_shape", pointer="/tensors/2/global_shape")
        m("tensor-shard-conflict", lambda x: x["tensors"][0].update(shard_dims=[1]), code="mooncake_axis_invalid", pointer="/tensors/0/parallel_axes")
        m("tensor-dup", lambda x: x["tensors"].append(copy.deepcopy(x["tensors"][2])), code="duplicate_tensor_id", pointer=f"/tensors/{len(d['tensors'])}")
        m("fragment-extra", lambda x: x["fragments"][0].update(rank={}), code="fields_mismatch", pointer=F(0))
        m("fragment-id-empty", lambda x: x["fragments"][0].update(fragment_id=""), code="empty_string", pointer=f"{F(0)}/fragment_id")
        m("fragment-offset-negative", lambda x: x["fragments"][0].update(object_offset=-1), code="below_minimum", pointer=f"{F(0)}/object_offset")
        m("fragment-nbytes-zero", lambda x: x["fragments"][0].update(nbytes=0), code="below_minimum", pointer=f"{F(0)}/nbytes")
        m("fragment-nbytes-wrong", lambda x: x["fragments"][0].update(nbytes=3), code="nbytes_mismatch", pointer=f"{F(0)}/nbytes")
        m("fragment-alias-empty", lambda x: x["fragments"][0].update(aliases=[""]), code="aliases_invalid", pointer=f"{F(0)}/aliases/0")
        m("fragment-alias-dup", lambda x: x["fragments"][0].update(aliases=["a", "a"]), code="aliases_duplicate", pointer=f"{F(0)}/aliases")
        m("fragment-alias-single", lambda x: x["fragments"][-1].update(aliases=["norm"]), code="mooncake_alias_group_invalid", pointer=f"{F(len(d['fragments']) - 1)}/aliases")
        m("fragment-alias-unknown", lambda x: x["fragments"][-1].update(aliases=["ghost", "norm"]), code="mooncake_storage_alias", pointer=f"{F(len(d['fragments']) - 1)}/aliases")
        m("fragment-alias-incomplete", lambda x: x["fragments"][-1].update(aliases=["lm_head", "norm"]), code="mooncake_storage_alias")
        m("fragment-alias-drop-one", lambda x: x["fragments"][0].update(aliases=[]), code="mooncake_storage_alias")
        m("fragment-alias-descriptors", lambda x: x["tensors"][1].update(layout_fingerprint="col-major"), code="mooncake_storage_alias")
        m("fragment-dup-id", lambda x: x["fragments"][1].update(fragment_id=x["fragments"][0]["fragment_id"]), code="duplicate_fragment_id", pointer=f"{F(1)}/fragment_id")
        m("fragment-unknown-tensor", lambda x: (x["fragments"][-1].update(tensor_id="ghost")), code="unknown_tensor_id", pointer=f"{F(len(d['fragments']) - 1)}/tensor_id")
        m("fragment-oob", lambda x: x["fragments"][-1].update(global_offset=[1]), code="fragment_out_of_bounds", pointer=F(len(d["fragments"]) - 1))
        m("fragment-ndim", lambda x: x["fragments"][-1].update(global_offset=[0, 0], local_shape=[4, 1]), code="fragment_rank_mismatch", pointer=F(len(d["fragments"]) - 1))
        m("manifest-key", lambda x: x.update(manifest_key="other/manifest"), code="mooncake_storage_key", pointer="/manifest_key")
        m("object-key", lambda x: x["fragments"][1].update(object_key="elsewhere/payload/0"), code="mooncake_storage_key", pointer=f"{F(1)}/object_key")
        m("object-key-prefix-only", lambda x: x["fragments"][2].update(object_key=x["group_id"] + "/payloads"), code="mooncake_storage_key", pointer=f"{F(2)}/object_key")
        m("duplicate-geometry", lambda x: x["fragments"].append(dict(x["fragments"][-1], fragment_id="norm/1", object_key=x["group_id"] + "/payload/n2")), code="mooncake_storage_duplicate_geometry", pointer=F(len(d["fragments"])))
        m("not-covered-drop", lambda x: x["fragments"].pop(), code="mooncake_storage_not_covered", pointer="/tensors/2")
        m("not-covered-shrink", lambda x: x["fragments"][-1].update(local_shape=[3], nbytes=12), code="mooncake_storage_not_covered", pointer="/tensors/2")
        m("not-covered-overlap", lambda x: (x["fragments"][-1].update(local_shape=[2], nbytes=8), x["fragments"].append(dict(x["fragments"][-1], fragment_id="norm/1", global_offset=[1], local_shape=[3], nbytes=12, object_key=x["group_id"] + "/payload/n2"))), code="mooncake_storage_not_covered", pointer="/tensors/2")
        m("object-overlap", lambda x: x["fragments"][-1].update(object_key=x["fragments"][0]["object_key"], object_offset=x["fragments"][0]["nbytes"] - 1), code="mooncake_storage_object_overlap")
        m("object-overlap-same", lambda x: x["fragments"][1].update(object_key=x["fragments"][0]["object_key"], object_offset=x["fragments"][0]["object_offset"]), code="mooncake_storage_object_overlap", pointer=F(1))
        m("object-same-key-ok", lambda x: x["fragments"][1].update(object_key=x["fragments"][0]["object_key"]))
        m("object-adjacent-ok", lambda x: x["fragments"][1].update(object_key=x["fragments"][0]["object_key"], object_offset=x["fragments"][0]["nbytes"]))


# ------------------------------------------------------------------------------------------
# Plans: upstream's plan_placement_transfer between two layouts of one model

def layout(sizes, name):
    """One small MoE-like model under `sizes`: fixed shapes, so any two layouts plan."""
    tp, pp, ep, dp = sizes["tp"], sizes["pp"], sizes["ep"], sizes["dp"]
    rep = [("replicated", "dp")] if dp > 1 else []
    tensors = []
    for l in range(4):
        own = [("ownership", "pp")] if pp > 1 else []
        owner = {"pp": l * pp // 4} if pp > 1 else {}
        tp_split = lambda d: [("split", "tp", d)] if tp > 1 else []  # noqa: E731
        tp_rep = [("replicated", "tp")] if tp > 1 else []
        ep_rep = [("replicated", "ep")] if ep > 1 else []
        tensors.append((f"l{l}.qkv", [16, 8], 2, rep + own + ep_rep + tp_split(0), owner, {"layer": l}))
        tensors.append((f"l{l}.out", [8, 16], 2, rep + own + ep_rep + tp_split(1), owner, {"layer": l}))
        tensors.append((f"l{l}.norm", [8], 4, rep + own + ep_rep + tp_rep, owner, {"layer": l}))
        for e in range(4):
            eown = [("ownership", "ep")] if ep > 1 else []
            eo = dict(owner, **({"ep": e % ep} if ep > 1 else {}))
            tensors.append((f"l{l}.e{e}.w", [4, 8], 2, rep + own + eown + tp_split(1), eo, {"layer": l, "expert": e}))
    return build(name, sizes, tensors, resource="moe", revision="r", generation=1)


PLANS: dict[str, dict] = {}
LAYOUTS: dict[str, str] = {}


def region_of(r):
    return {
        "tensor_id": r.tensor_id,
        "source_fragment_id": getattr(r.source, "placement_fragment_id", None) or r.source.fragment_id,
        "target_fragment_id": r.target.placement_fragment_id,
        "overlap_offset": list(r.overlap_offset),
        "overlap_shape": list(r.overlap_shape),
        "source_base_offset": r.source_base_offset,
        "target_base_offset": r.target_base_offset,
        "inner_bytes": r.inner_bytes,
        "outer_loop_counts": list(r.outer_loop_counts),
        "source_strides": list(r.source_strides),
        "target_strides": list(r.target_strides),
    }


def cases_plans():
    grid = [one({"tp": 2}), one({"tp": 4}), one({"tp": 2, "dp": 2}), one({"tp": 4, "dp": 2}), one({"pp": 2, "tp": 2}),
            one({"ep": 2, "tp": 2}), one({"ep": 4, "dp": 2}), {"tp": 2, "pp": 2, "ep": 2, "dp": 2}, one({"dp": 3, "tp": 2}),
            one({"pp": 4, "ep": 2, "dp": 2})]
    layouts = [layout(s, "tp{tp}-pp{pp}-ep{ep}-dp{dp}".format(**s)) for s in grid]
    limits = mw.PlanningLimits(max_transfer_regions=10**7, max_segments_per_region=10**7, max_total_lowered_segments=10**8)
    for name, p in layouts:
        LAYOUTS[name] = mw.weight_placement_to_json(p)
    # Each layout to the next three (a ring over every kind of change: tp, dp, pp, ep).
    for i, (a, pa) in enumerate(layouts):
        for step in (1, 2, 5):
            b, pb = layouts[(i + step) % len(layouts)]
            plan = mw.plan_placement_transfer(pa, pb, planning_limits=limits)
            PLANS[f"{a}->{b}"] = {"source": a, "target": b, "regions": [region_of(r) for r in plan.operations]}
    # A Store manifest of the same model (each tensor stored in two halves along dim 0) as
    # the source of every layout: plan_stored_transfer_to_target_placement.
    name0, p0 = layouts[0]
    frags = []
    for tensor in p0.tensors:
        rows = tensor.global_shape[0]
        pieces = 2 if rows % 2 == 0 else 1
        for k in range(pieces):
            shape = (rows // pieces,) + tuple(tensor.global_shape[1:])
            offset = (k * (rows // pieces),) + (0,) * (len(shape) - 1)
            n = tensor.itemsize
            for e in shape:
                n *= e
            frags.append(mw.StoredFragment(fragment_id=f"{tensor.tensor_id}#{k}", tensor_id=tensor.tensor_id,
                                           global_offset=offset, local_shape=shape, object_key=f"moe-g/payload/{k}",
                                           object_offset=sum(f.nbytes for f in frags if f.object_key == f"moe-g/payload/{k}"),
                                           nbytes=n))
    stored = mw.WeightManifest(namespace="ns", resource_id="moe", revision="r", weight_generation=1, group_id="moe-g",
                               manifest_key="moe-g/manifest", tensors=p0.tensors, fragments=tuple(frags),
                               created_at="2026-12-01T00:00:00Z")
    LAYOUTS["stored"] = stored.to_json()
    for b, pb in layouts:
        plan = mw.plan_stored_transfer_to_target_placement(stored, pb, planning_limits=limits)
        PLANS[f"stored->{b}"] = {"source": "stored", "target": b, "regions": [region_of(r) for r in plan.operations]}


def generate() -> dict[str, str]:
    placements = bases()
    cases_accepted(placements)
    cases_rejected(placements, "tp2")
    cases_rejected(placements, "tp2b")
    cases_coverage(placements)
    cases_storage_rules()
    seen = {}
    for cid, case in CASES.items():
        e = case["expect"]
        key = "ok" if e["ok"] else e["code"]
        seen.setdefault(key, []).append(cid)
    lacking = [code for code in RULE_CODES + ["ok"] if len(seen.get(code, [])) < 2]
    assert not lacking, f"fewer than two cases: {lacking}; counts {dict((k, len(v)) for k, v in seen.items())}"
    assert len(CASES) >= 200, len(CASES)
    cases = [dict(id=cid, **case) for cid, case in sorted(CASES.items())]
    counts = {k: len(v) for k, v in sorted(seen.items())}
    text = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 mooncake.reshard",
                       "counts": counts, "cases": cases}, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    cases_storage()
    scodes = {}
    for cid, case in STORAGE.items():
        e = case["expect"]
        scodes.setdefault("ok" if e["ok"] else e["code"], []).append(cid)
    for code in ["ok", "mooncake_storage_key", "mooncake_storage_duplicate_geometry", "mooncake_storage_not_covered",
                 "mooncake_storage_alias", "mooncake_storage_object_overlap", "mooncake_resource_kind"]:
        assert len(scodes.get(code, [])) >= 2, f"storage {code}: {scodes.get(code)}"
    stext = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 mooncake.reshard.weight.storage_manifest",
                        "counts": {k: len(v) for k, v in sorted(scodes.items())},
                        "cases": [dict(id=cid, **case) for cid, case in sorted(STORAGE.items())]},
                       indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    cases_plans()
    ptext = json.dumps({"upstream": "mooncake-transfer-engine-non-cuda==0.3.13.post1 plan_placement_transfer",
                        "layouts": LAYOUTS,
                        "cases": [dict(id=cid, **case) for cid, case in sorted(PLANS.items())]},
                       indent=None, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    return {"placement.json": text, "storage.json": stext, "plans.json": ptext}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if any file would change")
    args = parser.parse_args()
    files = generate()
    bad = []
    for name, text in files.items():
        path = OUT / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                bad.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if bad:
        print("tests/mooncake/generate.py --check: would change: " + ", ".join(bad), file=sys.stderr)
        return 1
    print(f"mooncake corpus: {len(CASES)} placement cases, {len(STORAGE)} storage cases, "
          f"{len(PLANS)} plans ({sum(len(c['regions']) for c in PLANS.values())} regions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
