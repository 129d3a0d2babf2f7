"""The limit oracle (code limit_exceeded; SECURITY.md "Limits in force", src/limits)."""

from __future__ import annotations

import json
import re

# Limits (code limit_exceeded, added by this implementation; SECURITY.md "Limits in force",
# src/limits). The oracle below finds the first default limit a request's documents cross,
# in the implementation's order: the document size; then, left to right in the text, a
# container nested deeper than max_depth or a string (member names included) longer than
# max_string_bytes in decoded UTF-8 (an earlier syntax error or duplicate key wins); then
# the parse-layer counts, each right after its member is found to be a sequence.

LIMITS = {"max_document_bytes": 1 << 30, "max_depth": 128, "max_dims": 64,
          "max_tensors": 1 << 22, "max_fragments": 1 << 24, "max_string_bytes": 65536}


def _ptr(segments) -> str:
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


class _Stop(Exception):
    """The reader stops here: a limit (`at` is its pointer) or another reader error (None)."""

    def __init__(self, at=None):
        super().__init__(at)
        self.at = at


_WS = " \t\n\r"
_SCALAR = re.compile(r'-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null')


def _reader_limit(text: str):
    """The pointer of the first reader limit crossed in `text` (None: none, or a reader
    error comes first)."""
    pos = 0

    def ws():
        nonlocal pos
        while pos < len(text) and text[pos] in _WS:
            pos += 1

    def string():
        nonlocal pos
        end = pos + 1
        while True:
            if end >= len(text) or ord(text[end]) < 0x20:
                raise _Stop()
            if text[end] == "\\":
                end += 2
            elif text[end] == '"':
                break
            else:
                end += 1
        try:
            s = json.loads(text[pos:end + 1])
            s.encode("utf-8")  # a lone surrogate escape is invalid_json
        except (ValueError, UnicodeEncodeError):
            raise _Stop()
        pos = end + 1
        return s

    def value(path, depth):
        nonlocal pos
        ws()
        c = text[pos] if pos < len(text) else ""
        if c in "[{":
            if depth >= LIMITS["max_depth"]:
                raise _Stop(_ptr(path))
            pos += 1
            ws()
            if c == "[":
                i = 0
                if text.startswith("]", pos):
                    pos += 1
                    return
                while True:
                    value(path + [i], depth + 1)
                    i += 1
                    ws()
                    if text.startswith(",", pos):
                        pos += 1
                    elif text.startswith("]", pos):
                        pos += 1
                        return
                    else:
                        raise _Stop()
            keys = []
            if text.startswith("}", pos):
                pos += 1
                return
            while True:
                if not text.startswith('"', pos):
                    raise _Stop()
                key = string()
                if len(key.encode("utf-8")) > LIMITS["max_string_bytes"]:
                    raise _Stop(_ptr(path))
                ws()
                if not text.startswith(":", pos):
                    raise _Stop()
                pos += 1
                value(path + [key], depth + 1)
                keys.append(key)
                ws()
                if text.startswith(",", pos):
                    pos += 1
                    ws()
                elif text.startswith("}", pos):
                    pos += 1
                    if len(set(keys)) != len(keys):
                        raise _Stop()  # duplicate_key
                    return
                else:
                    raise _Stop()
        elif c == '"':
            s = string()
            if len(s.encode("utf-8")) > LIMITS["max_string_bytes"]:
                raise _Stop(_ptr(path))
        else:
            m = _SCALAR.match(text, pos)
            if not m:
                raise _Stop()
            pos = m.end()

    try:
        value([], 0)
    except _Stop as stop:
        return stop.at
    return None


def _count_limit(doc, op: str):
    """The pointer of the first parse-layer limit crossed in a read document of `op`'s
    kind, for documents whose members have the contract's types."""
    def too_many(items, key):
        return isinstance(items, list) and len(items) > LIMITS[key]

    def dims(shape):
        return isinstance(shape, list) and len(shape) > LIMITS["max_dims"]

    if not isinstance(doc, dict) or op == "plan":  # a plan has no count limit
        return None
    if op in ("placement", "runtime"):
        tensors = doc.get("tensors")
        if too_many(tensors, "max_tensors"):
            return "/tensors"
        for i, t in enumerate(tensors if isinstance(tensors, list) else []):
            if isinstance(t, dict) and dims(t.get("global_shape")):
                return f"/tensors/{i}/global_shape"
        return "/fragments" if too_many(doc.get("fragments"), "max_fragments") else None
    if op == "binding":
        return "/fragments" if too_many(doc.get("fragments"), "max_fragments") else None
    # the runtime and placement inventories: records, then per record dims and tensor_ids
    records = doc.get("tensors")
    if too_many(records, "max_fragments"):
        return "/tensors"
    seen = set()
    for i, r in enumerate(records if isinstance(records, list) else []):
        if isinstance(r, dict) and dims(r.get("global_shape")):
            return f"/tensors/{i}/global_shape"
        if isinstance(r, dict):
            seen.add(r.get("tensor_id"))
            if len(seen) > LIMITS["max_tensors"]:
                return f"/tensors/{i}"
    return None


def _document_limit(text: str, kind: str):
    """The pointer of the first limit a document of `kind` crosses, else None."""
    if len(text.encode("utf-8")) > LIMITS["max_document_bytes"]:
        return ""
    at = _reader_limit(text)
    if at is not None:
        return at
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return _count_limit(doc, kind)


# The documents of each op, in the order they are read, with their kind.
_OP_DOCUMENTS = {
    "placement.parse": [("document", "placement")], "coverage": [("document", "placement")],
    "plan": [("source", "placement"), ("target", "placement")],
    "placement.from_inventory": [("document", "inventory")],
    "runtime.from_inventory": [("document", "inventory")],
    "project.placement": [("document", "inventory")], "project.binding": [("document", "inventory")],
    "bind": [("placement", "placement"), ("binding", "binding")],
    "runtime.parse": [("document", "runtime")], "binding.parse": [("document", "binding")],
    "binding.from_inventory": [("document", "binding")],
    "plan.bind": [("plan", "plan"), ("source_binding", "binding"), ("target_binding", "binding")],
}


def limit_violation(op: str, inp: dict):
    """The pointer of the first limit a request crosses (None: within every limit)."""
    for member, kind in _OP_DOCUMENTS[op]:
        if member in inp:
            at = _document_limit(inp[member], kind)
            if at is not None:
                return at
