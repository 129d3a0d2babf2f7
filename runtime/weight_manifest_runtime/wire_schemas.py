"""The JSON Schemas of the runtime's wires, as installed with it: its ``schemas`` folder is the
repository's ``schema/runtime`` (the control protocol, the vLLM backend's payloads).

Each file is read once and checked once as a Draft 2020-12 schema, and all of them go into
one ``referencing`` registry by their ``$id``, so that one may refer to another's
definitions (the protocol's ``wt_outcome`` to the payloads' ``Outcome``). The control
protocol (:mod:`weight_manifest_runtime.protocol`) and the payloads
(:mod:`weight_manifest_runtime.weight_transfer.payloads`) take their validators from
:func:`validator`; what each does with a complaint (its code, its message) is its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

# jsonschema ships no type information (and the lock has no stubs for it).
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = ["document", "pointer", "validator"]


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """Every schema file of the ``schemas`` folder, by file name, each checked as a schema."""
    folder = resources.files(__package__).joinpath("schemas")
    documents = {entry.name: json.loads(entry.read_text(encoding="utf-8"))
                 for entry in folder.iterdir() if entry.name.endswith(".schema.json")}
    for doc in documents.values():
        Draft202012Validator.check_schema(doc)
    return documents


def document(name: str) -> dict[str, Any]:
    """The schema file ``name`` (``protocol.schema.json``), as installed with the runtime."""
    return _documents()[name]


@cache
def _registry() -> Registry:
    return Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012)) for doc in _documents().values())


@cache
def validator(name: str, definition: str) -> Draft202012Validator:
    """A validator of the definition ``definition`` (``$defs``) of schema file ``name``, every
    reference resolved in the one registry (made once per definition)."""
    return Draft202012Validator({"$ref": f"{document(name)['$id']}#/$defs/{definition}"}, registry=_registry())


def pointer(path: Iterable[Any]) -> str:
    """The JSON pointer (RFC 6901) of a validation error's ``absolute_path``; "" at the root."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
