"""Content digests of live tensors (contract §19) against an independent oracle: the
definition written out in plain Python over the C reference xxHash (``tests/content/oracle.py``,
PyPI ``xxhash``)."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import weight_manifest as wm
from conftest import ROOT
from no_skip import INSTALL, require
from weight_manifest import _native, content

sys.path.insert(0, str(ROOT / "tests" / "content"))
import oracle  # noqa: E402


def raises(code: str, call: Any, *args: Any) -> wm.ManifestError:
    with pytest.raises(wm.ManifestError) as caught:
        call(*args)
    assert caught.value.code == code, caught.value
    return caught.value


def boxes(shape: tuple[int, ...], cuts: list[list[int]]) -> list[tuple[list[int], list[int]]]:
    """The boxes of the grid that ``cuts`` (per axis, inner cut points) make."""
    out: list[tuple[list[int], list[int]]] = [([], [])]
    for d, axis_cuts in zip(shape, cuts):
        edges = [0, *axis_cuts, d]
        out = [(o + [a], l + [b - a]) for o, l in out for a, b in zip(edges, edges[1:])]
    return out


def fragment(array: np.ndarray, offset: list[int], local: list[int]) -> np.ndarray:
    index = tuple(slice(o, o + n) for o, n in zip(offset, local))
    return np.ascontiguousarray(array[index])


LAYOUTS = [
    # shape, dtype, block, cuts per axis (offsets mostly not multiples of the block)
    ((5, 13), np.float32, 4, [[2], [3, 9]]),
    ((3, 4, 10), np.uint16, 3, [[1], [], [5, 7]]),
    ((17,), np.int8, 5, [[1, 2, 11]]),
    ((6, 64), np.float16, 64, [[3], [32]]),
    ((2, 9), np.float64, 100, [[], [4]]),
]


@pytest.mark.parametrize("shape,dtype,block,cuts", LAYOUTS)
def test_partials_and_digest_match_the_oracle(shape: Any, dtype: Any, block: int, cuts: Any) -> None:
    rng = np.random.default_rng(sum(shape) * block)
    array = rng.integers(0, 255, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    array = array.view(dtype).reshape(shape)
    itemsize = array.dtype.itemsize
    raw = array.tobytes()
    expected = oracle.digest("model.w", shape, itemsize, block, raw)
    whole = _native.content_partial(array, "model.w", shape, [0] * len(shape), block)
    assert whole["edges"] == [] and "xxh3sum128:" + whole["sum"] == expected
    partials: list[Any] = []
    for offset, local in boxes(shape, cuts):
        piece = fragment(array, offset, local)
        got = _native.content_partial(piece, "model.w", shape, offset, block)
        assert got == oracle.partial("model.w", shape, itemsize, block, offset, local, piece.tobytes())
        partials.append({"global_offset": offset, "local_shape": local, "partial": got})
    assert any(p["partial"]["edges"] for p in partials) or block == 64
    combined = _native.content_combine("model.w", shape, itemsize, block, partials + partials[:1])
    assert combined == expected
    # The oracle's own partials combine too (the fixture form, §19.4).
    assert _native.content_combine("model.w", shape, itemsize, block, partials[::-1]) == expected


def test_block_values_match_the_oracle() -> None:
    array = np.arange(3 * 11, dtype=np.int32).reshape(3, 11)
    piece = fragment(array, [1, 2], [2, 9])
    rows, blocks, hi, lo = _native.block_values(piece, "t", [3, 11], [1, 2], 3)
    assert rows.dtype == np.uint64 and len(rows) == len(blocks) == len(hi) == len(lo)
    got = [(int(r), int(b), (int(h) << 64) | int(v)) for r, b, h, v in zip(rows, blocks, hi, lo)]
    assert got == oracle.block_values("t", [3, 11], 4, 3, [1, 2], [2, 9], piece.tobytes())
    # Columns 2..11 of n = 11, B = 3: blocks 1, 2 and the short last block 3 are whole.
    assert [(r, b) for r, b, _ in got] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]


def test_values_of_listed_blocks_match_the_oracle() -> None:
    """content.block_values_at: the values of some blocks of a live fragment, in the order
    asked, as the oracle computes them from the fragment's bytes."""
    array = np.arange(3 * 11, dtype=np.int32).reshape(3, 11)
    piece = fragment(array, [1, 2], [2, 9])
    expected = {(r, b): v for r, b, v in oracle.block_values("t", [3, 11], 4, 3, [1, 2], [2, 9], piece.tobytes())}
    asked = [(2, 3), (1, 1), (2, 1), (1, 3)]  # any order, the short last block included
    offsets = [((r - 1) * 9 + b * 3 - 2) * 4 for r, b in asked]
    lengths = [(min(11, (b + 1) * 3) - b * 3) * 4 for _, b in asked]
    got = content.block_values_at(piece, "t", offsets, lengths, [r for r, _ in asked], [b for _, b in asked])
    assert got.shape == (4, 2) and got.dtype == np.uint64
    assert [(int(hi) << 64) | int(lo) for lo, hi in got] == [expected[k] for k in asked]
    assert content.block_values_at(piece, "t", [], [], [], []).shape == (0, 2)
    error = raises("content_buffer_invalid", content.block_values_at, piece, "t", [70], [4], [1], [1])
    assert "leaves the fragment's 72 bytes" in str(error)
    raises("content_buffer_invalid", _native.content_values_at, piece, "t", b"\0" * 31)


def test_one_changed_byte_changes_exactly_its_partial() -> None:
    array = np.arange(4 * 10, dtype=np.uint8).reshape(4, 10)
    before = _native.content_partial(array, "t", [4, 10], [0, 0], 4)
    changed = array.copy()
    changed[2, 7] ^= 0x10
    after = _native.content_partial(changed, "t", [4, 10], [0, 0], 4)
    assert after["sum"] != before["sum"]
    assert "xxh3sum128:" + after["sum"] == oracle.digest("t", [4, 10], 1, 4, changed.tobytes())


def test_rejections() -> None:
    array = np.zeros((4, 6), dtype=np.float32)
    raises("live_tensor_unreadable", _native.content_partial, array[:, ::2], "t", [4, 3], [0, 0], 4)
    raises("content_shape_invalid", _native.content_partial, array, "t", [4, 5], [0, 0], 4)
    raises("content_shape_invalid", _native.content_partial, array, "t", [4, 6], [0, 0], 0)
    raises("content_shape_invalid", _native.content_partial, array, "t", [4, 6], [0], 4)
    left = _native.content_partial(fragment(array, [0, 0], [4, 3]), "t", [4, 6], [0, 0], 4)
    right = _native.content_partial(fragment(array, [0, 3], [4, 3]), "t", [4, 6], [0, 3], 4)
    a = {"global_offset": [0, 0], "local_shape": [4, 3], "partial": left}
    b = {"global_offset": [0, 3], "local_shape": [4, 3], "partial": right}
    assert _native.content_combine("t", [4, 6], 4, 4, [a, b]) == oracle.digest("t", [4, 6], 4, 4, array.tobytes())
    raises("content_partition_invalid", _native.content_combine, "t", [4, 6], 4, 4, [a])
    wider = {"global_offset": [0, 2], "local_shape": [4, 4], "partial": right}
    raises("content_partition_invalid", _native.content_combine, "t", [4, 6], 4, 4, [a, wider])
    torn = {**b, "partial": {"sum": right["sum"], "edges": right["edges"][1:]}}
    raises("content_partition_invalid", _native.content_combine, "t", [4, 6], 4, 4, [a, torn])
    other = {**b, "partial": {**right, "sum": "0" * 32}}
    raises("content_replica_mismatch", _native.content_combine, "t", [4, 6], 4, 4, [a, b, other])
    error = raises("content_manifest_invalid", _native.content_combine, "t", [4, 6], 4, 4, [a, {"local_shape": [4, 3]}])
    assert error.path == "/1/global_offset"
    bad_hex = {**b, "partial": {**right, "sum": "XYZ"}}
    error = raises("content_manifest_invalid", _native.content_combine, "t", [4, 6], 4, 4, [a, bad_hex])
    assert error.path == "/1/partial/sum"


def minilm_tensors() -> dict[str, np.ndarray]:
    """all-MiniLM-L6-v2's tensors as numpy arrays, from the package's model.zip (or
    MINILM_MODEL_ZIP); a test fails with the install command when neither is there."""
    zip_path = os.environ.get("MINILM_MODEL_ZIP")
    if zip_path is None:
        spec = importlib.util.find_spec("all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            pytest.fail(f"all-MiniLM-L6-v2 is not installed (or set MINILM_MODEL_ZIP): {INSTALL}")
        zip_path = str(Path(next(iter(spec.submodule_search_locations))) / "model.zip")
    with zipfile.ZipFile(zip_path) as archive:
        data = archive.read("model.safetensors")
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name != "__metadata__":
            dtype = np.dtype(dtypes[info["dtype"]])
            start, end = info["data_offsets"]
            flat = np.frombuffer(data, dtype, (end - start) // dtype.itemsize, 8 + length + start)
            out[name] = flat.reshape(info["shape"])
    return out


@pytest.mark.parametrize("tp", [2, 4])
def test_minilm_slices_held_live_give_the_whole_digests(tp: int) -> None:
    tensors = minilm_tensors()
    for name, array in tensors.items():
        shape = list(array.shape)
        whole = _native.content_partial(array, name, shape, [0] * len(shape), 64)
        assert whole["edges"] == []
        # The last dim where tp divides the extent (columns first: cuts inside rows).
        dim = next((d for d in reversed(range(len(shape))) if shape[d] % tp == 0), None)
        if dim is None:
            continue
        step = shape[dim] // tp
        partials = []
        for rank in range(tp):
            offset = [0] * len(shape)
            offset[dim] = rank * step
            local = list(shape)
            local[dim] = step
            piece = fragment(array, offset, local)
            partials.append({"global_offset": offset, "local_shape": local,
                             "partial": _native.content_partial(piece, name, shape, offset, 64)})
        combined = _native.content_combine(name, shape, array.dtype.itemsize, 64, partials)
        assert combined == "xxh3sum128:" + whole["sum"], name
    sample = "encoder.layer.0.attention.output.dense.weight"
    array = tensors[sample]
    assert "xxh3sum128:" + _native.content_partial(array, sample, list(array.shape), [0, 0], 64)["sum"] == (
        oracle.digest(sample, list(array.shape), 4, 64, array.tobytes())
    )


def test_torch_bfloat16_parameter_views_are_hashed_in_place() -> None:
    torch = require("torch")
    name, shape, block = "lm_head.weight", [6, 10], 4
    values = torch.randn(*shape, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    weight = torch.nn.Parameter(values)  # requires grad, as a model's weights do
    # The oracle reads the bytes through torch's own numpy view, not through DLPack.
    expected = oracle.digest(name, shape, 2, block, weight.detach().view(torch.int16).numpy().tobytes())
    rows = [{"global_offset": [o, 0], "local_shape": [3, 10],
             "partial": _native.content_partial(weight[o : o + 3], name, shape, [o, 0], block)} for o in (0, 3)]
    assert _native.content_combine(name, shape, 2, block, rows) == expected
    raises("live_tensor_unreadable", _native.content_partial, weight[:, :5], name, shape, [0, 0], block)
    raises("live_tensor_unreadable", _native.content_partial, torch.empty(6, 10, device="meta"), name, shape,
           [0, 0], block)


def test_bytes_received_into_a_buffer_hash_as_the_oracle_says() -> None:
    """partial_of_bytes and block_values_of_bytes over raw bytes (a receive buffer), against
    the oracle; a buffer of another size is content_buffer_invalid; verify_manifest
    recombines a manifest's fragments."""
    shape, itemsize, block = [4, 10], 4, 4
    data = bytes(range(160))
    for offset, local in boxes((4, 10), [[1], [3, 7]]):
        piece = oracle.cut(shape, itemsize, data, offset, local)
        got = content.partial_of_bytes(piece, "w", shape, itemsize, offset, local, block)
        assert got == oracle.partial("w", shape, itemsize, block, offset, local, piece)
        values = content.block_values_of_bytes(piece, "w", shape, itemsize, offset, local, block)
        assert values == oracle.block_values("w", shape, itemsize, block, offset, local, piece)
    raises("content_buffer_invalid", content.partial_of_bytes, data[:-1], "w", shape, itemsize, [0, 0], shape, block)
    raises("content_shape_invalid", content.block_values_of_bytes, data, "w", shape, itemsize, [0, 1], shape, block)
    corpus = ROOT / "tests" / "conformance" / "content"
    good = json.loads((corpus / "manifest-b4-fragments.json").read_text(encoding="utf-8"))["input"]["document"]
    assert content.verify_manifest(good) == good
    bad = json.loads((corpus / "manifest-partial-sum-zeroed.json").read_text(encoding="utf-8"))["input"]["document"]
    raises("content_digest_mismatch", content.verify_manifest, bad)


def test_content_manifest_round_trip() -> None:
    text = content.write_manifest("m", "r", 3, 64, [("b", "float32", [2], 4, "xxh3sum128:" + "1" * 32),
                                              ("a", "float32", [2], 4, "xxh3sum128:" + "2" * 32)])
    assert text.startswith('{"algorithm":"xxh3-block-sum-v1","block_elements":64,"fragments":null,"generation":3')
    assert text.index('"tensor_id":"a"') < text.index('"tensor_id":"b"')
    read = content.read_manifest(text)
    assert read["digests"] == {"a": "xxh3sum128:" + "2" * 32, "b": "xxh3sum128:" + "1" * 32}
    with pytest.raises(wm.ManifestError) as caught:
        content.write_manifest("m", "r", 3, 64, [("a", "float32", [2], 4, "not-a-digest")])
    assert caught.value.code == "content_manifest_invalid"
