"""Save a model to Mooncake Store from one layout and restore it into another, verified.

Starts ``mooncake_master`` and a store holder (``mooncake_client``) on free ports of
127.0.0.1, one process per source rank holding a synthetic model (default 512 MiB, TP4/PP2)
as live numpy tensors, and one per target rank (default TP2/PP4) holding zeros; saves the
sources' weights (``weight_manifest_runtime.store.save``: packed objects, content digests, the
manifest last), restores them into the targets (``store.restore``: planned from the stored
manifest, read straight into the targets' registered tensors, content digests checked), has
every target check every byte, and prints as its last line one JSON object
``{"verified": true, "bytes": N, "save_gib_per_s": X, "restore_gib_per_s": Y,
"raw_get_gib_per_s": Z, "raw_put_gib_per_s": P, ...}`` (P: one plain ``put_from`` of the
same byte count from a registered buffer, once, then Z: one plain ``get_into`` of it by a
target process, in the same run). Every process it starts is stopped.

    python store_roundtrip.py                          # 512 MiB, TP4/PP2 -> TP2/PP4
    python store_roundtrip.py --size-mib 64 --source tp2,pp2 --target tp1,pp4
    python store_roundtrip.py --fault missing-object   # fails closed, then retries

With ``--fault``, the first attempt must fail with the fault's code (printed as
``fault: [code] message``), nothing is reported restored, and then the example repairs
what the fault broke and retries; the last line then also carries ``"fault"`` and
``"fault_code"``. Any other failure prints ``error: [code] message`` and exits 1.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "reshard-te"))

import model  # noqa: E402
from reshard_te import KillSwitch, failure  # noqa: E402
import weight_manifest as wm  # noqa: E402
from weight_manifest_runtime import store, transfer  # noqa: E402
from weight_manifest_runtime.local_store import LocalStore  # noqa: E402
from weight_manifest_runtime.group import Coordinator, Member, PipeGroup, serve_pipe  # noqa: E402

FAULTS = {
    "missing-object": "store_object_missing",
    "short-object": "store_object_short",
    "manifest-digest": "store_manifest_digest_mismatch",
    "kill-save": "transfer_worker_lost",
    "master-stop": "transfer_failed",
    "corrupt": "store_verify_failed",
}
GIB = float(1 << 30)
NAMESPACE = "store-roundtrip"


def worker_id(side: str, rank: wm.ParallelRank) -> str:
    return f"{side}-dp{rank.dp}.pp{rank.pp}.tp{rank.tp}.ep{rank.ep}"


def progress(message: str) -> None:
    print(f"[store-roundtrip] {message}", file=sys.stderr, flush=True)


# ---- the worker process -------------------------------------------------------------------

class FaultyStoreBackend(KillSwitch, store.StoreBackend):
    """The Store backend with the faults' switches: die after putting the first object
    (kill-save); kill a process (the master) after the first completed read batch."""

    die_after_first_put = False

    def put(self, objects: Any) -> int:
        if self.die_after_first_put:
            super().put(objects[:1])
            os.kill(os.getpid(), signal.SIGKILL)
        return super().put(objects)


def run_worker(config: dict[str, Any]) -> None:
    from mooncake.store import MooncakeDistributedStore

    side = config["side"]
    rank = wm.ParallelRank(**config["rank"])
    layout = model.Layout(**config[side])
    specs = model.synthetic_tensors(config["size_mib"] << 20)
    shard = model.synthetic_shard(specs, layout, rank, side == "source")
    tensors = shard["tensors"]
    client = MooncakeDistributedStore()
    if client.setup("127.0.0.1", config["metadata_url"], 0, 16 << 20, "tcp", "", config["master"]) != 0:
        raise SystemExit("error: the Store client did not connect")
    backend = FaultyStoreBackend(client, threads=config["store_threads"])
    me = worker_id(side, rank)
    scratch: list[np.ndarray] = []

    def verify(_: dict[str, Any]) -> dict[str, Any]:
        problem = model.synthetic_check(specs, layout, rank, tensors)
        if problem is not None:
            raise failure("store_verify_failed", f"{me}: {problem}; this target is not ready")
        return {"verified": sum(t.nbytes for t in tensors.values())}

    def clear(_: dict[str, Any]) -> dict[str, Any]:
        for tensor in tensors.values():
            tensor.view(np.uint8).fill(0)
        return {}

    def corrupt(_: dict[str, Any]) -> dict[str, Any]:
        name = sorted(tensors)[0]
        tensors[name].view(np.uint8).reshape(-1)[7] ^= 0x5A
        return {"tensor": name}

    def arm(request: dict[str, Any]) -> dict[str, Any]:
        if "kill_pid" in request:
            backend.kill_pid = int(request["kill_pid"])
        backend.die_after_first_put = bool(request.get("die_after_first_put", False))
        return {}

    def raw(request: dict[str, Any]) -> dict[str, Any]:
        # The baselines: one object of the restore's byte count, put once with one plain
        # put_from from a registered buffer of this process (timed: the raw put, measured
        # once, as the save is), then read back with one plain get_into per call. (An
        # object just read is leased: it cannot be removed and put again at once.)
        size, key = int(request["bytes"]), str(request["key"])
        put_seconds = None
        if not scratch:
            buffer = np.ones(size, dtype=np.uint8)
            scratch.append(buffer)
            backend.register(int(buffer.ctypes.data), size)
            started = time.perf_counter()
            if client.put_from(key, int(buffer.ctypes.data), size) != 0:
                raise failure("store_failed", f"the baseline object {key} was not stored")
            put_seconds = time.perf_counter() - started
        buffer = scratch[0]
        started = time.perf_counter()
        got = client.get_into(key, int(buffer.ctypes.data), size)
        seconds = time.perf_counter() - started
        if got != size:
            raise failure("store_failed", f"the baseline get_into returned {got}")
        return {"seconds": seconds, "put_seconds": put_seconds}

    worker = Member(tensors, backend=backend, session=me,
                    handlers={**store.handlers(backend), "verify": verify, "clear": clear, "corrupt": corrupt,
                              "arm": arm, "raw": raw},
                    worker_id=me, endpoint=me, rank=rank, instance_id=f"{side}-instance",
                    lease_id=f"{side}-lease-1", generation=1, **shard["where"])
    try:
        serve_pipe(worker, side=side)
    finally:
        for buffer in scratch:
            backend.unregister(int(buffer.ctypes.data))
        backend.close()
        client.close()


# ---- the coordinator ------------------------------------------------------------------------

class Run:
    """The processes of one run: the store, a coordinator per side and their workers."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args, self.workdir = args, workdir
        self.layouts = {"source": model.Layout.parse(args.source), "target": model.Layout.parse(args.target)}
        self.store: Optional[LocalStore] = None
        self.client: Any = None
        self.coordinators: dict[str, Coordinator] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start_store(self) -> None:
        segment = 2 * (self.args.size_mib << 20) + (512 << 20)
        self.store = LocalStore(self.workdir, segment_bytes=segment).start()
        self.client = self.store.client()

    def stop_store(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.store is not None:
            self.store.stop()
            self.store = None

    def spawn(self, side: str, only: Optional[str] = None) -> None:
        """Start ``side``'s workers (or just ``only``) and wait for them to connect."""
        assert self.store is not None
        coordinator = self.coordinators.setdefault(side, Coordinator(PipeGroup(timeout=self.args.timeout)))
        group = coordinator.transport
        assert isinstance(group, PipeGroup)
        started = []
        for rank in self.layouts[side].ranks():
            me = worker_id(side, rank)
            if only is not None and me != only:
                continue
            config = {"side": side, "rank": {"dp": rank.dp, "tp": rank.tp, "pp": rank.pp, "ep": rank.ep},
                      "size_mib": self.args.size_mib,
                      "store_threads": self.args.store_threads,
                      "master": self.store.master_address, "metadata_url": self.store.metadata_url,
                      **{s: layout.__dict__ for s, layout in self.layouts.items()}}
            if me in self.processes:  # a restarted worker: reap the old process
                self.processes[me].wait()
            with open(self.workdir / f"{me}.log", "ab") as log:
                self.processes[me] = group.spawn([sys.executable, __file__, "worker", json.dumps(config)],
                                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            started.append(me)

        def lost() -> Optional[str]:
            for me in started:
                process = self.processes[me]
                if process.poll() is not None:
                    tail = (self.workdir / f"{me}.log").read_text(errors="replace").strip().splitlines()[-5:]
                    return f"worker {me} exited with {process.returncode} before connecting: " + " | ".join(tail)
            return None

        group.accept(lost=lost)

    def stop_side(self, side: str) -> None:
        coordinator = self.coordinators.pop(side, None)
        if coordinator is not None:
            coordinator.stop()
        for me in [m for m in self.processes if m.startswith(side)]:
            process = self.processes.pop(me)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop(self) -> None:
        for side in list(self.coordinators):
            self.stop_side(side)
        self.stop_store()

    def save(self) -> store.SaveReport:
        return store.save(self.coordinators["source"], self.client,
                          store.SaveOptions(NAMESPACE, weight_generation=1, max_object_bytes=self.args.max_object_mib << 20))

    def restore(self, saved: store.SaveReport, after_transfer: Any = None) -> store.RestoreReport:
        return store.restore(self.coordinators["target"], self.client, saved.manifest_key,
                             manifest_digest=saved.manifest_digest, after_transfer=after_transfer,
                             readers=self.args.readers)

    def resave(self, saved: store.SaveReport) -> store.SaveReport:
        """Repair a broken save: drop its manifest, save the group again."""
        self.client.remove(saved.manifest_key, True)
        return self.save()


def inject(run: Run, fault: str, saved: store.SaveReport) -> Any:
    """Break what ``fault`` breaks and attempt the step it makes fail."""
    client, targets = run.client, run.coordinators["target"].workers("target")
    manifest = store.read_manifest(client, saved.manifest_key, saved.manifest_digest)
    victim = manifest.fragments[0].object_key
    if fault == "missing-object":
        client.remove(victim, True)
    elif fault == "short-object":
        client.remove(victim, True)
        client.put(victim, b"\0" * 4096)
    elif fault == "manifest-digest":
        # Another, valid manifest under the key: a later save's, not the reported one.
        other = manifest.text.replace('"created_at":"', '"created_at":"1', 1)
        client.remove(saved.manifest_key, True)
        client.put(saved.manifest_key, other.encode())
    elif fault == "master-stop":
        assert run.store is not None and run.store.master is not None
        run.coordinators["target"].request_all(targets[:1], {"op": "arm", "kill_pid": run.store.master.pid})
    if fault == "corrupt":
        first = targets[:1]
        return run.restore(saved, after_transfer=lambda: run.coordinators["target"].request_all(first, {"op": "corrupt"}))
    return run.restore(saved)


def roundtrip(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    run = Run(args, workdir)
    try:
        run.start_store()
        run.spawn("source")
        run.spawn("target")
        sources, targets = run.coordinators["source"].workers("source"), run.coordinators["target"].workers("target")
        progress(f"started the store and {len(sources) + len(targets)} workers "
                 f"({run.layouts['source']} -> {run.layouts['target']})")
        out: dict[str, Any] = {}
        if args.fault == "kill-save":
            run.coordinators["source"].request_all(sources[:1], {"op": "arm", "die_after_first_put": True})
            try:
                run.save()
            except wm.ManifestError as error:
                out.update(fault=args.fault, fault_code=error.code)
                progress(f"fault: [{error.code}] {error}")
            else:
                raise failure("store_failed", "the save whose worker died succeeded")
            group = f"{NAMESPACE}/{model.SYNTHETIC_ID}/r1/1"
            try:
                run.restore(store.SaveReport(NAMESPACE, model.SYNTHETIC_ID, "r1", 1, group, f"{group}/manifest",
                                             "0" * 64, 0, 0, 0, 0.0))
            except wm.ManifestError as error:
                progress(f"restore after the killed save: [{error.code}] {error}")
                out["restore_after_kill_code"] = error.code
            run.spawn("source", only=sources[0])  # the retry: the worker is back
        saved = run.save()
        progress(f"saved {saved.bytes} bytes as {saved.objects} objects ({saved.fragments} fragments) in "
                 f"{saved.seconds:.2f} s")
        if args.fault is not None and args.fault != "kill-save":
            try:
                inject(run, args.fault, saved)
            except wm.ManifestError as error:
                out.update(fault=args.fault, fault_code=error.code)
                progress(f"fault: [{error.code}] {error}")
            else:
                raise failure("store_failed", f"the restore with fault {args.fault} succeeded")
            # The retry.
            if args.fault == "master-stop":
                run.stop_side("target")
                run.stop_side("source")
                run.stop_store()
                run.start_store()
                run.spawn("source")
                run.spawn("target")
                saved = run.save()
            elif args.fault in ("missing-object", "short-object", "manifest-digest"):
                saved = run.resave(saved)
            run.coordinators["target"].request_all(targets, {"op": "clear"})
        restores, raws, raw_puts = [], [], []
        tensors = len(run.coordinators["source"].side("source").placement.tensors)
        verified = True
        for repetition in range(args.repeat):
            if repetition:
                run.coordinators["target"].request_all(targets, {"op": "clear"})
            restored = run.restore(saved)
            checks = run.coordinators["target"].request_all(targets, {"op": "verify"})
            # What the checks covered: every tensor's digest (the restore's own check), and
            # every restored byte (each target's check of the bytes it holds).
            verified = (verified and restored.verified_tensors == tensors
                        and sum(c["verified"] for c in checks.values()) == restored.bytes)
            restores.append(restored.seconds)
            progress(f"restore {repetition + 1}: {restored.seconds:.3f} s, of which the transfer "
                     f"{restored.transfer_seconds:.3f} s; content check {restored.verify_seconds:.3f} s")
            if args.verbose:
                for w, figures in restored.workers.items():
                    progress(f"  {w}: {figures['seconds']:.3f} s, of which lowering {figures['prepare_seconds']:.3f} s")
                for pair in restored.pairs:
                    progress(f"  {pair['source_worker_id'].rsplit('/payload/', 1)[1]} -> {pair['target_worker_id']}: "
                             f"{pair['bytes']} B in {pair['segments']} ops, {pair['seconds']:.3f} s (wait "
                             f"{pair['wait_seconds']:.3f}, staging {pair['staging_seconds']:.3f})")
            if not args.no_raw:
                reply = run.coordinators["target"].request_all(
                    targets[:1], {"op": "raw", "bytes": restored.bytes, "key": f"{NAMESPACE}/raw-baseline"})
                raws.append(reply[targets[0]]["seconds"])
                if reply[targets[0]]["put_seconds"] is not None:
                    raw_puts.append(reply[targets[0]]["put_seconds"])
        progress(f"restored {restored.bytes} bytes in {restored.operations} Store operations "
                 f"({restored.regions} regions); seconds per restore {[round(s, 3) for s in restores]}, "
                 f"per raw get_into {[round(s, 3) for s in raws]}")
        restore_seconds = statistics.median(restores)
        raw = statistics.median(raws) if raws else None
        out = {
            "verified": verified,
            "bytes": restored.bytes,
            "save_gib_per_s": round(saved.bytes / GIB / saved.seconds, 3),
            "restore_gib_per_s": round(restored.bytes / GIB / restore_seconds, 3),
            "raw_get_gib_per_s": round(restored.bytes / GIB / raw, 3) if raw else None,
            "raw_put_gib_per_s": round(restored.bytes / GIB / statistics.median(raw_puts), 3) if raw_puts else None,
            "objects": saved.objects,
            "operations": restored.operations,
            "manifest_digest": saved.manifest_digest,
            **out,
        }
        return out
    finally:
        run.stop()


def main(argv: list[str]) -> int:
    # Mooncake's TCP transport would connect through the host's LAN address otherwise.
    os.environ.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")
    if argv[:1] == ["worker"]:
        run_worker(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="tp4,pp2", help="source layout (default tp4,pp2)")
    parser.add_argument("--target", default="tp2,pp4", help="target layout (default tp2,pp4)")
    parser.add_argument("--size-mib", type=int, default=512, help="synthetic model size (default 512)")
    parser.add_argument("--max-object-mib", type=int, default=store.DEFAULT_MAX_OBJECT_BYTES >> 20,
                        help="packed object size (0: one object per fragment)")
    parser.add_argument("--store-threads", type=int, default=transfer.DEFAULT_MAX_IN_FLIGHT,
                        help="ranged gets each target runs at once (default %(default)s)")
    # Every process of the example shares this host's cores: more readers at once than
    # cores only contend (measured on 2 cores: 2 readers 0.81-0.83 of the raw get, 8 0.47-0.63).
    parser.add_argument("--readers", type=int, default=os.cpu_count() or 1,
                        help="target workers reading at once (default: this host's CPU count, %(default)s)")
    parser.add_argument("--fault", choices=sorted(FAULTS), help="inject one fault, then retry")
    parser.add_argument("--repeat", type=int, default=1, help="restores (each into zeroed targets); medians")
    parser.add_argument("--verbose", action="store_true", help="each pair's figures on standard error")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw get_into baseline")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for any worker")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="store-roundtrip-") as workdir:
        try:
            result = roundtrip(args, Path(workdir))
        except wm.ManifestError as error:
            print(f"error: [{error.code}] {error}", file=sys.stderr)
            return 1
    print(json.dumps(result))
    return 0 if result["verified"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
