"""A Mooncake Store on 127.0.0.1 for examples and tests: :class:`LocalStore` starts
upstream's ``mooncake_master`` (with its HTTP metadata server) and one ``mooncake_client``
that holds the store's memory (its global segment), both from the installed wheel
``mooncake-transfer-engine-non-cuda``, on free ports; :meth:`LocalStore.client` makes a
connected ``MooncakeDistributedStore``; :meth:`LocalStore.stop` stops both processes.

The holder is a process of its own so that the saved bytes outlive the processes that
saved them, as in a deployment (a restart restores from a store that stayed up).

Mooncake's TCP transport otherwise connects through the host's first LAN address, even
between processes of one host: :data:`LOOPBACK_ENV` (``MC_TCP_BIND_ADDRESS=127.0.0.1``)
keeps its traffic on 127.0.0.1. It is set in this process (unless already set) before a
client is made, and given to the processes started here; :func:`use_loopback` sets it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from weight_manifest.errors import manifest_error as _error

__all__ = ["LOOPBACK_ENV", "LocalStore", "free_port", "use_loopback"]

LOOPBACK_ENV = {"MC_TCP_BIND_ADDRESS": "127.0.0.1"}


def use_loopback() -> None:
    """Keep this process's Mooncake TCP traffic (and its children's) on 127.0.0.1."""
    for name, value in LOOPBACK_ENV.items():
        os.environ.setdefault(name, value)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binary(name: str) -> str:
    import mooncake  # type: ignore[import-untyped]

    path = Path(mooncake.__file__).resolve().parent / name
    if not path.is_file():
        raise _error("store_failed", f"the wheel has no {name} (pip install mooncake-transfer-engine-non-cuda)")
    return str(path)


class LocalStore:
    """Master and holder on 127.0.0.1; logs go to ``log_dir``. ``segment_bytes`` is the
    store's capacity."""

    def __init__(self, log_dir: Path, *, segment_bytes: int = 2 << 30, timeout: float = 30.0) -> None:
        self.log_dir = Path(log_dir)
        self.segment_bytes = segment_bytes
        self.timeout = timeout
        self.rpc_port = free_port()
        self.http_port = free_port()
        self.master: Optional[subprocess.Popen[bytes]] = None
        self.holder: Optional[subprocess.Popen[bytes]] = None

    @property
    def master_address(self) -> str:
        return f"127.0.0.1:{self.rpc_port}"

    @property
    def metadata_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/metadata"

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with open(self.log_dir / f"{name}.log", "ab") as log:
            return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env={**os.environ, **LOOPBACK_ENV})

    def _wait_port(self, port: int, process: subprocess.Popen[bytes], name: str) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise _error("store_failed", f"{name} exited with {process.returncode} (see {self.log_dir}/{name}.log)")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.05)
        raise _error("store_failed", f"{name} did not listen on 127.0.0.1:{port} in {self.timeout} s")

    def start(self) -> LocalStore:
        """Start the master, then the holder; return when a client's put succeeds. If
        either does not come up, both are stopped before the error is raised."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> LocalStore:
        self.master = self._spawn("mooncake_master", [
            _binary("mooncake_master"), f"-rpc_port={self.rpc_port}", "-rpc_address=127.0.0.1",
            "-enable_http_metadata_server=true", f"-http_metadata_server_port={self.http_port}",
            "-http_metadata_server_host=127.0.0.1", "-metrics_host=127.0.0.1", f"-metrics_port={free_port()}"])
        self._wait_port(self.rpc_port, self.master, "mooncake_master")
        self._wait_port(self.http_port, self.master, "mooncake_master")
        self.holder = self._spawn("mooncake_client", [
            _binary("mooncake_client"), f"-global_segment_size={self.segment_bytes}",
            f"-master_server_address={self.master_address}", f"-metadata_server={self.metadata_url}",
            "-host=127.0.0.1", f"-port={free_port()}", "-protocol=tcp", "-local_buffer_size=0"])
        probe = self.client(local_buffer_bytes=1 << 20)
        try:
            deadline = time.monotonic() + self.timeout
            # Puts fail until the holder has mounted its segment.
            while probe.put("local-store/probe", b"ready") != 0:
                if self.holder.poll() is not None:
                    raise _error("store_failed", f"mooncake_client exited with {self.holder.returncode}")
                if time.monotonic() > deadline:
                    raise _error("store_failed", f"the store had no memory after {self.timeout} s")
                time.sleep(0.1)
            probe.remove("local-store/probe")
        finally:
            probe.close()
        return self

    def client(self, *, local_buffer_bytes: int = 64 << 20) -> Any:
        """A ``MooncakeDistributedStore`` connected to this store, contributing no memory."""
        from mooncake.store import MooncakeDistributedStore  # type: ignore[import-untyped]

        use_loopback()
        client = MooncakeDistributedStore()
        rc = client.setup("127.0.0.1", self.metadata_url, 0, local_buffer_bytes, "tcp", "", self.master_address)
        if rc != 0:
            raise _error("store_failed", f"the Store client did not connect to {self.master_address} ({rc})")
        return client

    def stop_master(self) -> None:
        """Kill the master now (a fault: the store's metadata is gone)."""
        self._stop(self.master, signal.SIGKILL)

    @staticmethod
    def _stop(process: Optional[subprocess.Popen[bytes]], sig: int = signal.SIGTERM) -> None:
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def stop(self) -> None:
        """Stop the holder, then the master (idempotent)."""
        self._stop(self.holder)
        self._stop(self.master)

    def __enter__(self) -> LocalStore:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()
