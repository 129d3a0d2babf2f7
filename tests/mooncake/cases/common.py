"""Shared by the case modules: the upstream message -> code table, the placement case
registry and the helper that records what upstream does with a text."""

from __future__ import annotations

import copy
import json
import re
import sys

from mooncake.reshard import weight as mw

CODES = [
    (r"is not valid JSON", "invalid_json"),
    (r"^source and target weight_generation differ$", "mooncake_generation_mismatch"),
    (r"^duplicate JSON field", "duplicate_key"),
    (r"^non-finite JSON number", "non_finite_number"),
    (r"must be a JSON object$", "not_an_object"),
    (r"schema fields do not match contract$|has an invalid schema$", "fields_mismatch"),
    (r"must be a sequence$", "not_a_sequence"),
    (r"alias must be a non-empty string$", "aliases_invalid"),
    (r"must be a non-empty string$", "empty_string"),
    (r"must be an integer at least", "below_minimum|not_an_integer"),
    (r"must fit in an unsigned 64-bit integer", "u64_overflow"),
    (r"resource_kind must be model_weight", "mooncake_resource_kind"),
    (r"participants must not be empty|^duplicate topology participant_id|^duplicate topology parallel rank|rank is out of range for participant", "mooncake_topology_invalid"),
    (r"^topology_id does not match", "mooncake_topology_id_mismatch"),
    (r"^unsupported parallel axis|cannot use split semantics|^EP must split|must not contain duplicate kinds|^split axes must not share|^split axis dimension is out of range|conflict with shard_dims|individually allocated expert", "mooncake_axis_invalid"),
    (r"^global_shape must not be empty", "empty_shape"),
    (r"^shard_dims must not contain duplicates", "shard_dims_duplicate"),
    (r"^shard_dims must be sorted", "shard_dims_unsorted"),
    (r"^shard_dims contains an out-of-range", "shard_dims_out_of_range"),
    (r"^duplicate tensor_id", "duplicate_tensor_id"),
    (r"^unknown tensor_id", "unknown_tensor_id"),
    (r"^aliases must not contain duplicates", "aliases_duplicate"),
    (r"^alias group", "mooncake_alias_group_invalid"),
    (r"fragment rank differs from part rank|^duplicate placement participant|^missing topology participant|^unknown topology participant|part rank differs from topology", "mooncake_participant_mismatch"),
    (r"^duplicate fragment_id", "duplicate_fragment_id"),
    (r"^duplicate logical fragment", "duplicate_logical_fragment"),
    (r"^fragment rank mismatch", "fragment_rank_mismatch"),
    (r"^fragment is out of bounds", "fragment_out_of_bounds"),
    (r"^fragment byte size mismatch", "nbytes_mismatch"),
    (r"^logical fragment boxes overlap", "fragment_overlap"),
    (r"unreferenced tensor", "mooncake_unreferenced_tensor"),
    (r"requires explicit parallel semantics|varies across undeclared|varies independently across undeclared", "mooncake_undeclared_axis"),
    (r"missing or unexpected replicated-axis participant", "mooncake_replica_coverage"),
    (r"missing or unexpected split-axis participant", "mooncake_split_participation"),
    (r"is not fully covered|must contain tensors|must contain fragments", "mooncake_not_covered"),
    (r"^non-Cartesian split-axis|split-axis rank geometry conflicts", "mooncake_split_geometry"),
    (r"^placement_id does not match", "placement_id_mismatch"),
]

# The placement rules every one of which the corpus must reject at least twice.
RULE_CODES = [
    "mooncake_resource_kind", "mooncake_topology_invalid", "mooncake_topology_id_mismatch",
    "mooncake_axis_invalid", "mooncake_alias_group_invalid", "mooncake_participant_mismatch",
    "mooncake_unreferenced_tensor", "mooncake_undeclared_axis", "mooncake_replica_coverage",
    "mooncake_not_covered", "mooncake_split_participation", "mooncake_split_geometry",
    "placement_id_mismatch", "duplicate_fragment_id", "duplicate_logical_fragment",
    "fragment_out_of_bounds", "fragment_rank_mismatch", "nbytes_mismatch", "fragment_overlap",
    "unknown_tensor_id", "duplicate_tensor_id", "fields_mismatch", "empty_string",
    "not_a_sequence", "not_an_object", "below_minimum", "not_an_integer", "duplicate_key",
    "non_finite_number", "invalid_json", "empty_shape", "shard_dims_duplicate",
    "shard_dims_unsorted", "shard_dims_out_of_range", "aliases_duplicate", "aliases_invalid",
]


def code_of(message: str) -> str:
    for pattern, code in CODES:
        if re.search(pattern, message):
            return code
    raise SystemExit(f"no code for upstream message: {message!r}")

CASES: dict[str, dict] = {}


def run_upstream(text: str):
    try:
        placement = mw.weight_placement_from_json(text)
    except ValueError as error:
        return None, str(error)
    return placement, None


def add(cid, text, *, code=None, pointer=None, generated_ids=False):
    placement, message = run_upstream(text)
    case = {"input": text}
    if placement is not None:
        if code is not None:
            print(f"PREDICTION {cid}: upstream accepts it, the case expected {code}", file=sys.stderr)
        case["expect"] = {
            "ok": True,
            "canonical": mw.weight_placement_to_json(placement),
            "placement_id": placement.placement_id,
            "digest": placement.digest,
            "topology_id": placement.topology.topology_id,
            "generated_ids": generated_ids,
        }
    else:
        mapped = code_of(message)
        if "|" in mapped:
            assert code in mapped.split("|"), f"{cid}: upstream says {message!r}, expected {code}"
            mapped = code
        if code is not None and code != mapped:
            print(f"PREDICTION {cid}: upstream says {message!r} ({mapped}), expected {code}", file=sys.stderr)
            pointer = None
        case["expect"] = {"ok": False, "code": mapped, "upstream_message": message}
        if pointer is not None:
            case["expect"]["pointer"] = pointer
    assert cid not in CASES, cid
    CASES[cid] = case


def dumps(d, **kw):
    return json.dumps(d, **kw)


def with_upstream_id(text):
    """The document with the placement_id upstream computes for it, if upstream accepts it
    otherwise (upstream's reader with the check of the given id left out)."""
    import mooncake.reshard.weight.serde as serde
    original = serde.WeightPlacementManifest
    serde.WeightPlacementManifest = lambda **kw: original(**{k: v for k, v in kw.items() if k != "placement_id"})
    try:
        placement = serde.weight_placement_from_json(text)
    finally:
        serde.WeightPlacementManifest = original
    return mw.weight_placement_to_json(placement)


def mutate(cid, base, fn, *, code=None, pointer=None):
    d = copy.deepcopy(base)
    fn(d)
    add(cid, dumps(d), code=code, pointer=pointer)
    if CASES[cid]["expect"].get("code") == "placement_id_mismatch" and cid.startswith("cover/"):
        # A mutation upstream accepts but for its id: the accepted document joins the corpus.
        add(cid.replace("cover/", "ok/mutant/", 1), with_upstream_id(dumps(d)))
