"""Where a rejection points (contract "Error locations"): the JSON pointer, into the
document as written, of the element a rule rejects, computed here independently of the
implementation from the rule itself, for the codes whose rule runs on a list as the
contract orders it (sorted by id for placements) or on the raw text (the reader).

`locate(op, inputs, code)` gives the pointer, or None when the code has no location in
the document (EXEMPT: an option or argument, a report, or text that is not JSON)."""

from __future__ import annotations

import json

from oracle.core import logical_id

# Codes without a pointer into the document, and why.
EXEMPT = {
    "invalid_json": "the text is not JSON: the error has a line and column instead",
    "address_semantics_invalid": "the option is not part of the document",
    "coverage_incomplete": "a requirement on the analysis of a valid placement; the message names the tensor",
    "content_digest_mismatch": "a requirement on the recombined fragments of a valid content manifest; the message names the tensor",
    "content_partition_invalid": "a requirement on the fragments of a content manifest taken together (§19.4); the message names the tensor",
}

# The codes located here; every other code is located where the case writes its path.
LOCATED = {
    "duplicate_key", "non_finite_number",
    "duplicate_tensor_id", "duplicate_fragment_id", "duplicate_logical_fragment",
    "unknown_tensor_id", "fragment_rank_mismatch", "fragment_out_of_bounds",
    "replicated_fragment_offset", "replicated_fragment_incomplete", "non_shard_axis_offset",
    "non_shard_axis_shape", "nbytes_mismatch", "fragment_overlap", "placement_id_mismatch",
    "inconsistent_lease_generations", "generation_mismatch", "address_overlap",
    "address_range_overflow", "duplicate_binding_fragment", "duplicate_runtime_fragment_id",
    "missing_lease_id", "missing_generation", "digest_format", "offsets_require_view_semantics",
}


def token(key) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def ptr(*parts) -> str:
    return "".join("/" + token(p) for p in parts)


# ----------------------------------------------------------------------------------------
# The reader: the first non-finite token, or the first object (in closing order) with a
# repeated key, by a small recursive reader that tracks the pointer.

class _Found(Exception):
    def __init__(self, code, at):
        self.code, self.at = code, at


def _reader_locate(text: str, code: str):
    pos = 0

    def ws():
        nonlocal pos
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1

    def string():
        nonlocal pos
        end = pos + 1
        while text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        raw = text[pos:end + 1]
        pos = end + 1
        return json.loads(raw)

    def value(at):
        nonlocal pos
        ws()
        c = text[pos]
        if c == "{":
            pos += 1
            keys = []
            ws()
            if text[pos] == "}":
                pos += 1
                return
            while True:
                ws()
                key = string()
                ws()
                pos += 1  # ':'
                value(at + "/" + token(key))
                keys.append(key)
                ws()
                if text[pos] == ",":
                    pos += 1
                    continue
                pos += 1  # '}'
                seen = set()
                for k in keys:
                    if k in seen:
                        raise _Found("duplicate_key", at + "/" + token(k))
                    seen.add(k)
                return
        if c == "[":
            pos += 1
            ws()
            if text[pos] == "]":
                pos += 1
                return
            i = 0
            while True:
                value(f"{at}/{i}")
                i += 1
                ws()
                if text[pos] == ",":
                    pos += 1
                    continue
                pos += 1
                return
        if c == '"':
            string()
            return
        for word in ("NaN", "Infinity", "-Infinity"):
            if text.startswith(word, pos):
                raise _Found("non_finite_number", at)
        end = pos
        while end < len(text) and text[end] not in ",]} \t\r\n":
            end += 1
        pos = end

    try:
        value("")
    except _Found as found:
        assert found.code == code, f"the reader oracle finds {found.code} first"
        return found.at
    raise AssertionError(f"the reader oracle finds no {code}")


# ----------------------------------------------------------------------------------------
# The lists of a document: where they are and in what order the rules see them.

class Lists:
    """A document's fragments as the rules see them: each entry is (input index,
    fragment dict with the fragment members, descriptor dict), and where they are."""

    def __init__(self, doc, op):
        inventory = op in ("placement.from_inventory", "runtime.from_inventory",
                           "project.placement", "project.binding")
        self.records = "tensors" if inventory else "fragments"
        self.tensors_at = None if inventory else "tensors"
        self.id_key = "placement_fragment_id" if op.startswith(("placement.", "coverage", "project.")) \
            else "fragment_id"
        items = doc.get(self.records) or []
        descriptors = {}
        if inventory:
            for r in items:
                descriptors.setdefault(r["tensor_id"], r)
        else:
            for t in doc.get("tensors") or []:
                descriptors.setdefault(t["tensor_id"], t)
        self.descriptors = descriptors
        self.doc_tensors = [] if inventory else (doc.get("tensors") or [])
        entries = []
        for i, f in enumerate(items):
            fid = f.get(self.id_key)
            if op.startswith("project.") and fid is None:
                fid = logical_id(f)
            entries.append((i, fid, f))
        # A placement's rules run on fragments sorted by id (stable); a runtime's in order.
        if self.id_key == "placement_fragment_id":
            entries.sort(key=lambda e: e[1])
        self.entries = entries

    def at(self, i, *member):
        return ptr(self.records, i, *member)


def _shard_dims(t) -> list:
    sd, pd = t.get("shard_dims"), t.get("partition_dim")
    return list(sd) if sd is not None else ([pd] if pd is not None else [])


def _box_failure(t, f):
    """F4-F8 for fragment f of tensor t: (code, member, axis) of the first failure."""
    shape, off, ext = t["global_shape"], f["global_offset"], f["local_shape"]
    n = len(shape)
    if len(off) != n or len(ext) != n:
        return "fragment_rank_mismatch", ("local_shape" if len(off) == n else "global_offset"), None
    for k in range(n):
        if off[k] + ext[k] > shape[k] or off[k] + ext[k] > 2**64 - 1:
            return "fragment_out_of_bounds", ("global_offset" if off[k] >= shape[k] else "local_shape"), k
    sd = _shard_dims(t)
    if not sd:
        for k in range(n):
            if off[k] != 0:
                return "replicated_fragment_offset", "global_offset", k
        for k in range(n):
            if ext[k] != shape[k]:
                return "replicated_fragment_incomplete", "local_shape", k
    else:
        for k in range(n):
            if k in sd:
                continue
            if off[k] != 0:
                return "non_shard_axis_offset", "global_offset", k
            if ext[k] != shape[k]:
                return "non_shard_axis_shape", "local_shape", k
    size = t["itemsize"]
    for e in ext:
        size *= e
    if size != f["nbytes"]:
        return "nbytes_mismatch", "nbytes", None
    return None


def _intersect(a, b) -> bool:
    return all(ao < bo + be and bo < ao + ae for ao, ae, bo, be in
               zip(a["global_offset"], a["local_shape"], b["global_offset"], b["local_shape"]))


def _first_overlap(group):
    """§8.3 on one (tensor, rank) group of (index, fragment) in manifest order: sweep the
    axis with the most distinct (offset, end) pairs (the first on ties), boxes by offset
    on it (stable); the first active box, in insertion order, that the incoming one meets."""
    ndim = len(group[0][1]["global_offset"])
    if ndim == 0:
        return group[0][0], group[1][0]
    distinct = [len({(f["global_offset"][k], f["global_offset"][k] + f["local_shape"][k]) for _, f in group})
                for k in range(ndim)]
    sweep = max(range(ndim), key=lambda k: (distinct[k], -k))
    order = sorted(group, key=lambda e: e[1]["global_offset"][sweep])
    active = []
    for entry in order:
        c = entry[1]
        active = [a for a in active
                  if a[1]["global_offset"][sweep] + a[1]["local_shape"][sweep] > c["global_offset"][sweep]]
        hits = [a for a in active if _intersect(a[1], c)]
        if hits:
            return hits[0][0], entry[0]
        active.append(entry)
    return None


def _fragment_set(lists: Lists, code: str):
    """T1, then F1-F8 per fragment in the rules' order, then §8.3: the pointer of the
    first failure if its code is `code`."""
    if lists.tensors_at is not None:
        tensors = sorted(enumerate(lists.doc_tensors), key=lambda e: e[1]["tensor_id"]) \
            if lists.id_key == "placement_fragment_id" else list(enumerate(lists.doc_tensors))
        seen = set()
        for i, t in tensors:
            if t["tensor_id"] in seen:
                return "duplicate_tensor_id", ptr("tensors", i, "tensor_id")
            seen.add(t["tensor_id"])
    ids, logical = set(), set()
    for i, fid, f in lists.entries:
        if fid in ids:
            return "duplicate_fragment_id", lists.at(i, lists.id_key)
        ids.add(fid)
        key = json.dumps([f["tensor_id"], f["rank"], f["global_offset"], f["local_shape"]], sort_keys=True)
        if key in logical:
            return "duplicate_logical_fragment", lists.at(i)
        logical.add(key)
        t = lists.descriptors.get(f["tensor_id"])
        if t is None:
            return "unknown_tensor_id", lists.at(i, "tensor_id")
        failure = _box_failure(t, f)
        if failure:
            c, member, k = failure
            return c, (lists.at(i, member) if k is None else lists.at(i, member, k))
    groups = {}
    for i, _, f in lists.entries:
        groups.setdefault(json.dumps([f["tensor_id"], f["rank"]], sort_keys=True), []).append((i, f))
    for group in groups.values():
        if len(group) > 1:
            pair = _first_overlap(group)
            if pair:
                return "fragment_overlap", lists.at(pair[1])
    return None


def _address_overlap(lists: Lists):
    """§8.5: spaces by (worker, device) in order of appearance, each swept by address
    (stable); the first pair that overlaps without being an exact alias pair."""
    spaces = {}
    for i, _, f in sorted(lists.entries, key=lambda e: e[0]):  # the runtime's order: the input's
        spaces.setdefault((f["worker_id"], f["device"]), []).append((i, f))
    for members in spaces.values():
        members.sort(key=lambda e: e[1]["address"])
        active = None
        for entry in members:
            if active is not None:
                a = active[1]
                if a["address"] + a["nbytes"] <= entry[1]["address"]:
                    active = None
                elif not _alias_pair(lists, a, entry[1]):
                    return lists.at(entry[0], "address")
            if active is None:
                active = entry
    return None


def _alias_pair(lists: Lists, a, b) -> bool:
    ta, tb = lists.descriptors[a["tensor_id"]], lists.descriptors[b["tensor_id"]]
    layout = lambda t: {k: v for k, v in {**t, "shard_dims": _shard_dims(t)}.items()
                        if k not in ("tensor_id", "partition_dim")}
    aliases = sorted(a.get("aliases") or [])
    return (a["address"] == b["address"] and a["nbytes"] == b["nbytes"]
            and a["lease_generation"] == b["lease_generation"] and len(aliases) >= 2
            and aliases == sorted(b.get("aliases") or [])
            and a["global_offset"] == b["global_offset"] and a["local_shape"] == b["local_shape"]
            and layout(ta) == layout(tb))


def locate(op: str, inputs: dict, code: str):
    """The pointer a rejection with `code` of the document in `inputs` carries."""
    text = inputs["document"]
    if code in ("duplicate_key", "non_finite_number"):
        return _reader_locate(text, code)
    doc = json.loads(text)
    if code in ("missing_lease_id", "missing_generation"):
        return ""
    if code == "placement_id_mismatch":
        return None if inputs.get("placement_id") is not None else "/placement_id"
    if code == "generation_mismatch":
        return "/generation"
    if code == "digest_format":
        return "/placement_digest"
    if code == "offsets_require_view_semantics":
        records = "fragments" if op.startswith("binding.") else "tensors"
        for i, r in enumerate(doc[records]):
            if r.get("storage_offset") or r.get("byte_offset"):
                return ptr(records, i, "storage_offset" if r.get("storage_offset") else "byte_offset")
        raise AssertionError("the oracle finds no offsets")
    lists = Lists(doc, op)
    if code == "inconsistent_lease_generations":
        first = lists.entries[0][2]["lease_generation"]
        i = next(i for i, _, f in lists.entries if f["lease_generation"] != first)
        return lists.at(i, "lease_generation")
    if code == "address_range_overflow":
        i = next(i for i, _, f in lists.entries if f["address"] + f["nbytes"] > 2**64 - 1)
        return lists.at(i, "nbytes")
    if code in ("duplicate_binding_fragment", "duplicate_runtime_fragment_id"):
        key = "placement_fragment_id" if code == "duplicate_binding_fragment" else "fragment_id"
        entries = sorted(enumerate(doc["fragments"]), key=lambda e: e[1]["placement_fragment_id"])
        if code == "duplicate_binding_fragment":
            for (_, a), (j, b) in zip(entries, entries[1:]):
                if a[key] == b[key]:
                    return ptr("fragments", j, key)
        seen = set()
        for j, f in entries:
            if f[key] in seen:
                return ptr("fragments", j, key)
            seen.add(f[key])
        raise AssertionError(f"the oracle finds no {code}")
    if code == "address_overlap":
        at = _address_overlap(lists)
        assert at is not None, "the oracle finds no address overlap"
        return at
    found = _fragment_set(lists, code)
    assert found is not None and found[0] == code, f"the oracle finds {found} first, not {code}"
    return found[1]
