"""The control protocol of a weight-update group, as ``schema/runtime/protocol.schema.json``
describes it (contract §23): a coordinator's calls to its members and their replies.

Both ends check every message against the schema: the coordinator a request before it
sends it and each reply it receives, a member each request it receives. A message outside
the schema is refused with ``protocol_message_invalid``, naming the operation and the JSON
pointer of what is wrong; nothing is done. Operations the runtime does not define are an
application's (handlers given to a member) and are checked only for their name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

# jsonschema ships no type information (and the lock has no stubs for it).
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from weight_manifest.errors import manifest_error as _error

__all__ = ["RUNTIME_OPERATIONS", "check_reply", "check_request", "schema"]

SCHEMA_FILE = "protocol.schema.json"


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """Every schema of the runtime's wires as installed with it, by file name (the protocol
    refers to the vLLM backend's payloads)."""
    folder = resources.files(__package__).joinpath("schemas")
    return {entry.name: json.loads(entry.read_text(encoding="utf-8"))
            for entry in folder.iterdir() if entry.name.endswith(".schema.json")}


def schema() -> dict[str, Any]:
    """The protocol's JSON Schema, as installed with the runtime."""
    return _documents()[SCHEMA_FILE]


@cache
def _validators() -> tuple[dict[str, Draft202012Validator], Draft202012Validator, Draft202012Validator]:
    """One validator per runtime operation (chosen by ``op``: no search through the
    alternatives), the application requests' and the replies'."""
    document = schema()
    registry: Registry = Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012)) for doc in _documents().values())
    for doc in _documents().values():
        Draft202012Validator.check_schema(doc)

    def of(name: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": f"{document['$id']}#/$defs/{name}"}, registry=registry)

    by_op: dict[str, Draft202012Validator] = {}
    for alternative in document["$defs"]["Request"]["oneOf"]:
        name = alternative["$ref"].rsplit("/", 1)[1]
        op = document["$defs"][name].get("properties", {}).get("op", {}).get("const")
        if op is not None:
            by_op[op] = of(name)
    return by_op, of("ApplicationRequest"), of("Reply")


RUNTIME_OPERATIONS: frozenset[str] = frozenset(schema()["$defs"]["RuntimeOperation"]["enum"])
"""The names of the runtime's own operations."""


def _refuse(what: str, error: ValidationError) -> Exception:
    pointer = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)
    return _error("protocol_message_invalid", f"{what} is not a message of the control protocol: {error.message} "
                  f"(at {pointer if error.absolute_path else 'its root'})", pointer if error.absolute_path else None)


def check_request(op: str, body: Mapping[str, Any], *, where: str) -> None:
    """Raise ``protocol_message_invalid`` unless ``{"op": op, **body}`` is a request of the
    protocol; ``where`` says who checks it (for the message)."""
    by_op, application, _ = _validators()
    validator = by_op.get(op, application)
    message = {**body, "op": op}
    error = next(iter(validator.iter_errors(message)), None)
    if error is not None:
        raise _refuse(f"the {op!r} request {where}", error)


def check_reply(op: str, reply: Any, *, worker: str) -> None:
    """Raise ``protocol_message_invalid`` unless ``reply`` (worker ``worker``'s answer to
    ``op``) is a reply of the protocol."""
    error = next(iter(_validators()[2].iter_errors(reply)), None)
    if error is not None:
        raise _refuse(f"worker {worker}'s reply to {op!r}", error)
