"""A weight update end to end on the Mooncake Transfer Engine, every byte checked.

Starts one process per source rank and one per target rank on 127.0.0.1, each holding its
shards as live numpy tensors registered with its own engine; builds both placements and
bindings from the live tensors, plans, binds, executes over the engine, has every target
check every byte it holds, and prints as its last line one JSON object
``{"verified": true, "bytes": N, "segments": N, "seconds": S, "gib_per_s": X,
"raw_te_gib_per_s": Y}`` (Y: one contiguous transfer of the same byte count between two of
the same processes, in the same run). Any failure prints ``error: [code] message`` and
exits 1; nothing is then reported verified. Every process it starts is stopped.

    python reshard_te.py                               # synthetic 1 GiB, TP4/PP2 -> TP2/PP4
    python reshard_te.py --source tp2 --target tp1 --size-mib 256
    python reshard_te.py --model minilm --source tp2 --target tp1
    python reshard_te.py --source ep4 --target ep2 --experts 8
    python reshard_te.py --source tp2,dp2 --target tp1,dp2
    python reshard_te.py --backend local --mode pull
    python reshard_te.py --fault corrupt-byte           # exits 1, naming the tensor
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model  # noqa: E402
import weight_manifest as wm  # noqa: E402
from weight_manifest import content, live  # noqa: E402
from weight_manifest_runtime import transfer
from weight_manifest_runtime.group import Coordinator, Member, PipeGroup, Side, serve_pipe  # noqa: E402

FAULTS = ("kill-target", "short-buffer", "stale-generation", "changed-lease", "corrupt-byte")
GIB = float(1 << 30)


def worker_id(side: str, rank: wm.ParallelRank) -> str:
    return f"{side}-dp{rank.dp}.pp{rank.pp}.tp{rank.tp}.ep{rank.ep}"


def failure(code: str, message: str) -> wm.ManifestError:
    error = wm.ManifestError(message)
    error.code, error.path = code, None
    return error


# ---- what a rank holds ------------------------------------------------------------------

class Held:
    """One rank's tensors and inventory keywords, and the check of its bytes."""

    def __init__(self, config: dict[str, Any], side: str, rank: wm.ParallelRank) -> None:
        layout = model.Layout(**config[side])
        self.rank, self.layout = rank, layout
        fill = side == "source"
        if config["model"] == "minilm":
            path = model.minilm_file(Path(config["workdir"]))
            checkpoint = model.minilm_tensors(path)
            self.placement = model.minilm_placement(path, layout)
            self.want = model.minilm_slices(self.placement, checkpoint, rank)
            self.tensors = {n: (t.copy() if fill else np.zeros_like(t)) for n, t in self.want.items()}
            self.where: dict[str, Any] = {"placement": self.placement}
            self.specs: list[model.Tensor] = []
        else:
            self.specs = model.synthetic_tensors(config["size_mib"] << 20, config["experts"])
            shard = model.synthetic_shard(self.specs, layout, rank, fill)
            self.tensors, self.where = shard["tensors"], shard["where"]
        self.where.update(rank=rank, instance_id=f"{side}-instance", lease_id=f"{side}-lease-1",
                          generation=config["generation"])
        self.side = side
        self.mutation: Optional[tuple[float, int]] = None

    def mutate(self, fraction: float, block: int) -> int:
        """The next weights generation (synthetic model): sources change their blocks,
        targets learn what to expect. Returns the elements changed (on a target: the
        elements it holds that the change touches, counted on a scratch copy)."""
        self.mutation = (fraction, block)
        changed = 0
        for tensor in self.specs:
            if tensor.name in self.tensors:
                offset, _ = model.box(tensor, self.rank, self.layout)
                words = self.tensors[tensor.name].view(np.uint32)
                if self.side != "source":
                    words = np.zeros_like(words)
                changed += model.mutate(words, tensor, offset, fraction, block)
        return changed

    def check(self) -> Optional[str]:
        if self.specs:
            return model.synthetic_check(self.specs, self.layout, self.rank, self.tensors, self.mutation)
        for name, want in self.want.items():
            if not np.array_equal(want.view(np.uint8), self.tensors[name].view(np.uint8)):
                return f"tensor {name} differs"
        return None


# ---- the worker process -------------------------------------------------------------------

class KillSwitch:
    """A backend mixin armed by a fault: after the first completed batch it SIGKILLs the
    given process (a target, this worker itself, a Store's master)."""

    kill_pid: Optional[int] = None

    def wait(self, handle: int) -> bool:
        ok: bool = super().wait(handle)  # type: ignore[misc]
        if self.kill_pid is not None:
            pid, self.kill_pid = self.kill_pid, None
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            time.sleep(0.2)
        return ok


class FaultyBackend(KillSwitch, transfer.EngineBackend):
    """The engine, with the kill-target fault's switch."""


def run_worker(config: dict[str, Any]) -> None:
    from mooncake.engine import TransferEngine

    side = config["side"]
    rank = wm.ParallelRank(**config["rank"])
    held = Held(config, side, rank)
    engine = TransferEngine()
    if engine.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0:
        raise SystemExit("error: the transfer engine did not initialise")
    backend = FaultyBackend(engine)
    session = "127.0.0.1:%d" % engine.get_rpc_port()
    me = worker_id(side, rank)
    register = None
    if me in config.get("short", []):
        # The short-buffer fault: the largest tensor's last 4 KiB stay unregistered.
        register = []
        largest = max(held.tensors, key=lambda n: held.tensors[n].nbytes)
        for name, tensor in held.tensors.items():
            n = tensor.nbytes - (4096 if name == largest else 0)
            register.append((int(tensor.ctypes.data), n))
    scratch: list[np.ndarray] = []

    def verify(_: dict[str, Any]) -> dict[str, Any]:
        problem = held.check()
        if problem is not None:
            raise failure("transfer_verify_failed", f"{me}: {problem}; this target is not ready")
        return {"verified": sum(t.nbytes for t in held.tensors.values())}

    def set_fence(request: dict[str, Any]) -> dict[str, Any]:
        for member in ("generation", "lease_id"):
            if member in request:
                held.where[member] = worker.where[member] = request[member]
        return {}

    def corrupt(_: dict[str, Any]) -> dict[str, Any]:
        name = sorted(held.tensors)[0]
        held.tensors[name].view(np.uint8).reshape(-1)[7] ^= 0x5A
        return {"tensor": name}

    def mutate(request: dict[str, Any]) -> dict[str, Any]:
        return {"elements": held.mutate(float(request["fraction"]), int(request["block"]))}

    def arm(request: dict[str, Any]) -> dict[str, Any]:
        backend.kill_pid = int(request["pid"])
        return {}

    def allocate(request: dict[str, Any]) -> dict[str, Any]:
        buffer = np.ones(int(request["bytes"]), dtype=np.uint8)
        scratch.append(buffer)
        backend.register(int(buffer.ctypes.data), buffer.nbytes)
        return {"address": int(buffer.ctypes.data)}

    def clear(_: dict[str, Any]) -> dict[str, Any]:
        for tensor in held.tensors.values():
            tensor.view(np.uint8).fill(0)
        return {}

    def raw(request: dict[str, Any]) -> dict[str, Any]:
        if not scratch or scratch[-1].nbytes != int(request["bytes"]):
            allocate(request)
        local = int(scratch[-1].ctypes.data)
        started = time.perf_counter()
        status = engine.transfer_sync_read(request["session"], local, int(request["address"]), int(request["bytes"]))
        seconds = time.perf_counter() - started
        if status != 0:
            raise failure("transfer_failed", f"the raw transfer failed ({status})")
        return {"seconds": seconds}

    def release(_: dict[str, Any]) -> dict[str, Any]:
        for buffer in scratch:
            backend.unregister(int(buffer.ctypes.data))
        scratch.clear()
        return {}

    worker = Member(held.tensors, backend=backend, session=session, register=register,
                    handlers={"verify": verify, "set": set_fence, "corrupt": corrupt, "arm": arm,
                              "allocate": allocate, "raw": raw, "release": release, "clear": clear, "mutate": mutate,
                              "pid": lambda _: {"pid": os.getpid()}},
                    worker_id=me, endpoint=session, **held.where)
    serve_pipe(worker, side=side)


# ---- the coordinator ------------------------------------------------------------------------

def execute_options(args: argparse.Namespace) -> transfer.ExecuteOptions:
    """The executor's options the command line chose."""
    return transfer.ExecuteOptions(stage_below=args.stage_below, batch_segments=args.batch_segments,
                                   max_in_flight=args.max_in_flight)


def choose_mode(bound: wm.BoundPlan, mode: str, options: transfer.ExecuteOptions) -> str:
    """``auto``: the mode that issues fewer engine operations for this plan."""
    if mode != "auto":
        return mode
    counts = {m: transfer.operation_count(bound, m, options) for m in ("push", "pull")}
    return "push" if counts["push"] <= counts["pull"] else "pull"


def run_engine(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, Any]:
    group = PipeGroup(timeout=args.timeout)
    coordinator = Coordinator(group)
    processes: dict[str, subprocess.Popen[bytes]] = {}
    logs = Path(config["workdir"])
    source, target = model.Layout(**config["source"]), model.Layout(**config["target"])
    try:
        for side, layout in (("source", source), ("target", target)):
            for rank in layout.ranks():
                me = worker_id(side, rank)
                worker_config = {**config, "side": side,
                                 "rank": {"dp": rank.dp, "tp": rank.tp, "pp": rank.pp, "ep": rank.ep}}
                with open(logs / f"{me}.log", "wb") as log:
                    processes[me] = group.spawn(
                        [sys.executable, __file__, "worker", json.dumps(worker_config)],
                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        progress(f"started {len(processes)} worker processes ({source} -> {target})")
        def lost() -> Optional[str]:
            for me, process in processes.items():
                if process.poll() is not None and me not in coordinator.peers:
                    tail = (logs / f"{me}.log").read_text(errors="replace").strip().splitlines()[-5:]
                    return f"worker {me} exited with {process.returncode} before connecting: " + " | ".join(tail)
            return None

        group.accept(lost=lost)
        reshard = coordinator.plan()
        bound = coordinator.bind(reshard)
        options = execute_options(args)
        mode = choose_mode(bound, args.mode, options)
        progress(f"planned {len(reshard.regions)} regions, {len(bound.pairs)} worker pairs; mode {mode}")
        targets, sources = coordinator.workers("target"), coordinator.workers("source")
        if args.fault == "stale-generation":
            coordinator.request_all([targets[0]], {"op": "set", "generation": config["generation"] + 1})
        elif args.fault == "changed-lease":
            coordinator.request_all([targets[0]], {"op": "set", "lease_id": "target-lease-2"})
        elif args.fault == "kill-target":
            victim = processes[targets[0]].pid
            armed = [targets[0]] if mode == "pull" else sources
            coordinator.request_all(armed, {"op": "arm", "pid": victim})
        if args.fault == "corrupt-byte":
            # Between the transfer and the content check: the update must not verify.
            corrupt = lambda: coordinator.request_all([targets[0]], {"op": "corrupt"})  # noqa: E731
            coordinator.update(bound, mode=mode, options=options, verify="verify", after_transfer=corrupt)
            raise failure("transfer_failed", "the corrupted update verified")
        if not args.no_raw:
            # The baseline: one contiguous read of the same byte count, target 0 <- source 0,
            # into and out of buffers allocated (and touched) once.
            size = sum(p.bytes for p in bound.pairs)
            address = coordinator.request_all([sources[0]], {"op": "allocate", "bytes": size})[sources[0]]["address"]
            raw_request = {"op": "raw", "bytes": size, "session": coordinator.peers[sources[0]].session,
                           "address": address}
        # Each repetition starts from zeroed targets, so each one moves (and verifies) every
        # byte; update and baseline alternate, so drifting load hits both alike.
        # Each repetition also runs the same update with the content check off: the cost of
        # verifying, in the same run.
        updates, raws, verifies, unverified = [], [], [], []
        tensors = len(coordinator.side("source").placement.tensors)
        verified = True
        for repetition in range(args.repeat):
            if repetition:
                coordinator.request_all(targets, {"op": "clear"})
            unverified.append(coordinator.update(bound, mode=mode, options=options, verify_content=False)["seconds"])
            coordinator.request_all(targets, {"op": "clear"})
            result = coordinator.update(bound, mode=mode, options=options, verify="verify")
            verified = verified and checked(result, tensors, targets, full=True)
            updates.append(result["seconds"])
            verifies.append(result["verify_seconds"])
            if not args.no_raw:
                raws.append(coordinator.request_all([targets[0]], raw_request)[targets[0]]["seconds"])
        for pair in result["pairs"]:
            progress(f"  {pair['source_worker_id']} -> {pair['target_worker_id']}: {pair['bytes']} B, "
                     f"{pair['segments']} ops, {pair['seconds']:.2f} s (wait {pair['wait_seconds']:.2f}, "
                     f"staging {pair['staging_seconds']:.2f})")
        progress(f"moved {result['bytes']} bytes in {result['segments']} engine operations "
                 f"({result['runs']} runs, {result['staged_pieces']} staged pieces); seconds per update "
                 f"{[round(u, 3) for u in updates]}, per raw transfer {[round(r, 3) for r in raws]}")
        result["seconds"] = statistics.median(updates)
        raw = statistics.median(raws) if raws else None
        out = summary(result, mode, raw)
        out["verify_seconds"] = round(statistics.median(verifies), 4)
        out["unverified_seconds"] = round(statistics.median(unverified), 4)
        out["verified"] = verified
        if args.delta:
            # The next generation: sources snapshot their blocks, change args.delta % of
            # them, and only the changed bytes move; content and bytes verified again.
            coordinator.snapshot()
            counts = coordinator.request_all([*sources, *targets],
                                             {"op": "mutate", "fraction": args.delta / 100, "block": 64})
            delta = coordinator.update(bound, mode=mode, options=options, verify="verify", delta=True)
            out["verified"] = out["verified"] and checked(delta, tensors, targets, full=False)
            out["delta_expected_bytes"] = 4 * sum(counts[t]["elements"] for t in targets)
            progress(f"delta: {delta['bytes']} of {result['bytes']} bytes in {delta['segments']} operations, "
                     f"{delta['seconds']:.2f} s (finding the changed blocks {delta['changed_seconds']:.2f} s, "
                     f"workers {[round(w['seconds'], 3) for w in delta['workers'].values()]})")
            out.update(delta_bytes=delta["bytes"], delta_fraction=round(delta["bytes"] / result["bytes"], 5),
                       delta_seconds=round(delta["seconds"] - delta["changed_seconds"], 4),
                       delta_changed_seconds=round(delta["changed_seconds"], 4),
                       delta_total_seconds=round(delta["seconds"], 4), delta_wire_bytes=delta["wire_bytes"],
                       delta_verify_seconds=round(delta["verify_seconds"], 4))
        return out
    finally:
        coordinator.stop()
        for me, process in processes.items():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def checked(result: dict[str, Any], tensors: int, targets: list[str], full: bool) -> bool:
    """Whether an update's checks covered it all: the coordinator compared the content
    digests of all ``tensors``, and every target checked every byte it holds (after a
    full update, the bytes that moved)."""
    checks = result["target_checks"]
    return (result["verified_tensors"] == tensors and sorted(checks) == sorted(targets)
            and (not full or sum(c["verified"] for c in checks.values()) == result["bytes"]))


def run_local(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, Any]:
    """Both sides in this process, copied by the local backend."""
    backend = transfer.LocalBackend()
    sides: dict[str, list[Held]] = {}
    inventories: dict[str, list[dict[str, Any]]] = {}
    for side in ("source", "target"):
        layout = model.Layout(**config[side])
        sides[side] = [Held(config, side, rank) for rank in layout.ranks()]
        inventories[side] = []
        for held in sides[side]:
            me = worker_id(side, held.rank)
            inventory = live.runtime_inventory(held.tensors, worker_id=me, endpoint=me, **held.where)
            inventories[side].append(inventory)
            for tensor in held.tensors.values():
                backend.register(int(tensor.ctypes.data), tensor.nbytes)
    source, target = Side(inventories["source"]), Side(inventories["target"])
    reshard = wm.plan(source.placement, target.placement)
    bound = wm.bind_plan(reshard, source.binding, target.binding, source_generation=source.binding.generation,
                         target_generation=target.binding.generation)
    options = execute_options(args)
    mode = choose_mode(bound, args.mode, options)
    sessions = {w: w for side in inventories.values() for inv in side for w in {r["worker_id"] for r in inv["tensors"]}}
    report = transfer.execute(bound, backend, sessions, mode=mode, source=source.binding, target=target.binding,
                              options=options)
    if args.fault == "corrupt-byte":
        first = sides["target"][0]
        first.tensors[sorted(first.tensors)[0]].view(np.uint8).reshape(-1)[7] ^= 0x5A
    # The content check, as the coordinator runs it: digests combined from each side's
    # partials, tensor by tensor.
    verify_started = time.perf_counter()
    digests = {
        side: content.digests(r for held, inventory in zip(sides[side], inventories[side])
                              for r in content.partials(held.tensors, inventory))
        for side in ("source", "target")
    }
    checked = content.check(digests["source"], digests["target"], code="transfer_verify_failed",
                            when="after the update", against="the sources'", outcome="no target is ready")
    verify_seconds = time.perf_counter() - verify_started
    checked_bytes = 0
    for held in sides["target"]:
        problem = held.check()
        if problem is not None:
            raise failure("transfer_verify_failed", f"{worker_id('target', held.rank)}: {problem}; not ready")
        checked_bytes += sum(t.nbytes for t in held.tensors.values())
    result = {"bytes": report.bytes, "segments": report.segments, "seconds": report.seconds,
              "runs": sum(p.runs for p in report.pairs), "verify_seconds": verify_seconds}
    raw = None
    if not args.no_raw:
        a, b = np.ones(report.bytes, np.uint8), np.zeros(report.bytes, np.uint8)
        started = time.perf_counter()
        ctypes.memmove(b.ctypes.data, a.ctypes.data, report.bytes)
        raw = time.perf_counter() - started
    out = summary(result, mode, raw)
    out["verify_seconds"] = round(verify_seconds, 4)
    # What the checks above covered: every tensor's digest, every target byte.
    out["verified"] = (len(digests["target"]) == len(source.placement.tensors) == len(checked)
                       and checked_bytes == report.bytes)
    return out


def summary(result: dict[str, Any], mode: str, raw: Optional[float]) -> dict[str, Any]:
    gib = result["bytes"] / GIB
    return {
        "verified": False,  # the caller sets it from the checks it ran
        "bytes": result["bytes"],
        "segments": result["segments"],
        "seconds": round(result["seconds"], 4),
        "gib_per_s": round(gib / result["seconds"], 3) if result["seconds"] else None,
        "raw_te_gib_per_s": round(gib / raw, 3) if raw else None,
        "mode": mode,
        "runs": result["runs"],
    }


def progress(message: str) -> None:
    print(f"[reshard-te] {message}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["worker"]:
        run_worker(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("synthetic", "minilm"), default="synthetic")
    parser.add_argument("--source", default="tp4,pp2", help="source layout, e.g. tp4,pp2 (default)")
    parser.add_argument("--target", default="tp2,pp4", help="target layout, e.g. tp2,pp4 (default)")
    parser.add_argument("--size-mib", type=int, default=1024, help="synthetic model size (default 1024)")
    parser.add_argument("--experts", type=int, default=0, help="experts per layer (EP split), synthetic")
    parser.add_argument("--backend", choices=("engine", "local"), default="engine")
    parser.add_argument("--mode", choices=("auto", "push", "pull"), default="auto")
    parser.add_argument("--fault", choices=FAULTS, help="inject one fault (the run must fail)")
    parser.add_argument("--stage-below", type=int, default=transfer.DEFAULT_STAGE_BELOW)
    parser.add_argument("--batch-segments", type=int, default=transfer.DEFAULT_BATCH_SEGMENTS)
    parser.add_argument("--max-in-flight", type=int, default=transfer.DEFAULT_MAX_IN_FLIGHT)
    parser.add_argument("--no-raw", action="store_true", help="skip the raw-transfer baseline")
    parser.add_argument("--delta", type=float, default=0.0,
                        help="then change this percentage of the blocks and run a delta update (synthetic)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="updates (each from zeroed targets, each verified) and baselines; medians reported")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for any worker")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reshard-te-") as workdir:
        config: dict[str, Any] = {
            "model": args.model, "size_mib": args.size_mib, "experts": args.experts, "generation": 1,
            "source": model.Layout.parse(args.source).__dict__, "target": model.Layout.parse(args.target).__dict__,
            "workdir": workdir,
        }
        if args.model == "minilm":
            model.minilm_file(Path(workdir))  # extracted once, before any worker reads it
        if args.fault == "short-buffer":
            # Both first workers register too little, so the remote side of either mode
            # (targets for push, sources for pull) is short.
            config["short"] = [worker_id(side, model.Layout(**config[side]).ranks()[0]) for side in ("source", "target")]
        if args.backend == "local" and args.fault not in (None, "corrupt-byte"):
            parser.error("--backend local takes only --fault corrupt-byte (the other faults need processes)")
        try:
            run = run_engine if args.backend == "engine" else run_local
            result = run(args, config)
        except wm.ManifestError as error:
            print(f"error: [{error.code}] {error}", file=sys.stderr)
            return 1
    print(json.dumps(result))
    return 0 if result["verified"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
