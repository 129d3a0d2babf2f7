"""The JSON payloads of vLLM's weight-sync API for this backend, checked against their
schema (``schema/runtime/vllm-weight-transfer.schema.json``) with ``jsonschema`` by the end
that sends them and by the end that receives them: a malformed one is
``vllm_transfer_payload_invalid`` with the schema's complaint and its JSON pointer, before
anything is done."""

from __future__ import annotations

import functools
import json
from importlib import resources
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from weight_manifest.errors import manifest_error as _error

__all__ = ["INIT_INFO", "OUTCOME", "SCHEMA_FILE", "UPDATE_INFO", "check", "schema_path"]

SCHEMA_FILE = "vllm-weight-transfer.schema.json"
INIT_INFO, UPDATE_INFO, OUTCOME = "InitInfo", "UpdateInfo", "Outcome"


def schema_path() -> Path:
    """The schema file, as installed with the runtime (its ``schemas`` folder is the
    repository's ``schema/runtime``)."""
    return Path(str(resources.files("weight_manifest_runtime").joinpath("schemas", SCHEMA_FILE)))


@functools.lru_cache(maxsize=None)
def _validator(definition: str) -> Any:
    import jsonschema  # type: ignore[import-untyped]

    schema = json.loads(schema_path().read_text())
    whole = {**schema, "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(whole)


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def check(definition: str, payload: Any, what: str) -> dict[str, Any]:
    """``payload`` as a dict if it is a valid ``definition`` (``InitInfo``, ``UpdateInfo``,
    ``Outcome``); else ``vllm_transfer_payload_invalid`` naming ``what`` it is, the first
    complaint and where."""
    if not isinstance(payload, Mapping):
        raise _error("vllm_transfer_payload_invalid", f"{what} is not a JSON object but {type(payload).__name__}", "")
    errors = sorted(_validator(definition).iter_errors(dict(payload)), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = _pointer(first.absolute_path)
        raise _error("vllm_transfer_payload_invalid",
                     f"{what} is not a valid {definition} (schema/runtime/{SCHEMA_FILE}) at {where or '/'}: "
                     f"{first.message}", where)
    return dict(payload)
