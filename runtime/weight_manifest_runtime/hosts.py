"""The emulated cluster of ``scripts/hosts.sh`` from Python (tests and benchmarks): network
namespaces on a bridge, Ray with token authentication and a Mooncake master. Needs root
(CAP_NET_ADMIN). The prefix and the /24 come from ``WM_HOSTS_PREFIX`` / ``WM_HOSTS_NET``
(defaults ``wm`` and ``198.18.0``), so parallel sessions use their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

__all__ = ["Cluster"]



class Cluster:
    """``n`` hosts. :meth:`up` starts them (removing stale ones of the prefix first),
    :meth:`down` removes every process, veth and namespace; :meth:`run` runs a command
    in a host with the cluster's environment (the token, its own HOME and temp dir)."""

    def __init__(self, n: int, *, script: Path, python: str = sys.executable, store_bytes: int = 0,
                 prefix: Optional[str] = None, net: Optional[str] = None) -> None:
        self.n, self.script = n, Path(script)
        self.env = {**os.environ, "WM_PYTHON": python, "WM_STORE_BYTES": str(store_bytes)}
        if prefix is not None:
            self.env["WM_HOSTS_PREFIX"] = prefix
        if net is not None:
            self.env["WM_HOSTS_NET"] = net
        self.prefix = self.env.get("WM_HOSTS_PREFIX", "wm")
        self.net = self.env.get("WM_HOSTS_NET", "198.18.0")
        self.up_seconds = self.down_seconds = 0.0

    def address(self, host: int) -> str:
        return f"{self.net}.{host + 1}"

    def _hosts(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.script), *args], env=self.env, capture_output=True, text=True, check=check)

    def up(self) -> "Cluster":
        started = time.monotonic()
        done = self._hosts("up", str(self.n), check=False)
        if done.returncode != 0:
            self._hosts("down", check=False)
            raise RuntimeError(f"hosts.sh up {self.n} failed: {done.stderr[-2000:]}")
        self.up_seconds = time.monotonic() - started
        return self

    def down(self) -> None:
        started = time.monotonic()
        self._hosts("down", check=False)
        self.down_seconds = time.monotonic() - started

    def hosts(self, *args: str) -> None:
        """Another ``hosts.sh`` command (shape, unshape, link, ray-node)."""
        self._hosts(*args)

    def leftovers(self) -> list[str]:
        """The namespaces of the prefix still there (none after :meth:`down`)."""
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        return [n for n in names if n == f"{self.prefix}sw" or (n.startswith(self.prefix) and n[len(self.prefix):].isdigit())]

    def run(self, host: int, argv: Sequence[str], *, timeout: float = 600.0) -> subprocess.CompletedProcess[str]:
        """``argv`` in ``host``, to completion."""
        return subprocess.run([str(self.script), "exec", str(host), *argv], env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def run_json(self, host: int, argv: Sequence[str], *, timeout: float = 600.0) -> dict[str, Any]:
        """``argv`` in ``host``; its last standard-output line, read as JSON."""
        done = self.run(host, argv, timeout=timeout)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(lines[-1])
        return result

    def __enter__(self) -> "Cluster":
        return self.up()

    def __exit__(self, *_: Any) -> None:
        self.down()
