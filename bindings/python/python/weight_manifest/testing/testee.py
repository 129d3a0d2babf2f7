"""The conformance testee of the Python binding: ``python -m weight_manifest.testing.testee``.

Speaks the NDJSON protocol of the conformance spec on standard input and output. Every
operation runs through the public Python API: documents are read with the core's strict
reader into Python data (dicts, lists, exact ints), inventories go through
``X.from_runtime_inventory``, and every result is rebuilt once more with
``dataclasses.replace`` (the dataclass constructors) before it is emitted, so the corpus
exercises the conversions in both directions.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, Callable, Optional, TextIO

from .. import _native, content, mooncake
from .._analysis import PlanLimits, bind_plan, coverage, plan
from .._manifests import (
    PlacementManifest,
    RuntimeBindingManifest,
    RuntimeManifest,
    bind_runtime_manifest,
    placement_manifest_from_runtime_manifest,
    runtime_binding_from_runtime_manifest,
)


def _placement_result(manifest: PlacementManifest) -> dict[str, Any]:
    manifest = dataclasses.replace(manifest)
    return {
        "canonical": manifest.to_json(),
        "placement_id": manifest.placement_id,
        "digest": manifest.digest,
    }


def _runtime_result(manifest: RuntimeManifest) -> dict[str, Any]:
    manifest = dataclasses.replace(manifest)
    return {"runtime": _native.runtime_to_json(manifest), "generation": manifest.generation}


def _binding_result(manifest: RuntimeBindingManifest) -> dict[str, Any]:
    manifest = dataclasses.replace(manifest)
    return {"binding": _native.binding_to_json(manifest)}


def _runtime(inputs: dict[str, Any]) -> RuntimeManifest:
    inventory = _native.read_inventory_json(inputs["document"], "runtime")
    return RuntimeManifest.from_runtime_inventory(
        inventory, address_semantics=inputs.get("address_semantics")
    )


def _binding(text: str, inputs: dict[str, Any]) -> RuntimeBindingManifest:
    inventory = _native.read_inventory_json(text, "binding")
    return RuntimeBindingManifest.from_runtime_inventory(
        inventory, address_semantics=inputs.get("address_semantics")
    )


def _bind(inputs: dict[str, Any]) -> dict[str, Any]:
    placement = PlacementManifest.from_json(inputs["placement"])
    binding = _binding(inputs["binding"], inputs)
    return _runtime_result(bind_runtime_manifest(placement, binding))


def _plan_bind(inputs: dict[str, Any]) -> dict[str, Any]:
    """plan.bind through ``bind_plan``: on the texts, in the contract's reading order; an
    accepted request is bound once more from ``RuntimeBindingManifest`` objects, which must
    give the same bytes."""
    fences: dict[str, Any] = {
        "source_generation": inputs.get("source_generation"),
        "target_generation": inputs.get("target_generation"),
    }
    source, target = inputs["source_binding"], inputs["target_binding"]
    bound = bind_plan(inputs["plan"], source, target, **fences)
    objects = [
        dataclasses.replace(_native.binding_from_json(RuntimeBindingManifest, text))
        for text in (source, target)
    ]
    if bind_plan(inputs["plan"], *objects, **fences).to_json() != bound.to_json():
        raise AssertionError("bind_plan differs between binding texts and objects")
    return {"bound_plan": bound.to_json(), "bound_plan_id": bound.bound_plan_id}


def _coverage(inputs: dict[str, Any]) -> dict[str, Any]:
    """coverage through ``coverage`` on the document text."""
    report = coverage(inputs["document"])
    if inputs.get("require_complete"):
        report.require_complete()
    return {"report": report.to_json()}


def _plan(inputs: dict[str, Any]) -> dict[str, Any]:
    """plan through ``plan`` on the two texts, with the request's limits."""
    given = {k: inputs[k] for k in ("max_regions", "max_segments") if k in inputs}
    result = plan(inputs["source"], inputs["target"], limits=PlanLimits(**given),
                  quantization=inputs.get("quantization"))
    return {"plan": result.to_json(), "plan_id": result.plan_id}


def _box(inputs: dict[str, Any]) -> tuple[Any, ...]:
    """A content request's bytes and geometry, in the order of ``partial_of_bytes``."""
    return (bytes.fromhex(inputs["bytes"]), inputs["tensor_id"], inputs.get("global_shape", []),
            inputs["itemsize"], inputs.get("global_offset", []), inputs.get("local_shape", []),
            inputs["block_elements"])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _content_partial(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"partial": _canonical(content.partial_of_bytes(*_box(inputs)))}


def _content_values(inputs: dict[str, Any]) -> dict[str, Any]:
    values = content.block_values_of_bytes(*_box(inputs))
    return {"values": _canonical([{"block": b, "row": r, "value": f"{v:032x}"} for r, b, v in values])}


def _content_combine(inputs: dict[str, Any]) -> dict[str, Any]:
    """content.combine through ``digests``: each fragment as a record of its tensor."""
    tensor = {k: inputs[k] for k in ("tensor_id", "itemsize")}
    tensor["global_shape"] = inputs.get("global_shape", [])
    records = [{**tensor, **fragment} for fragment in json.loads(inputs["fragments"])]
    found = content.digests(records, inputs["block_elements"])
    return {"digest": found[inputs["tensor_id"]]}


def _mooncake_validate(inputs: dict[str, Any]) -> dict[str, Any]:
    facts = mooncake.validate(inputs["mooncake"])
    return {k: facts[k] for k in ("canonical", "placement_id", "digest", "topology_id")}


def _mooncake_export(inputs: dict[str, Any]) -> dict[str, Any]:
    text = mooncake.export_placement(inputs["document"], overrides=inputs.get("overrides"))
    facts = mooncake.validate(text)
    return {"canonical": text, **{k: facts[k] for k in ("placement_id", "digest", "topology_id")}}


def _mooncake_import(inputs: dict[str, Any]) -> dict[str, Any]:
    return _placement_result(mooncake.import_placement(inputs["mooncake"]).placement)


def _mooncake_binding(inputs: dict[str, Any]) -> dict[str, Any]:
    mooncake.validate_bindings(inputs["mooncake"], inputs["placement"])
    return {}


def _mooncake_storage(inputs: dict[str, Any]) -> dict[str, Any]:
    text, digest = mooncake.validate_storage(inputs["mooncake"])
    return {"mooncake_text": text, "digest": digest}


_OPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "placement.parse": lambda i: _placement_result(
        PlacementManifest.from_json(i["document"])
    ),
    "placement.from_inventory": lambda i: _placement_result(
        PlacementManifest.from_runtime_inventory(
            _native.read_inventory_json(i["document"], "placement")
        )
    ),
    "runtime.from_inventory": lambda i: _runtime_result(_runtime(i)),
    "binding.from_inventory": lambda i: _binding_result(_binding(i["document"], i)),
    "project.placement": lambda i: _placement_result(
        placement_manifest_from_runtime_manifest(
            _runtime(i), placement_id=i.get("placement_id")
        )
    ),
    "project.binding": lambda i: _binding_result(
        runtime_binding_from_runtime_manifest(
            _runtime(i), placement_id=i.get("placement_id")
        )
    ),
    "bind": _bind,
    "runtime.parse": lambda i: _runtime_result(
        _native.runtime_from_json(RuntimeManifest, i["document"])
    ),
    "binding.parse": lambda i: _binding_result(
        _native.binding_from_json(RuntimeBindingManifest, i["document"])
    ),
    "plan.bind": _plan_bind,
    "coverage": _coverage,
    "plan": _plan,
    "content.partial": _content_partial,
    "content.block_values": _content_values,
    "content.combine": _content_combine,
    "content.manifest": lambda i: {"content_manifest": content.verify_manifest(i["document"])},
    "mooncake.validate": _mooncake_validate,
    "mooncake.storage": _mooncake_storage,
    "mooncake.export": _mooncake_export,
    "mooncake.import": _mooncake_import,
    "mooncake.plan": lambda i: {"mooncake_plan": mooncake.plan_json(i["source"], i["target"])},
    "mooncake.binding": _mooncake_binding,
}


def respond(line: str) -> dict[str, Any]:
    """The response to one request line."""
    request_id: Optional[Any] = None
    try:
        request = json.loads(line)
        request_id = request.get("id")
        operation = _OPS.get(request.get("op"))
        if operation is None:
            return {"id": request_id, "skipped": True}
        result = operation(request.get("input") or {})
        return {"id": request_id, "ok": True, "result": result}
    except _native.ManifestError as error:
        body = {"code": error.code, "message": str(error)}
        if error.path is not None:
            body["path"] = error.path
        return {"id": request_id, "ok": False, "error": body}
    except Exception as error:  # noqa: BLE001 - a bad request is answered, never fatal
        message = f"{type(error).__name__}: {error}"
        return {
            "id": request_id,
            "ok": False,
            "error": {"code": "bad_request", "message": message},
        }


def serve(source: TextIO, sink: TextIO) -> None:
    """Answers requests until end of input."""
    for line in source:
        if not line.strip():
            continue
        sink.write(json.dumps(respond(line)) + "\n")
        sink.flush()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
