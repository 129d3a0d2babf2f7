"""The oracle's core: the canonical encoding and hashing (contract §5, §7), and the
normalisation, identities and emissions of placements, runtime and binding manifests,
projections and bind (§6-§12), for VALID inputs only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent.parent
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


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def loads(text: str):
    return json.loads(text)
