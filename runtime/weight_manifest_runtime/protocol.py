"""The control protocol of a weight-update group, as ``schema/runtime/protocol.schema.json``
describes it (contract §23): a coordinator's calls to its members and their replies.

Both ends check every message against the schema: the coordinator a request before it
sends it and each reply it receives, a member each request it receives. A message outside
the schema is refused with ``protocol_message_invalid``, naming the operation and the JSON
pointer of what is wrong; nothing is done. Operations the runtime does not define are an
application's (handlers given to a member) and are checked only for their name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

# jsonschema ships no type information (and the lock has no stubs for it).
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from weight_manifest.errors import manifest_error as _error
from . import wire_schemas

__all__ = ["RUNTIME_OPERATIONS", "check_reply", "check_request", "schema"]

SCHEMA_FILE = "protocol.schema.json"


def schema() -> dict[str, Any]:
    """The protocol's JSON Schema, as installed with the runtime."""
    return wire_schemas.document(SCHEMA_FILE)


@cache
def _validators() -> tuple[dict[str, Draft202012Validator], Draft202012Validator, Draft202012Validator]:
    """One validator per runtime operation (chosen by ``op``: no search through the
    alternatives), the application requests' and the replies'."""
    document = schema()
    by_op: dict[str, Draft202012Validator] = {}
    for alternative in document["$defs"]["Request"]["oneOf"]:
        name = alternative["$ref"].rsplit("/", 1)[1]
        op = document["$defs"][name].get("properties", {}).get("op", {}).get("const")
        if op is not None:
            by_op[op] = wire_schemas.validator(SCHEMA_FILE, name)
    return by_op, wire_schemas.validator(SCHEMA_FILE, "ApplicationRequest"), wire_schemas.validator(SCHEMA_FILE, "Reply")


RUNTIME_OPERATIONS: frozenset[str] = frozenset(schema()["$defs"]["RuntimeOperation"]["enum"])
"""The names of the runtime's own operations."""


def _refuse(what: str, error: ValidationError) -> Exception:
    pointer = wire_schemas.pointer(error.absolute_path)
    return _error("protocol_message_invalid", f"{what} is not a message of the control protocol: {error.message} "
                  f"(at {pointer or 'its root'})", pointer or None)


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
