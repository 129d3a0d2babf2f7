"""A coordinator in a process of its own, for the tests that kill it (test_lifecycle_processes.py
and the campaign's process share): the members stay in the parent (a lifecycle_world.World),
which relays the child's calls to them over the child's standard input and output, one
JSON object a line. The child runs a versioned update (``update``), dying with SIGKILL at
``--die-at STEP`` (no cleanup, no flush: a real crash), or the recovery of a replacement
(``recover``); its last line is its result.

    python lifecycle_driver.py update|recover --log DIR [--die-at STEP] [--generation G] [--mode M]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any, Optional

from weight_manifest_runtime.group import Coordinator, LocalGroup, MemberInfo, Outcome, ProgressCallback


class RelayTransport:
    """The child's side: every call goes to the parent, which holds the members."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def _ask(self, message: dict[str, Any]) -> Any:
        with self._lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
            line = sys.stdin.readline()
        if not line:
            raise SystemExit("the parent went away")
        return json.loads(line)

    def members(self) -> dict[str, MemberInfo]:
        return {w: MemberInfo(**m) for w, m in self._ask({"members": True}).items()}

    def call_all(self, calls: Mapping[str, tuple[str, dict[str, Any]]], *, at_once: Optional[int] = None,
                 on_progress: Optional[ProgressCallback] = None) -> dict[str, Outcome]:
        got = self._ask({"call_all": {w: list(c) for w, c in calls.items()}})
        return {w: (o[0], o[1]) for w, o in got.items()}

    def refresh(self) -> tuple[list[str], list[str]]:
        return [], []

    def close(self) -> None:
        pass


def serve(group: LocalGroup, child: subprocess.Popen[str]) -> Optional[dict[str, Any]]:
    """The parent's side: answer the child until it ends; its result line (None if it
    died before one)."""
    assert child.stdin is not None and child.stdout is not None
    result = None
    for line in child.stdout:
        message = json.loads(line)
        if "result" in message:
            result = message["result"]
            continue
        if "members" in message:
            answer: Any = {w: {"worker_id": i.worker_id, "side": i.side, "session": i.session, "host": i.host,
                               "inventory": i.inventory} for w, i in group.members().items()}
        else:
            calls = {w: (str(c[0]), dict(c[1])) for w, c in message["call_all"].items()}
            answer = {w: list(o) for w, o in group.call_all(calls).items()}
        try:
            child.stdin.write(json.dumps(answer) + "\n")
            child.stdin.flush()
        except BrokenPipeError:
            break
    child.wait()
    return result


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def main() -> None:
    from weight_manifest_runtime.lifecycle import DecisionLog, VersionedUpdate

    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["update", "recover"])
    parser.add_argument("--log", required=True)
    parser.add_argument("--die-at")
    parser.add_argument("--generation", type=int, default=2)
    parser.add_argument("--mode", default="delta")
    args = parser.parse_args()

    def hook(step: str, worker: Optional[str]) -> None:
        if step == args.die_at:
            os.kill(os.getpid(), signal.SIGKILL)

    coordinator = Coordinator(RelayTransport())
    update = VersionedUpdate(coordinator, DecisionLog(args.log, "group-1"), on_step=hook,
                             name=f"{args.action}-{os.getpid()}")
    if args.action == "update":
        result: Any = update.run(coordinator.bind(coordinator.plan()), args.generation, mode=args.mode)
    else:
        result = update.recover()
    sys.stdout.write(json.dumps({"result": result}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
