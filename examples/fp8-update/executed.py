"""The quantized update through the executor (contract §17.8): bound plan, Transfer Engine.

:func:`update` (:func:`update_all`: several layouts, the same two processes) runs one
layout's update the way a deployment runs it: a **target**
process (the engine side: zeroed FP8 and scale buffers registered with its own Mooncake
Transfer Engine over TCP) and a **source** process (the trainer side: the bfloat16
fragments, their quantized forms registered with its engine), the plan bound to both
processes' live addresses, and :func:`weight_manifest_runtime.transfer.execute` pushing from the
source with its :class:`~weight_manifest_runtime.transfer.quantize.QuantizedForms`: the source
quantizes exactly the blocks the bound copies read, in its staging, and writes FP8 and
scales into the target's memory. The source computes the content partials of what it
quantized and sent (per region), the target of what landed (per fragment). With
``backend="local"`` both sides run in this process on :class:`LocalBackend`.

    python executed.py role source|target   # a process of one side (stdin/stdout JSON lines)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import torch

import weight_manifest as wm
from weight_manifest_runtime import transfer
from weight_manifest.content import partial_of_bytes
from weight_manifest_runtime.transfer.quantize import QuantizedForms, QuantizingSource, region_bytes

HERE = Path(__file__).resolve().parent


def source_worker(fragment: dict[str, Any]) -> str:
    return f"trainer-{fragment['rank']['tp']}"


def target_worker(fragment: dict[str, Any]) -> str:
    return f"engine-{fragment['rank']['tp']}"


def take(t: torch.Tensor, box: tuple[list[int], list[int]]) -> torch.Tensor:
    return t[tuple(slice(o, o + e) for o, e in zip(*box))]


def binding(placement: dict[str, Any], addresses: dict[str, int], session: str, worker: Any,
            instance: str) -> str:
    """The runtime binding of ``placement`` at the live ``addresses`` of one process."""
    doc = wm.PlacementManifest.from_json(json.dumps(placement))
    fragments = [{"address": addresses[f["placement_fragment_id"]], "device": "cpu", "endpoint": session,
                  "fragment_id": f"{instance}:{f['placement_fragment_id']}", "nbytes": f["nbytes"],
                  "placement_fragment_id": f["placement_fragment_id"], "worker_id": worker(f)}
                 for f in placement["fragments"]]
    return json.dumps({"fragments": fragments, "generation": 1, "instance_id": instance, "lease_id": f"{instance}-1",
                       "model_id": placement["model_id"], "placement_digest": doc.digest,
                       "placement_id": doc.placement_id, "revision": placement["revision"]})


class Source:
    """The trainer side: bfloat16 fragments and their quantized forms on ``backend``."""

    def __init__(self, source: dict[str, Any], x: dict[str, torch.Tensor], backend: Any,
                 quantized: Optional[set[str]] = None) -> None:
        self.placement, self.backend = source, backend
        self.tensors = {f["placement_fragment_id"]: take(x[f["tensor_id"]], (f["global_offset"],
                                                                           f["local_shape"])).contiguous()
                        for f in source["fragments"]}
        for t in self.tensors.values():
            backend.register(int(t.data_ptr()), t.numel() * t.element_size())
        # The quantized forms of the fragments of the tensors the spec names (all, if None).
        self.forms = QuantizedForms(backend, {f["placement_fragment_id"]: (f, self.tensors[f["placement_fragment_id"]])
                                              for f in source["fragments"]
                                              if quantized is None or f["tensor_id"] in quantized})

    def addresses(self) -> dict[str, int]:
        return {fid: int(t.data_ptr()) for fid, t in self.tensors.items()}

    def push(self, bound: wm.BoundPlan, sessions: dict[str, str], plan: dict[str, Any],
             target: dict[str, Any]) -> dict[str, Any]:
        """Runs every pair (this process is every source worker), then the partials of what
        each region sent, from the quantized forms."""
        report = transfer.execute(bound, self.backend, sessions, mode="push", quantized=self.forms,
                                  options=transfer.ExecuteOptions(batch_segments=16, staging_bytes=1 << 16))
        kept = {t["tensor_id"]: t for t in target["tensors"]}
        sent = []
        for region in plan["regions"]:
            d = kept[region["tensor_id"]]
            if "transform" in region:
                staged: QuantizingSource = self.forms.sources[region["source_fragment_id"]]
                quantized_before = set(staged.quantized)
                data = region_bytes(region, staged)
                # The forms held every block the region reads: the executor quantized them.
                assert staged.quantized == quantized_before, "a region read a block the executor did not quantize"
            else:
                data = region_bytes(region, self.tensors[region["source_fragment_id"]])
            sent.append({"tensor_id": region["tensor_id"], "global_shape": d["global_shape"],
                         "itemsize": d["itemsize"], "global_offset": region["global_offset"],
                         "local_shape": region["shape"],
                         "partial": partial_of_bytes(data, region["tensor_id"], d["global_shape"], d["itemsize"],
                                                     region["global_offset"], region["shape"])})
        return {"partials": sent, "blocks": sum(len(s.quantized) for s in self.forms.sources.values()),
                "pairs": len(report.pairs)}


class Target:
    """The engine side: zeroed FP8 values and float32 scales on ``backend``."""

    def __init__(self, target: dict[str, Any], scale_ids: set[str], backend: Any) -> None:
        self.placement = target
        dtypes = {t["tensor_id"]: (torch.float32 if t["tensor_id"] in scale_ids else
                                   torch.uint8 if t["dtype"] == "float8_e4m3fn" else getattr(torch, t["dtype"]))
                  for t in target["tensors"]}
        self.buffers = {f["placement_fragment_id"]: torch.zeros(f["local_shape"], dtype=dtypes[f["tensor_id"]])
                        for f in target["fragments"]}
        for t in self.buffers.values():
            backend.register(int(t.data_ptr()), t.numel() * t.element_size())

    def addresses(self) -> dict[str, int]:
        return {fid: int(t.data_ptr()) for fid, t in self.buffers.items()}

    def partials(self) -> list[dict[str, Any]]:
        kept = {t["tensor_id"]: t for t in self.placement["tensors"]}
        out = []
        for f in self.placement["fragments"]:
            d = kept[f["tensor_id"]]
            data = self.buffers[f["placement_fragment_id"]].reshape(-1).view(torch.uint8).numpy().tobytes()
            out.append({"tensor_id": f["tensor_id"], "global_shape": d["global_shape"], "itemsize": d["itemsize"],
                        "global_offset": f["global_offset"], "local_shape": f["local_shape"],
                        "partial": partial_of_bytes(data, f["tensor_id"], d["global_shape"], d["itemsize"],
                                                    f["global_offset"], f["local_shape"])})
        return out


def bind(plan: Any, source: dict[str, Any], target: dict[str, Any], src: tuple[dict[str, int], str],
         tgt: tuple[dict[str, int], str]) -> wm.BoundPlan:
    return wm.bind_plan(plan, binding(source, src[0], src[1], source_worker, "trainer"),
                        binding(target, tgt[0], tgt[1], target_worker, "engine"))


Layout = tuple[dict[str, Any], dict[str, Any], str, dict[str, torch.Tensor]]


def update(source: dict[str, Any], target: dict[str, Any], spec: str, x: dict[str, torch.Tensor],
           backend: str = "te") -> dict[str, Any]:
    """One layout's update through the executor (``x``: the bfloat16 tensors by tensor_id):
    the landed buffers (fragment id -> tensor), the partials the source sent and those of
    what landed, and the blocks quantized."""
    return update_all([(source, target, spec, x)], backend)[0]


def _spec_ids(spec: str) -> tuple[set[str], set[str]]:
    entries = json.loads(spec)["tensors"]
    return {t["scale_tensor_id"] for t in entries}, {t["tensor_id"] for t in entries}


def update_all(layouts: list[Layout], backend: str = "te") -> list[dict[str, Any]]:
    """:func:`update` of each layout in turn; on the Transfer Engine, the same two processes
    serve every layout (each with its own buffers and registrations)."""
    plans = [wm.plan(json.dumps(source), json.dumps(target), quantization=spec)
             for source, target, spec, _ in layouts]
    if backend == "local":
        out = []
        for (source, target, spec, x), planned in zip(layouts, plans):
            scale_ids, quantized = _spec_ids(spec)
            local = transfer.LocalBackend()
            src, tgt = Source(source, x, local, quantized), Target(target, scale_ids, local)
            bound = bind(planned, source, target, (src.addresses(), "local"), (tgt.addresses(), "local"))
            sessions = {target_worker(f): "local" for f in target["fragments"]}
            done = src.push(bound, sessions, json.loads(planned.to_json()), target)
            out.append({"landed": tgt.buffers, "sent": done["partials"], "held": tgt.partials(),
                        "blocks": done["blocks"]})
        return out
    results = []
    with tempfile.TemporaryDirectory() as work:
        job = Path(work) / "job.pt"
        torch.save([{"source": source, "target": target, "x": x, "scale_ids": _spec_ids(spec)[0],
                     "quantized": _spec_ids(spec)[1]} for source, target, spec, x in layouts], job)
        roles = {role: subprocess.Popen([sys.executable, __file__, "role", role, str(job)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True) for role in ("target", "source")}
        try:
            for index, ((source, target, _, _), planned) in enumerate(zip(layouts, plans)):
                hello = {role: _read(p) for role, p in roles.items()}
                bound = bind(planned, source, target, (hello["source"]["addresses"], hello["source"]["session"]),
                             (hello["target"]["addresses"], hello["target"]["session"]))
                sessions = {target_worker(f): hello["target"]["session"] for f in target["fragments"]}
                _write(roles["source"], {"bound": bound.to_json(), "sessions": sessions,
                                         "plan": json.loads(planned.to_json())})
                done = _read(roles["source"])
                landed_file = Path(work) / f"landed-{index}.pt"
                _write(roles["target"], {"landed": str(landed_file)})
                held = _read(roles["target"])
                results.append({"landed": torch.load(landed_file), "sent": done["partials"],
                                "held": held["partials"], "blocks": done["blocks"]})
        finally:
            for p in roles.values():
                if p.poll() is None:
                    p.stdin.close() if p.stdin else None
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
    return results


def _write(process: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def _read(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        raise RuntimeError(f"a role process exited with {process.wait()} before answering")
    answer: dict[str, Any] = json.loads(line)
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return answer


def role(which: str, job_path: str) -> int:
    """One side's process, its own Transfer Engine over TCP on 127.0.0.1, serving each
    layout of the job in turn: its addresses, then (source) the push or (target) the
    landed bytes and their partials."""
    from mooncake.engine import TransferEngine

    jobs = torch.load(job_path, weights_only=False)
    engine = TransferEngine()
    if engine.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0:
        print(json.dumps({"error": "the transfer engine did not initialise"}), flush=True)
        return 1
    backend = transfer.EngineBackend(engine)
    session = "127.0.0.1:%d" % engine.get_rpc_port()
    sides: list[Any] = []  # every layout's buffers stay alive (and registered) to the end
    try:
        for job in jobs:
            if which == "source":
                side: Any = Source(job["source"], job["x"], backend, job["quantized"])
            else:
                side = Target(job["target"], job["scale_ids"], backend)
            sides.append(side)
            print(json.dumps({"session": session, "addresses": side.addresses()}), flush=True)
            request = json.loads(sys.stdin.readline())
            if which == "source":
                answer = side.push(wm.BoundPlan.from_json(request["bound"]), request["sessions"], request["plan"],
                                   job["target"])
            else:
                torch.save(side.buffers, request["landed"])
                answer = {"partials": side.partials()}
            print(json.dumps(answer), flush=True)
    except Exception as error:  # noqa: BLE001 - reported to the driver, which fails
        print(json.dumps({"error": f"{which}: {type(error).__name__}: {error}"}), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "role":
        sys.exit(role(sys.argv[2], sys.argv[3]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
