"""Mooncake's formats (contract §20) seen from this contract, written from the contract's text
alone: the import of an accepted Mooncake placement (§20.7) and the region form of a plan
(§20.9 with the loop rules of schema/plan.schema.json).

- `import_placement`: an accepted `WeightPlacementManifest` (a dict) as this contract's
  placement: resource_id becomes model_id, each descriptor keeps its nine members (the
  partition_dim follows from exactly one shard dim), each fragment keeps id, tensor, box,
  rank, nbytes and aliases; the result is then held to §8.2 (the rules upstream's reader does
  not have: a replicated tensor's fragments are whole, a sharded tensor's are cut only on its
  shard dims, F6a, F6b, F7). Raises `ImportRejected` with the code of the first failure.
- `this_planners_form`: upstream's regions in the form this planner writes its loops (§17.3:
  no outer loop of extent 1, a run as long as both buffers stay contiguous, adjacent loops
  that step as one merged), so that the regions of 3-D and 4-D tensors, which upstream
  writes with more loops, are compared byte for byte.
"""

from __future__ import annotations

from oracle.core import make_placement, placement_fragment


class ImportRejected(Exception):
    """The import's result breaks a rule of §8.2; `code` is the rule's code."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def import_placement(theirs: dict) -> dict:
    """`make_placement`'s result for the import of `theirs` (accepted by upstream), or
    raises ImportRejected."""
    fragments = [placement_fragment(f, f["placement_fragment_id"])
                 for part in theirs["parts"] for f in part["fragments"]]
    tensors = {t["tensor_id"]: t for t in theirs["tensors"]}
    # §8.2 in manifest order: the canonical placement lists fragments by id.
    for f in sorted(fragments, key=lambda f: f["placement_fragment_id"]):
        t = tensors[f["tensor_id"]]
        shape, shards = t["global_shape"], t["shard_dims"]
        if not shards:
            if any(o != 0 for o in f["global_offset"]):
                raise ImportRejected("replicated_fragment_offset")
            if f["local_shape"] != shape:
                raise ImportRejected("replicated_fragment_incomplete")
            continue
        for k in range(len(shape)):
            if k in shards:
                continue
            if f["global_offset"][k] != 0:
                raise ImportRejected("non_shard_axis_offset")
            if f["local_shape"][k] != shape[k]:
                raise ImportRejected("non_shard_axis_shape")
    return make_placement(theirs["resource_id"], theirs["revision"], theirs["tensors"], fragments)


def this_planners_form(region: dict) -> dict:
    """One of upstream's regions (`inner_bytes`, `outer_loop_counts`, `source_strides`,
    `target_strides`, outermost first) with its loops in this planner's form: loops of
    count 1 dropped; the innermost loop joined to the run while it steps by the run in both
    buffers; then two adjacent loops one whenever the outer one's strides are the inner
    one's count times its strides in both buffers (the merged loop keeps the inner strides).
    The bytes it moves are the same."""
    loops = [list(x) for x in zip(region["outer_loop_counts"], region["source_strides"], region["target_strides"])
             if x[0] != 1]
    run = region["inner_bytes"]
    while loops and loops[-1][1] == run and loops[-1][2] == run:
        run *= loops.pop()[0]
    merged: list[list[int]] = []
    for loop in loops:
        merged.append(loop)
        while len(merged) >= 2:
            outer, inner = merged[-2], merged[-1]
            if outer[1] == inner[0] * inner[1] and outer[2] == inner[0] * inner[2]:
                merged[-2:] = [[outer[0] * inner[0], inner[1], inner[2]]]
            else:
                break
    return {**region, "inner_bytes": run, "outer_loop_counts": [x[0] for x in merged],
            "source_strides": [x[1] for x in merged], "target_strides": [x[2] for x in merged]}
