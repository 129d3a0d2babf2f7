"""Runtime bindings: upstream's per-participant WeightRuntimeBindingManifest objects built
from this project's JSON form of them (an array of objects whose members are the dataclass
fields plus resource_kind), checked by upstream's validate_runtime_bindings against a
placement built with its constructors; accepted and mutated (rejected) cases."""

from __future__ import annotations

import copy
import json
import re

from mooncake.reshard import weight as mw

from .build import layout, one

BINDINGS: dict[str, dict] = {}

# One upstream message family per code of this project.
BINDING_CODES = [
    (r"^placement and runtime binding resource_id differ$", "model_id_mismatch"),
    (r"^placement_id and runtime binding placement_id differ$", "binding_placement_id_mismatch"),
    (r"^placement digest and runtime binding placement digest differ$", "digest_mismatch"),
    (r"^placement and runtime binding revision differ$", "revision_mismatch"),
    (r"^placement_digest must be", "digest_format"),
    (r"runtime binding participant", "mooncake_binding_participant"),
    (r"^unknown placement fragment in runtime binding", "unknown_binding_fragment"),
    (r"^missing placement fragment in runtime binding", "missing_binding_fragment"),
    (r"^duplicate placement fragment in runtime binding$", "duplicate_binding_fragment"),
    (r"^duplicate runtime fragment_id in runtime binding$", "duplicate_runtime_fragment_id"),
    (r"^runtime binding byte size does not match placement", "binding_nbytes_mismatch"),
    (r"^runtime binding stride does not describe a canonical", "non_canonical_stride"),
    (r"^runtime binding address ranges overlap", "address_overlap"),
    (r"^runtime stride rank differs", "stride_rank_mismatch"),
    (r"^address range must fit", "address_range_overflow"),
    (r"^runtime stride must be positive|^runtime address must equal|^runtime view exceeds storage"
     r"|^normalized runtime address|local_shape does not match|itemsize does not match", "mooncake_binding_invalid"),
]


def binding_code(message):
    for pattern, code in BINDING_CODES:
        if re.search(pattern, message):
            return code
    raise SystemExit(f"no code for upstream binding message: {message!r}")


FIELDS = ("placement_fragment_id", "fragment_id", "address", "nbytes", "worker_id", "endpoint", "device", "itemsize",
          "local_shape", "strides_bytes", "storage_address", "storage_nbytes", "storage_offset_bytes")
TOP = ("resource_id", "placement_id", "placement_digest", "instance_id", "generation", "lease_id", "revision",
       "participant_id")


def to_upstream(docs):
    """Upstream's objects from this project's JSON form (raises ValueError as upstream does)."""
    out = []
    for d in docs:
        if set(d) != set(TOP) | {"fragments", "resource_kind"} or d["resource_kind"] != "model_weight":
            raise ValueError("not a runtime binding")
        frags = tuple(mw.RuntimeBindingFragment(**{k: (tuple(f[k]) if isinstance(f[k], list) else f[k]) for k in FIELDS})
                      for f in d["fragments"])
        out.append(mw.WeightRuntimeBindingManifest(**{k: d[k] for k in TOP}, fragments=frags))
    return out


def strides(shape, itemsize):
    out, running = [], itemsize
    for e in reversed(shape):
        out.append(running)
        running *= e
    return list(reversed(out))


def base(p, slack=0):
    """One binding per participant: views laid out one after another per worker; with
    `slack`, each view sits `slack` bytes into an allocation `2 * slack` bytes larger."""
    tensors = {t.tensor_id: t for t in p.tensors}
    docs = []
    for part in p.parts:
        if not part.fragments:
            continue
        address, frags = 4096, []
        for f in part.fragments:
            t = tensors[f.tensor_id]
            frags.append({"placement_fragment_id": f.placement_fragment_id, "fragment_id": f"rt-{f.placement_fragment_id[7:19]}",
                          "address": address + slack, "nbytes": f.nbytes, "worker_id": f"worker-{part.participant_id}",
                          "endpoint": f"ep-{part.participant_id}", "device": "cuda:0", "itemsize": t.itemsize,
                          "local_shape": list(f.local_shape), "strides_bytes": strides(list(f.local_shape), t.itemsize),
                          "storage_address": address, "storage_nbytes": f.nbytes + 2 * slack,
                          "storage_offset_bytes": slack})
            address += f.nbytes + 2 * slack
        docs.append({"resource_kind": "model_weight", "resource_id": p.resource_id, "placement_id": p.placement_id,
                     "placement_digest": p.digest, "instance_id": "instance-0", "generation": 7, "lease_id": "lease-0",
                     "revision": p.revision, "participant_id": part.participant_id, "fragments": frags})
    return docs


def record(cid, placement_name, docs):
    try:
        mw.validate_runtime_bindings(PLACEMENTS[placement_name], to_upstream(docs))
        expect = {"ok": True}
    except ValueError as error:
        expect = {"ok": False, "code": binding_code(str(error)), "upstream_message": str(error)}
    BINDINGS[cid] = {"placement": placement_name,
                     "input": json.dumps(docs, sort_keys=True, separators=(",", ":")), "expect": expect}


PLACEMENTS: dict[str, object] = {}


def cases_bindings():
    for sizes in (one({"tp": 2}), one({"tp": 2, "dp": 2}), {"tp": 2, "pp": 2, "ep": 2, "dp": 2}):
        name, p = layout(sizes, "tp{tp}-pp{pp}-ep{ep}-dp{dp}".format(**sizes))
        PLACEMENTS[name] = p
    for name in PLACEMENTS:
        record(f"{name}/ok", name, base(PLACEMENTS[name]))
        record(f"{name}/ok-storage-offset", name, base(PLACEMENTS[name], slack=64))
    name = "tp2-pp1-ep1-dp2"
    good = base(PLACEMENTS[name])

    def mutate(cid, edit, slack=0):
        docs = copy.deepcopy(base(PLACEMENTS[name], slack) if slack else good)
        edit(docs)
        record(f"{name}/{cid}", name, docs)

    f0 = lambda d: d[0]["fragments"][0]  # noqa: E731
    mutate("nbytes", lambda d: f0(d).update(nbytes=f0(d)["nbytes"] + 2, storage_nbytes=f0(d)["nbytes"] + 2))
    mutate("stride", lambda d: f0(d).update(strides_bytes=[s * 2 for s in f0(d)["strides_bytes"]]))
    mutate("stride-rank", lambda d: f0(d).update(strides_bytes=f0(d)["strides_bytes"] + [1]))
    mutate("zero-stride", lambda d: f0(d).update(strides_bytes=[0] * len(f0(d)["strides_bytes"])))
    mutate("itemsize", lambda d: f0(d).update(itemsize=f0(d)["itemsize"] * 2))
    mutate("local-shape", lambda d: f0(d).update(local_shape=[f0(d)["nbytes"] // f0(d)["itemsize"]],
                                                 strides_bytes=[f0(d)["itemsize"]]))
    mutate("unknown-fragment", lambda d: f0(d).update(placement_fragment_id="sha256:" + "0" * 64))
    mutate("missing-fragment", lambda d: d[0]["fragments"].pop())
    mutate("duplicate-fragment", lambda d: d[0]["fragments"].append(dict(d[0]["fragments"][0], fragment_id="other")))
    mutate("duplicate-fragment-id", lambda d: d[0]["fragments"][1].update(fragment_id=f0(d)["fragment_id"]))
    mutate("missing-participant", lambda d: d.pop())
    mutate("duplicate-participant", lambda d: d.append(copy.deepcopy(d[0])))
    mutate("unknown-participant", lambda d: d[0].update(participant_id="nobody"))
    mutate("resource", lambda d: d[1].update(resource_id="other-model"))
    mutate("placement-id", lambda d: d[1].update(placement_id="sha256:" + "1" * 64))
    mutate("digest", lambda d: d[1].update(placement_digest="2" * 64))
    mutate("digest-format", lambda d: d[1].update(placement_digest="XYZ"))
    mutate("revision", lambda d: d[1].update(revision="r9"))
    mutate("overlap", lambda d: d[0]["fragments"][1].update(address=f0(d)["address"] + 1, storage_address=f0(d)["address"] + 1))
    mutate("overlap-across-bindings", lambda d: [f.update(worker_id="shared") for b in d for f in b["fragments"]])
    mutate("storage-address", lambda d: f0(d).update(storage_address=f0(d)["storage_address"] + 8), slack=64)
    mutate("storage-bounds", lambda d: f0(d).update(storage_nbytes=f0(d)["nbytes"]), slack=64)
    mutate("address-overflow", lambda d: f0(d).update(address=2**64 - 8, storage_address=2**64 - 8))
    # Accepted variants: another instance per participant is another address space.
    mutate("ok-shared-worker-other-instances",
           lambda d: [b.update(instance_id=f"instance-{i}") or [f.update(worker_id="shared") for f in b["fragments"]]
                      for i, b in enumerate(d)])
    mutate("ok-generation-differs", lambda d: d[1].update(generation=8))
