"""Store manifest cases (storage_manifest.WeightManifest): its own reader and rules."""

from __future__ import annotations

import copy
import json
import re
import sys

from mooncake.reshard import weight as mw

from .common import code_of


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
