"""What the runtime's tests share: the repository's root, running an example script as a
user does, with no process it started left behind, and the session's scratch folder, where
the files of torch, vLLM and the processes the tests start go, removed when the session
ends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Optional

import pytest

# Mooncake's TCP transport connects through the host's LAN address unless told otherwise;
# every engine and Store client of the tests (and the examples they start) uses 127.0.0.1.
os.environ.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")

ROOT = Path(__file__).resolve().parents[2]

#: This session's scratch folder (made at its start, removed at its end). Made before torch
#: or vLLM is imported, so that this process and every process it starts put there torch
#: inductor's cache of compiled kernels (vLLM compiles some even when eager; hundreds of MB)
#: and vLLM's IPC sockets, instead of the system's temporary folder.
SCRATCH: Optional[Path] = None


def pytest_configure(config: pytest.Config) -> None:
    global SCRATCH
    SCRATCH = Path(tempfile.mkdtemp(prefix="wm-runtime-tests-"))
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(SCRATCH / "torchinductor"))
    os.environ.setdefault("VLLM_RPC_BASE_PATH", str(SCRATCH / "vllm-rpc"))
    Path(os.environ["VLLM_RPC_BASE_PATH"]).mkdir(parents=True, exist_ok=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    if SCRATCH is not None:
        shutil.rmtree(SCRATCH, ignore_errors=True)


def scratch_tmpdir(name: str) -> dict[str, str]:
    """``TMPDIR`` for a process a test starts: a new folder in the session's scratch folder,
    so that what the process leaves in its temporary folder (vLLM's rendezvous files, a
    killed process's temporary folders) is removed with it."""
    assert SCRATCH is not None, "the session's scratch folder is made when pytest starts"
    return {"TMPDIR": tempfile.mkdtemp(prefix=f"{name}-", dir=SCRATCH)}


def started_by(marker: str) -> list[str]:
    """The processes whose environment holds ``WM_TEST_RUN=<marker>``: every process one
    run started, however deep, whatever its name, and none of another test's or user's
    (a Mooncake master of someone else's is not this run's leftover)."""
    tag = f"WM_TEST_RUN={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag in (entry / "environ").read_bytes().split(b"\0"):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name} {command}")
        except OSError:  # gone meanwhile, or a kernel thread
            continue
    return found


def run_example(example: Path, *args: str) -> tuple[int, Optional[dict[str, Any]], str]:
    """Exit code, the last line's JSON (if any) and standard error of one run of an
    example script; no process it started may outlive it (a second's grace for exits
    already signalled)."""
    marker = uuid.uuid4().hex
    env = {**os.environ, "WM_TEST_RUN": marker, **scratch_tmpdir(example.stem)}
    done = subprocess.run([sys.executable, str(example), *args, "--timeout", "120"], capture_output=True,
                          text=True, timeout=600, env=env)
    deadline = time.monotonic() + 1.0
    while (left := started_by(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"the example left processes behind: {left}"
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines else None
    return done.returncode, result, done.stderr


def verified_example(example: Path, *args: str) -> dict[str, Any]:
    """The result of a run that must succeed and verify."""
    code, result, stderr = run_example(example, *args)
    assert code == 0, stderr[-3000:]
    assert result is not None and result["verified"] is True
    return result
