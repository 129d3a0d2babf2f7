"""The trainer's half of the RL loop's peers, and what every path is measured by: each
link's bytes (the switch's counters) and the floor they give.

Every peer sends the step's weights to the same engines over the same links as ours:

- :func:`gather`: every tensor to rank 0 (point-to-point, all receives posted at once:
  rank 0's link takes the other ranks' shards at its rate, and a caller can use each
  tensor as soon as it is whole);
- :func:`disk`: the gather, rank 0 writes a safetensors checkpoint to the storage host
  (HTTP PUT), each engine fetches it once and reloads (``links.WorkerLinks.wm_fetch_reload``);
- :func:`chain`: as vLLM's nccl backend, over gloo: rank 0 sends whole tensors in chunks
  along the chain of every engine worker, each tensor as soon as the gather made it whole;
- :func:`broadcast`: the gather, then gloo's own ``broadcast``.

A path's **floor** is the busiest link's bytes (one direction of one link, as the switch
counted them during the path, headers included: what the shaping meters) over the link's
rate: no schedule on these links can be faster.
"""

from __future__ import annotations

import io
import json
import subprocess
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from links import chunks


def counters(switch: str) -> dict[str, tuple[int, int]]:
    """Every port of the switch: (bytes the host sent, bytes it received)."""
    out = subprocess.run(["ip", "-n", switch, "-s", "-j", "link", "show"], check=True, capture_output=True,
                         text=True).stdout
    ports = {}
    for link in json.loads(out):
        name = str(link["ifname"])
        if name.endswith("p"):
            stats = link["stats64"]
            # The port's rx is what its host sent; its tx what the host received.
            ports[name[:-1]] = (int(stats["rx"]["bytes"]), int(stats["tx"]["bytes"]))
    return ports


class Meter:
    """The links' bytes during one path: ``busiest()`` (host, direction, bytes) since it
    was made."""

    def __init__(self, switch: str) -> None:
        self.switch = switch
        self.before = counters(switch)

    def moved(self) -> dict[str, tuple[int, int]]:
        """Each host's (out, in) bytes since the meter was made."""
        after = counters(self.switch)
        return {h: (sent - self.before.get(h, (0, 0))[0], received - self.before.get(h, (0, 0))[1])
                for h, (sent, received) in after.items()}

    def busiest(self, moved: dict[str, tuple[int, int]]) -> tuple[str, str, int]:
        best = ("", "", 0)
        for host, (sent, received) in moved.items():
            for direction, count in (("out", sent), ("in", received)):
                if count > best[2]:
                    best = (host, direction, count)
        return best


def measured(switch: str, rate_bytes: float, run: Callable[[], Any]) -> dict[str, Any]:
    """Run one path (rank 0's part of it), timed, with its busiest link and its floor."""
    meter = Meter(switch)
    started = time.perf_counter()
    detail = run()
    seconds = time.perf_counter() - started
    links = meter.moved()
    host, direction, moved = meter.busiest(links)
    return {"seconds": round(seconds, 4), "busiest_link": f"{host} {direction}", "busiest_bytes": moved,
            "floor_seconds": round(moved / rate_bytes, 4) if rate_bytes else None, "detail": detail,
            # Every link that carried more than 64 KiB: (out, in) bytes.
            "links": {h: list(m) for h, m in sorted(links.items()) if max(m) > 1 << 16}}


def _rows(rows: int, world: int) -> list[int]:
    """Rows of each rank of a ``Shard(0)`` tensor (torch.chunk's split: the last ranks may
    hold none)."""
    import torch

    sizes = [len(c) for c in torch.arange(rows).chunk(world)]
    return sizes + [0] * (world - len(sizes))


def gather(params: dict[str, Any], names: Sequence[str], rank: int, world: int,
           ready: Optional[Callable[[int, Any], None]] = None) -> dict[str, Any]:
    """Every tensor whole on rank 0 (the others send their shards); ``ready(i, tensor)``
    is called on rank 0 as soon as tensor ``names[i]`` is whole, in order."""
    import torch
    import torch.distributed as dist

    works: list[Any] = []
    whole: dict[str, Any] = {}
    per_tensor: list[list[Any]] = []
    for name in names:
        local = params[name].to_local().detach()
        shape = tuple(params[name].shape)
        if rank == 0:
            full = torch.empty(shape, dtype=local.dtype)
            sizes = _rows(shape[0], world)
            offset = sizes[0]
            full[:sizes[0]].copy_(local)
            mine = []
            for peer in range(1, world):
                if sizes[peer]:
                    mine.append(dist.irecv(full[offset:offset + sizes[peer]], src=peer))
                offset += sizes[peer]
            whole[name] = full
            per_tensor.append(mine)
        elif local.numel():
            works.append(dist.isend(local.contiguous(), dst=0))
    if rank == 0:
        for index, name in enumerate(names):
            for work in per_tensor[index]:
                work.wait()
            if ready is not None:
                ready(index, whole[name])
    for work in works:
        work.wait()
    return whole


def rpc_all(urls: Sequence[str], method: str, args: Sequence[Any] = (), timeout: float = 900) -> list[Any]:
    """``collective_rpc`` on every server at once; each server's list of its workers'
    results."""
    import requests

    def call(url: str) -> Any:
        reply = requests.post(f"{url}/collective_rpc", timeout=timeout, json={"method": method, "args": list(args)})
        reply.raise_for_status()
        body = reply.json()
        return body.get("results", body) if isinstance(body, dict) else body

    with ThreadPoolExecutor(max_workers=len(urls)) as pool:
        return list(pool.map(call, urls))


def start_rpc(urls: Sequence[str], method: str, args_of: Callable[[int], Sequence[Any]]) -> Any:
    """Each server's workers start ``method`` (it blocks there); the futures."""
    pool = ThreadPoolExecutor(max_workers=len(urls))
    futures = [pool.submit(rpc_all, [url], method, args_of(i)) for i, url in enumerate(urls)]
    pool.shutdown(wait=False)
    return futures


def disk(params: dict[str, Any], names: Sequence[str], rank: int, world: int, storage: str, urls: Sequence[str],
         folders: Sequence[str], config: str) -> dict[str, Any]:
    """The disk route (every rank calls it; rank 0 drives): gather, write to the storage
    host, each engine fetches once and reloads. Rank 0's seconds of each part."""
    from safetensors.torch import save

    started = time.perf_counter()
    whole = gather(params, names, rank, world)
    if rank != 0:
        return {}
    gathered = time.perf_counter()
    data = save({n: whole[n].contiguous() for n in names})
    request = urllib.request.Request(f"{storage}/model.safetensors", data=io.BytesIO(data), method="PUT",
                                     headers={"Content-Length": str(len(data))})
    urllib.request.urlopen(request, timeout=900).close()
    written = time.perf_counter()
    reloads = [f.result() for f in start_rpc(urls, "wm_fetch_reload",
                                          lambda i: [f"{storage}/model.safetensors", folders[i], config])]
    return {"gather_seconds": round(gathered - started, 4), "write_seconds": round(written - gathered, 4),
            "fetch_reload_seconds": round(time.perf_counter() - written, 4),
            "engines": reloads}


def chain(params: dict[str, Any], names: Sequence[str], rank: int, world: int, group: Any, urls: Sequence[str],
          chunk_elements: int, overlap: bool = True) -> dict[str, Any]:
    """The chain (every rank calls it; rank 0 drives): each tensor in chunks to the
    chain's first worker, as soon as the gather made it whole (``overlap``) or after the
    whole gather; every worker forwards and loads. Rank 0's seconds. Which form is faster
    depends on the links: overlapped, the gather's acknowledgements queue behind the
    chain's data on rank 0's outgoing link."""
    order = [(n, list(params[n].shape)) for n in names]
    started = time.perf_counter()
    futures = start_rpc(urls, "wm_chain", lambda i: [order, chunk_elements]) if rank == 0 else []
    pieces = chunks(order, chunk_elements)
    sending: list[Any] = []
    by_tensor: dict[int, list[tuple[int, int, int, int]]] = {}
    for tag, (index, start, end) in enumerate(pieces):
        by_tensor.setdefault(index, []).append((tag, index, start, end))

    def send(index: int, tensor: Any) -> None:
        flat = tensor.reshape(-1)
        for tag, _, start, end in by_tensor.get(index, []):
            if sending:
                sending.pop(0).wait()  # one chunk in flight behind the one being sent
            sending.append(group.send([flat[start:end]], 1, tag))

    if overlap:
        gather(params, names, rank, world, ready=send if rank == 0 else None)
    else:
        whole = gather(params, names, rank, world)
        for index, name in enumerate(names):
            if rank == 0:
                send(index, whole[name])
    gathered = time.perf_counter() - started
    for work in sending:
        work.wait()
    if rank != 0:
        return {}
    sent = time.perf_counter() - started
    return {"gathered_seconds": round(gathered, 4), "sent_seconds": round(sent, 4),
            "workers": [f.result() for f in futures]}


def broadcast(params: dict[str, Any], names: Sequence[str], rank: int, world: int, group: Any,
              urls: Sequence[str]) -> dict[str, Any]:
    """gloo's own broadcast of the gathered, packed tensors (every rank calls it)."""
    import torch

    order = [(n, list(params[n].shape)) for n in names]
    futures = start_rpc(urls, "wm_broadcast", lambda i: [order]) if rank == 0 else []
    whole = gather(params, names, rank, world)
    if rank != 0:
        return {}
    flat = torch.cat([whole[n].reshape(-1) for n in names])
    group.broadcast(flat, 0).wait()
    return {"workers_seconds": [f.result() for f in futures]}
