"""Mixed into every vLLM worker of the RL loop's servers (``vllm serve
--worker-extension-cls links.WorkerLinks``; reached through the server's
``/collective_rpc``): a link per GPU, and the engine's half of the peers.

**A link per GPU.** A GPU node has a NIC per GPU; here a server's workers start in the
server's network namespace (their tensor-parallel group connects there, as a node's GPUs
talk over NVLink), then :meth:`WorkerLinks.wm_enter_link` moves each worker's thread into
a namespace of its own with one shaped link: every socket the worker makes afterwards
(its Transfer Engine, its control channel, the peers' gloo groups) uses that link, and
only that one. ``setns`` moves the calling thread; the threads it starts later follow it.

**The peers, engine half**, each timed where it runs:

- :meth:`~WorkerLinks.wm_fetch_reload`: the disk route: tensor-parallel rank 0 fetches the
  checkpoint from the storage host over its link (one read per engine: its other worker
  reads the node's copy, as from a page cache), then every worker reloads with vLLM's own
  ``reload_weights``;
- :meth:`~WorkerLinks.wm_chain`: vLLM's nccl backend's route over gloo: whole checkpoint
  tensors in chunks along a chain (trainer rank 0, then every worker of every engine), each
  worker forwarding a chunk while it receives the next, then keeping its slice through the
  model's own ``load_weights``;
- :meth:`~WorkerLinks.wm_broadcast`: the same tensors with gloo's own ``broadcast``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional

CLONE_NEWNET = 0x40000000
TIMEOUT = timedelta(seconds=600)


def chunks(order: list[tuple[str, list[int]]], chunk_elements: int) -> list[tuple[int, int, int]]:
    """The chain's pieces: (tensor index, first element, end element) of every tensor in
    ``order``, each tensor cut in pieces of at most ``chunk_elements`` elements. Both ends
    compute the same list."""
    import math

    out = []
    for index, (_, shape) in enumerate(order):
        count = math.prod(shape)
        for start in range(0, count, chunk_elements):
            out.append((index, start, min(count, start + chunk_elements)))
    return out


def peer_group(address: str, port: int, rank: int, size: int) -> Any:
    """A gloo process group of its own (not torch.distributed's default one, which vLLM's
    workers and the trainer ranks already use): trainer rank 0 (rank 0, the store's host)
    and every engine worker, on this thread's link (``eth0``)."""
    import torch.distributed as dist

    store = dist.TCPStore(address, port, size, is_master=rank == 0, timeout=TIMEOUT)
    options = dist.ProcessGroupGloo._Options()
    options._timeout = TIMEOUT
    options._devices = [dist.ProcessGroupGloo.create_device(interface="eth0")]
    return dist.ProcessGroupGloo(dist.PrefixStore("peers", store), rank, size, options)


class WorkerLinks:
    """The methods ``collective_rpc`` reaches in each worker (mixed into vLLM's Worker)."""

    _wm_peers: Optional[Any] = None
    _wm_peer_rank = 0

    def _wm_tp_rank(self) -> int:
        from vllm.distributed import get_tensor_model_parallel_rank

        return int(get_tensor_model_parallel_rank())

    def wm_enter_link(self, namespaces: list[str], addresses: list[str]) -> dict[str, str]:
        """Move this worker into the namespace of its tensor-parallel rank's link (and
        bind its Transfer Engine to that link's address); its address."""
        rank = self._wm_tp_rank()
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/run/netns/{namespaces[rank]}", os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {namespaces[rank]} failed")
        finally:
            os.close(fd)
        os.environ["MC_TCP_BIND_ADDRESS"] = addresses[rank]
        os.environ["GLOO_SOCKET_IFNAME"] = "eth0"
        return {"namespace": namespaces[rank], "address": addresses[rank]}

    def wm_peer_join(self, address: str, port: int, size: int, first_rank: int) -> dict[str, int]:
        """Join the peers' gloo group as rank ``first_rank`` + this worker's TP rank."""
        self._wm_peer_rank = first_rank + self._wm_tp_rank()
        self._wm_peers = peer_group(address, port, self._wm_peer_rank, size)
        return {"rank": self._wm_peer_rank}

    def _wm_load(self, order: list[tuple[str, list[int]]], flat: Any, counts: list[int]) -> None:
        import torch

        pieces = torch.split(flat, counts)
        model: Any = self.model_runner.model  # type: ignore[attr-defined]
        model.load_weights(weights=[(n, p.view(s)) for (n, s), p in zip(order, pieces)])

    def wm_chain(self, order: list[tuple[str, list[int]]], chunk_elements: int) -> dict[str, float]:
        """Receive every chunk from the previous rank of the chain, forward it to the next
        (while receiving the one after), then load the whole model with vLLM's own
        ``load_weights`` (it keeps this worker's slice). Seconds."""
        import math

        import torch

        group, rank = self._wm_peers, self._wm_peer_rank
        assert group is not None
        started = time.perf_counter()
        counts = [math.prod(s) for _, s in order]
        offsets = [0]
        for count in counts:
            offsets.append(offsets[-1] + count)
        flat = torch.empty(offsets[-1], dtype=torch.float32)
        forwarding: Optional[Any] = None
        last = rank == group.size() - 1
        for tag, (index, start, end) in enumerate(chunks(order, chunk_elements)):
            piece = flat[offsets[index] + start:offsets[index] + end]
            group.recv([piece], rank - 1, tag).wait()
            if not last:
                if forwarding is not None:
                    forwarding.wait()
                forwarding = group.send([piece], rank + 1, tag)
        if forwarding is not None:
            forwarding.wait()
        received = time.perf_counter()
        self._wm_load(order, flat, counts)
        return {"receive_seconds": received - started, "load_seconds": time.perf_counter() - received}

    def wm_broadcast(self, order: list[tuple[str, list[int]]]) -> dict[str, float]:
        """gloo's own ``broadcast`` of the packed tensors from rank 0, then
        ``load_weights``. Seconds."""
        import math

        import torch

        group = self._wm_peers
        assert group is not None
        started = time.perf_counter()
        counts = [math.prod(s) for _, s in order]
        flat = torch.empty(sum(counts), dtype=torch.float32)
        group.broadcast(flat, 0).wait()
        received = time.perf_counter()
        self._wm_load(order, flat, counts)
        return {"receive_seconds": received - started, "load_seconds": time.perf_counter() - received}

    def wm_fetch_reload(self, url: str, folder: str, config: str) -> dict[str, float]:
        """The disk route's engine half: TP rank 0 fetches the checkpoint at ``url`` into
        ``folder`` (with the model's ``config``), the other waits for it; then every
        worker reloads with vLLM's own ``reload_weights``. Seconds of each part."""
        import torch.distributed as dist
        from vllm.distributed import get_tp_group

        started = time.perf_counter()
        if self._wm_tp_rank() == 0:
            Path(folder).mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(url, timeout=600) as reply, \
                    open(Path(folder) / "model.safetensors.part", "wb") as out:
                shutil.copyfileobj(reply, out, 1 << 20)
            os.replace(Path(folder) / "model.safetensors.part", Path(folder) / "model.safetensors")
            shutil.copy(config, Path(folder) / "config.json")
        dist.barrier(group=get_tp_group().cpu_group)
        fetched = time.perf_counter()
        self.reload_weights(weights_path=folder)  # type: ignore[attr-defined]
        return {"fetch_seconds": fetched - started, "reload_seconds": time.perf_counter() - fetched}
