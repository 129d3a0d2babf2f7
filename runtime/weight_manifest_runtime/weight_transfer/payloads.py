"""The JSON payloads of vLLM's weight-sync API for this backend, checked against their
schema (``schema/runtime/vllm-weight-transfer.schema.json``) with ``jsonschema`` by the end
that sends them and by the end that receives them: a malformed one is
``vllm_transfer_payload_invalid`` with the schema's complaint and its JSON pointer, before
anything is done."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weight_manifest.errors import manifest_error as _error
from .. import wire_schemas

__all__ = ["INIT_INFO", "OUTCOME", "SCHEMA_FILE", "UPDATE_INFO", "check"]

SCHEMA_FILE = "vllm-weight-transfer.schema.json"
INIT_INFO, UPDATE_INFO, OUTCOME = "InitInfo", "UpdateInfo", "Outcome"


def check(definition: str, payload: Any, what: str) -> dict[str, Any]:
    """``payload`` as a dict if it is a valid ``definition`` (``InitInfo``, ``UpdateInfo``,
    ``Outcome``); else ``vllm_transfer_payload_invalid`` naming ``what`` it is, the first
    complaint and where."""
    if not isinstance(payload, Mapping):
        raise _error("vllm_transfer_payload_invalid", f"{what} is not a JSON object but {type(payload).__name__}", "")
    validator = wire_schemas.validator(SCHEMA_FILE, definition)
    errors = sorted(validator.iter_errors(dict(payload)), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = wire_schemas.pointer(first.absolute_path)
        raise _error("vllm_transfer_payload_invalid",
                     f"{what} is not a valid {definition} (schema/runtime/{SCHEMA_FILE}) at {where or '/'}: "
                     f"{first.message}", where)
    return dict(payload)
