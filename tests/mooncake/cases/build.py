"""Valid placements built with upstream's own constructors: the bases of every case."""

from __future__ import annotations

import itertools

from mooncake.reshard import weight as mw

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


def nd_layout(sizes, name):
    """A model of 3-D and 4-D tensors under `sizes` (tp, ep): outer axes of extent 1, and
    whole outer axes beside a split inner one, whose regions this project's planner writes
    with fewer loops than upstream's (the same bytes, §20.9)."""
    tp, ep = sizes["tp"], sizes["ep"]
    tp_split = lambda d: [("split", "tp", d)] if tp > 1 else []  # noqa: E731
    ep_split = [("split", "ep", 0)] if ep > 1 else []
    tp_rep = [("replicated", "tp")] if tp > 1 else []
    ep_rep = [("replicated", "ep")] if ep > 1 else []
    tensors = [
        ("conv.w", [1, 8, 6], 2, ep_rep + tp_split(1), {}),         # an outer axis of extent 1
        ("mid.w", [4, 1, 8], 4, ep_rep + tp_split(2), {}),          # extent 1 between two axes
        ("block.w", [2, 3, 8], 2, ep_rep + tp_split(2), {}),        # two whole outer axes
        ("stack.w", [4, 1, 3, 8], 2, ep_split + tp_split(3), {}),   # 4-D, experts on dim 0
        ("grid.w", [2, 2, 2, 4], 1, ep_rep + tp_split(3), {}),      # 4-D, three whole outer axes
        ("flat.w", [1, 1, 4, 4], 2, ep_rep + tp_rep, {}),           # 4-D, replicated
    ]
    return build(name, sizes, tensors, resource="nd", revision="r", generation=1)
