"""The driver of the multi-host tests (test_hosts.py), run inside host 0 of the emulated
cluster by ``scripts/hosts.sh exec 0``: ``python hosts_driver.py SCENARIO ARGS_JSON``
prints one JSON line of what happened. The members are Ray actors adopting the member
role (GroupMember); every byte they hold is checked against the synthetic model's
defining function (examples/reshard-te/model.py), independently of the planner, the
executor and the content digests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "reshard-te"))
sys.path.insert(0, str(ROOT / "examples" / "multi-host"))

import ray  # noqa: E402
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

import model  # noqa: E402
from ranks import Rank  # noqa: E402
import weight_manifest as wm  # noqa: E402
from weight_manifest_runtime.group import Coordinator, Member  # noqa: E402
from weight_manifest_runtime.transfer import ExecuteOptions  # noqa: E402
from weight_manifest_runtime.group.ray import RayGroup, new_key  # noqa: E402

HOSTS = ROOT / "scripts" / "hosts.sh"
NET = os.environ["WM_HOSTS_NET"]
SIZE = 16 << 20


def address(host: int) -> str:
    return f"{NET}.{host + 1}"


def hosts(*args: str) -> None:
    subprocess.run([str(HOSTS), *args], check=True, capture_output=True)


def nodes() -> dict[str, str]:
    return {n["NodeManagerAddress"]: n["NodeID"] for n in ray.nodes() if n["Alive"]}


def start(group: str, key: str, side: str, instance: str, layout: model.Layout, where: dict[int, int],
          fill: bool, generation: Optional[int] = None) -> dict[str, Any]:
    """One actor per rank of ``layout``; rank i (in Layout.ranks order) on host where[i]."""
    placed = nodes()
    remote = ray.remote(num_cpus=0, max_restarts=0)(Rank)
    actors = {}
    for i, rank in enumerate(layout.ranks()):
        node = placed[address(where[i])]
        actor = remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
            group, key, side, instance, layout.__dict__, {"dp": rank.dp, "tp": rank.tp, "pp": rank.pp, "ep": rank.ep},
            fill, SIZE, generation=generation)
        actors[f"{instance}-pp{rank.pp}.tp{rank.tp}"] = actor
    ray.get([a.pid.remote() for a in actors.values()])
    return actors


def setup(name: str, stages: Optional[dict[int, int]] = None) -> tuple[Coordinator, RayGroup, str, dict[str, Any], dict[str, Any]]:
    """Sources TP2 on host 0, targets ``rollout-a`` TP1/PP2: stage 0 on host 1, 1 on host 2
    (or as ``stages`` puts them)."""
    key = new_key()
    group = RayGroup(name, key, timeout=120, ping_timeout=8)
    sources = start(name, key, "source", "trainer", model.Layout(tp=2), {0: 0, 1: 0}, True)
    targets = start(name, key, "target", "rollout-a", model.Layout(pp=2), stages or {0: 1, 1: 2}, False)
    group.wait_for(len(sources) + len(targets))
    group.refresh()
    return Coordinator(group), group, key, sources, targets


def update(coordinator: Coordinator, targets: list[str], **kwargs: Any) -> dict[str, Any]:
    bound = coordinator.bind(coordinator.plan(targets=targets), targets=targets)
    return coordinator.update(bound, verify="verify", **kwargs)


def chain() -> dict[str, Any]:
    """A verified update across hosts; a slow link (progress shows); a late joiner brought
    to the current version by a peer before it serves; a member that leaves is dropped and
    the next update runs without restarting the others."""
    out: dict[str, Any] = {}
    coordinator, group, key, sources, targets = setup("chain")
    a = sorted(targets)
    first = update(coordinator, a)
    coordinator.activate(a, 1)
    out["update"] = {"bytes": first["bytes"], "sessions": {w: m.session for w, m in coordinator.peers.items()},
                     "hosts": {w: m.host for w, m in coordinator.peers.items()}}
    # Slow link: host 0's uplink at 40 Mbit/s; the update takes seconds and reports progress.
    coordinator.request_all([*sources, *a], {"op": "mutate", "fraction": 0.5, "block": 64})
    seen: list[list[list[Any]]] = []
    hosts("shape", "40mbit", "0")
    try:
        clock = time.monotonic()
        slow = update(coordinator, a, on_progress=lambda pairs: seen.append(pairs))
        out["slow"] = {"seconds": time.monotonic() - clock, "bytes": slow["bytes"],
                       "progress": [sum(p[2] for p in pairs) for pairs in seen],
                       "total": sum(p["bytes"] for p in slow["pairs"])}
    finally:
        hosts("unshape")
    coordinator.activate(a, 2)
    # A late joiner: instance rollout-b (TP2, one rank on host 1, one on host 2).
    late = start("chain", key, "target", "rollout-b", model.Layout(tp=2), {0: 1, 1: 2}, False)
    joined, left = coordinator.refresh()
    b = sorted(late)
    before = {w: coordinator.request_all([w], {"op": "ping"})[w]["version"] for w in b}
    coordinator.request_all(b, {"op": "mutate", "fraction": 0.5, "block": 64})
    caught = coordinator.catch_up(b, a, 2)
    coordinator.request_all(b, {"op": "verify"})
    after = {w: coordinator.request_all([w], {"op": "ping"})[w]["version"] for w in b}
    out["late"] = {"joined": joined, "left": left, "before": before, "after": after, "bytes": caught["bytes"],
                   "from": sorted({p["source_worker_id"] for p in caught["pairs"]})}
    # rollout-b leaves (its actors end); the next update goes to rollout-a alone.
    pids = {w: ray.get(targets[w].pid.remote()) for w in a}
    for actor in late.values():
        ray.kill(actor)
    time.sleep(1)
    joined, left = coordinator.refresh()
    # The third version: the same change once more (an XOR) brings the sources back to the
    # model's first weights, which the targets then expect.
    coordinator.request_all([*sources], {"op": "mutate", "fraction": 0.5, "block": 64})
    coordinator.request_all(a, {"op": "mutate", "fraction": 0.0, "block": 64})
    third = update(coordinator, sorted(w for w in coordinator.workers("target")))
    out["leave"] = {"joined": joined, "left": left, "members": sorted(coordinator.peers), "bytes": third["bytes"],
                    "same_pids": pids == {w: ray.get(targets[w].pid.remote()) for w in a}}
    return out


def failure(code: str, run: Any) -> dict[str, Any]:
    try:
        run()
    except wm.ManifestError as error:
        return {"code": error.code, "message": str(error), "path": error.path}
    return {"code": None}


def kill() -> dict[str, Any]:
    """Host 2 crashes mid-update: the worker and host are named, nothing is activated."""
    coordinator, group, key, sources, targets = setup("kill")
    a = sorted(targets)
    hosts("shape", "40mbit", "0")
    timer = threading.Timer(1.5, lambda: hosts("kill", "2"))
    timer.start()
    clock = time.monotonic()
    try:
        result = failure("transfer_worker_lost", lambda: update(coordinator, a))
    finally:
        timer.join()
        hosts("unshape")
    result["seconds"] = time.monotonic() - clock
    survivor = [w for w in a if coordinator.peers[w].host == address(1)][0]
    result["survivor_version"] = coordinator.request_all([survivor], {"op": "ping"})[survivor]["version"]
    result["victim"] = [w for w in a if coordinator.peers[w].host == address(2)][0]
    return result


def link() -> dict[str, Any]:
    """Host 2's link goes down mid-transfer: a timeout naming the pair within the bound.
    Stage 0, whose pairs run first, is on host 2, so the cut falls inside its transfer."""
    coordinator, group, key, sources, targets = setup("link", {0: 2, 1: 1})
    a = sorted(targets)
    hosts("shape", "40mbit", "0")
    down = [0.0]

    def cut() -> None:
        down[0] = time.monotonic()
        hosts("link", "2", "down")

    timer = threading.Timer(1.0, cut)
    timer.start()
    try:
        result = failure("transfer_timeout", lambda: update(coordinator, a, options=ExecuteOptions(stall_seconds=3.0)))
        result["seconds_after_cut"] = time.monotonic() - down[0]
    finally:
        timer.join()
        hosts("link", "2", "up")
        hosts("unshape")
    result["victim"] = [w for w in a if coordinator.peers[w].host == address(2)][0]
    time.sleep(1)
    result["alive_after"] = coordinator.alive(a)
    return result


def lifecycle() -> dict[str, Any]:
    """Versioned delta updates across hosts (the fault campaign's share on emulated hosts):
    a slowed link (the update commits), then host 2's link cut mid-transfer (a timeout
    naming the pair; the reachable target rolls back, host 2's when its link is back). Each
    target's bytes are checked by its own handler against the model's defining function."""
    import tempfile

    from weight_manifest_runtime.lifecycle import DecisionLog, VersionedUpdate

    out: dict[str, Any] = {}
    key = new_key()
    group = RayGroup("lifecycle", key, timeout=60, ping_timeout=5)
    sources = start("lifecycle", key, "source", "trainer", model.Layout(tp=2), {0: 0, 1: 0}, True)
    targets = start("lifecycle", key, "target", "rollout-a", model.Layout(pp=2), {0: 2, 1: 1}, True, generation=1)
    group.wait_for(len(sources) + len(targets))
    group.refresh()
    coordinator = Coordinator(group)
    log = DecisionLog(tempfile.mkdtemp(prefix="wm-lifecycle-"), "lifecycle")
    a = sorted(targets)
    bound = coordinator.bind(coordinator.plan(targets=a), targets=a)

    def statuses() -> dict[str, Any]:
        return {w: {k: s[k] for k in ("active", "serving", "state")}
                for w, s in coordinator.request_all(a, {"op": "lc_status"}).items()}

    # Generation 2 over a slowed link (host 0's uplink at 40 Mbit/s): it commits.
    coordinator.snapshot()
    coordinator.request_all(list(sources), {"op": "mutate", "fraction": 0.5, "block": 64})
    hosts("shape", "40mbit", "0")
    try:
        clock = time.monotonic()
        out["slow"] = VersionedUpdate(coordinator, log).run(bound, 2, mode="delta")
        out["slow"]["seconds"] = time.monotonic() - clock
    finally:
        hosts("unshape")
    coordinator.request_all(a, {"op": "mutate", "fraction": 0.5, "block": 64})  # what they must hold now
    out["after_slow"] = statuses()
    out["after_slow_verify"] = failure("", lambda: coordinator.request_all(a, {"op": "verify"}))
    # Generation 3 (the same change again: the model's first weights) with host 2's link
    # cut mid-transfer: a timeout; the reachable target rolls back to 2 at once, host 2's
    # when its link is back (the record's recovery).
    coordinator.snapshot()
    coordinator.request_all(list(sources), {"op": "mutate", "fraction": 0.5, "block": 64})
    hosts("shape", "40mbit", "0")
    down = [0.0]

    def cut() -> None:
        down[0] = time.monotonic()
        hosts("link", "2", "down")

    timer = threading.Timer(1.0, cut)
    timer.start()
    try:
        out["cut"] = failure("transfer_timeout", lambda: VersionedUpdate(coordinator, log).run(
            bound, 3, mode="delta", options=ExecuteOptions(stall_seconds=3.0)))
        out["cut"]["seconds_after_cut"] = time.monotonic() - down[0]
    finally:
        timer.join()
        hosts("unshape")
    reachable = [w for w in a if coordinator.peers[w].host != address(2)]
    out["during"] = {w: s for w, s in coordinator.request_all(reachable, {"op": "lc_status"}).items()}
    hosts("link", "2", "up")
    time.sleep(3)  # the abandoned batches towards host 2 drain once its link is back
    out["recovered"] = VersionedUpdate(coordinator, log, takeover=True).recover()
    out["after_cut"] = statuses()
    out["after_cut_verify"] = failure("", lambda: coordinator.request_all(a, {"op": "verify"}))
    out["victim"] = [w for w in a if coordinator.peers[w].host == address(2)][0]
    return out


def auth() -> dict[str, Any]:
    """Who gets in: processes without the token, callers without the group's key, a
    request fenced at another generation, and what the engine's port lets anyone do."""
    import grpc

    out: dict[str, Any] = {}
    coordinator, group, key, sources, targets = setup("auth")
    a = sorted(targets)
    # Raw gRPC to the GCS, as anyone on the network could: refused without the token.
    token = Path(os.environ["RAY_AUTH_TOKEN_PATH"]).read_text().strip()
    channel = grpc.insecure_channel(os.environ["WM_RAY_ADDRESS"])
    call = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo")
    codes = {}
    for label, metadata in (("none", ()), ("wrong", (("authorization", "Bearer " + "0" * 64),)),
                            ("token", (("authorization", f"Bearer {token}"),))):
        try:
            call(b"", metadata=metadata, timeout=5)
            codes[label] = "OK"
        except grpc.RpcError as error:
            codes[label] = error.code().name
    out["gcs"] = codes
    # A Ray client without the token, and with a wrong one, from host 1 (in parallel).
    probe = ("import os, ray, sys\n"
             "try:\n    ray.init(address=os.environ['WM_RAY_ADDRESS'])\n    print('joined')\n"
             "except Exception as e:\n    print('refused', type(e).__name__)\n")
    env_none = ["env", "-u", "RAY_AUTH_TOKEN_PATH", "-u", "RAY_AUTH_MODE"]
    env_wrong = ["env", "-u", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=" + "1" * 64]
    runs = {label: subprocess.Popen([str(HOSTS), "exec", "1", *env, sys.executable, "-c", probe],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            for label, env in (("no_token", env_none), ("wrong_token", env_wrong))}
    # In the cluster but not of the group: every call without the key is refused.
    member = targets[a[0]]
    out["no_key_call"] = ray.get(member.wm_call.remote("f" * 64, "inventory", {}))["error"]["code"]
    from weight_manifest_runtime.group.ray import REGISTRY_PREFIX

    registry = ray.get_actor(REGISTRY_PREFIX + "auth")
    out["no_key_join"] = ray.get(registry.join.remote("f" * 64, {"worker_id": "intruder"}))["error"]["code"]
    out["no_key_members"] = ray.get(registry.members.remote("f" * 64))["error"]["code"]
    # With the key, a transfer request is still held to the member's fence: a bound plan
    # bound before its generation moved is refused, and nothing is written.
    bound = coordinator.bind(coordinator.plan(targets=a), targets=a)
    coordinator.request_all([a[0]], {"op": "set", "generation": 2})
    reply = ray.get(member.wm_call.remote(key, "execute", {
        "bound_plan": bound.to_json(), "mode": "pull", "sessions": {w: m.session for w, m in coordinator.peers.items()}}))
    out["stale_fence"] = reply["error"]
    out["untouched"] = not any(ray.get(member.first_bytes.remote(4096)))
    # The Transfer Engine's port, from a process of no group and no Ray (host 1): it
    # writes into and reads from a member's registered memory.
    target_session = coordinator.peers[a[0]].session
    target_address, _ = ray.get(member.region.remote())
    source = sorted(sources)[0]
    source_address, _ = ray.get(sources[source].region.remote())
    outsider = subprocess.run([str(HOSTS), "exec", "1", "env", "-u", "RAY_AUTH_TOKEN_PATH", sys.executable,
                               str(Path(__file__).with_name("te_outsider.py")), address(1), target_session,
                               str(target_address), coordinator.peers[source].session, str(source_address)],
                              capture_output=True, text=True, timeout=60)
    out["outsider"] = json.loads(outsider.stdout.strip().splitlines()[-1]) if outsider.stdout.strip() else outsider.stderr[-500:]
    out["written_by_outsider"] = ray.get(member.first_bytes.remote(16))
    out["source_first"] = ray.get(sources[source].first_bytes.remote(16))
    for label, process in runs.items():
        stdout, _ = process.communicate(timeout=90)
        out[label] = stdout.strip().splitlines()[-1] if stdout.strip() else "no output"
    return out


def main(argv: list[str]) -> int:
    scenario = argv[0]
    ray.init(address=os.environ["WM_RAY_ADDRESS"], logging_level="ERROR", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": f"{ROOT / 'examples' / 'reshard-te'}:{ROOT / 'examples' / 'multi-host'}"}})
    try:
        result = {"chain": chain, "kill": kill, "link": link, "auth": auth, "lifecycle": lifecycle}[scenario]()
    finally:
        ray.shutdown()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
