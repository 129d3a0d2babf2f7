"""The control protocol (schema/runtime/protocol.schema.json, contract §23): every operation
the runtime sends or handles is one the schema names, with the schema as the oracle (read
from the file, not from the runtime); a malformed request is refused by the member that
receives it and by the coordinator before it sends, a malformed reply by the coordinator,
each with protocol_message_invalid and the pointer of what is wrong, nothing done."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import weight_manifest as wm
from weight_manifest_runtime import protocol, transfer, wire_schemas

from conftest import ROOT
from test_group import group_of
from test_transfer import Instance

SCHEMA = json.loads((ROOT / "schema" / "runtime" / "protocol.schema.json").read_text())
PACKAGE = ROOT / "runtime" / "weight_manifest_runtime"


def schema_operations() -> set[str]:
    """The operations the schema file defines: each request definition's ``op`` constant."""
    defs = SCHEMA["$defs"]
    ops = set()
    for alternative in defs["Request"]["oneOf"]:
        op = defs[alternative["$ref"].rsplit("/", 1)[1]]["properties"]["op"]
        if "const" in op:
            ops.add(op["const"])
    return ops


def sent_and_handled() -> tuple[set[str], set[str]]:
    """The operation names the runtime's source sends (a dict literal's ``"op"`` value) and
    handles (``op == "x"`` in a member or a transport (:func:`is_op`), the keys of the table a ``handlers`` function
    returns, a handler set as ``....handlers["x"] = ...``)."""
    sent, handled = set(), set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value == "op" and isinstance(value, ast.Constant):
                        sent.add(value.value)
            if isinstance(node, ast.FunctionDef) and node.name == "handlers":
                for inner in node.body:  # its own return, not a nested handler's
                    if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Dict):
                        handled.update(k.value for k in inner.value.keys if isinstance(k, ast.Constant))
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)
                            and target.value.attr == "handlers" and isinstance(target.slice, ast.Constant)):
                        handled.add(target.slice.value)
            if (isinstance(node, ast.Compare) and is_op(node.left)
                    and isinstance(node.ops[0], ast.Eq) and isinstance(node.comparators[0], ast.Constant)):
                handled.add(node.comparators[0].value)
    return sent, handled


def is_op(node: ast.expr) -> bool:
    """Whether ``node`` reads a request's operation: ``op``, ``request.get("op")`` or
    ``request["op"]`` (a transport's own, such as the pipe's ``stop``)."""
    if isinstance(node, ast.Name):
        return node.id == "op"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "op"
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "op"


def test_the_schema_is_valid_and_names_every_operation_the_runtime_sends_or_handles() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    ops = schema_operations()
    assert set(SCHEMA["$defs"]["RuntimeOperation"]["enum"]) == ops
    sent, handled = sent_and_handled()
    assert len(sent) >= 15 and len(handled) >= 15, (sent, handled)
    assert sent - ops == set(), f"sent but not in the schema: {sorted(sent - ops)}"
    assert handled - ops == set(), f"handled but not in the schema: {sorted(handled - ops)}"
    # Every operation of the schema is one the runtime handles (none is dead wire).
    assert ops - handled == set(), f"in the schema but handled nowhere: {sorted(ops - handled)}"


@pytest.fixture()
def members() -> Any:
    source, target = Instance("src", 2, 1), Instance("dst", 1, 2, fill=False)
    coordinator, _group, members = group_of(source, target, transfer.LocalBackend())
    return coordinator, members


@pytest.mark.parametrize(("op", "body", "pointer"), [
    ("content", {"block_elements": 0}, "/block_elements"),                 # below its minimum
    ("content", {"block_elements": 64, "extra": 1}, None),                 # a member the schema lacks
    ("activate", {}, None),                                                # a required member missing
    ("execute", {"bound_plan": "{}", "mode": "sideways", "sessions": {}}, "/mode"),
    ("execute", {"bound_plan": "{}", "mode": "push", "sessions": {}, "options": {"max_in_flight": "8"}},
     "/options/max_in_flight"),
    ("lc_activate", {"generation": -1}, "/generation"),
    ("ping", {"epoch": "3", "coordinator": "c"}, "/epoch"),               # the fencing token typed too
])
def test_a_member_refuses_a_malformed_request_and_does_nothing(members: Any, op: str, body: dict[str, Any],
                                                                pointer: Any) -> None:
    _coordinator, by_id = members
    member = next(m for w, m in by_id.items() if w.startswith("dst"))
    before = member.version
    with pytest.raises(wm.ManifestError) as caught:
        member.call(op, body)
    assert caught.value.code == "protocol_message_invalid"
    assert caught.value.path == pointer
    assert op in str(caught.value) and member.worker_id in str(caught.value)
    assert member.version == before
    # Over a transport the refusal is a reply of the protocol: ok false with its code.
    reply = member.reply(op, body)
    assert reply["ok"] is False and reply["error"]["code"] == "protocol_message_invalid"
    assert not list(Draft202012Validator({"$ref": "#/$defs/Reply", "$defs": SCHEMA["$defs"]}).iter_errors(reply))


def test_the_coordinator_refuses_to_send_what_the_schema_lacks(members: Any) -> None:
    coordinator, by_id = members
    targets = coordinator.workers("target")
    asked: list[str] = []
    for m in by_id.values():
        m.handlers["verify"] = lambda body: asked.append("verify") or {}
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.request_all(targets, {"op": "snapshot", "block_elements": 64, "advanced": True})
    assert caught.value.code == "protocol_message_invalid"
    assert "'snapshot' request for worker" in str(caught.value)
    # An application's operation (a handler it gave its members) goes through by name.
    coordinator.request_all(targets, {"op": "verify", "anything": [1, 2]})
    assert asked == ["verify", "verify"]
    # But not under the name of one of the runtime's own.
    with pytest.raises(wm.ManifestError) as caught:
        coordinator.request_all(targets, {"op": "ping", "anything": 1})
    assert caught.value.code == "protocol_message_invalid"


def test_the_coordinator_refuses_a_malformed_reply(members: Any) -> None:
    coordinator, by_id = members
    target = coordinator.workers("target")[0]
    original = by_id[target].reply
    by_id[target].reply = lambda op, body: {"ok": False, "error": {"code": "x"}}  # type: ignore[method-assign]
    try:
        with pytest.raises(wm.ManifestError) as caught:
            coordinator.request_all([target], {"op": "ping"})
    finally:
        by_id[target].reply = original  # type: ignore[method-assign]
    assert caught.value.code == "protocol_message_invalid"
    assert f"worker {target}'s reply to 'ping'" in str(caught.value)


def test_the_installed_schemas_are_the_repositorys() -> None:
    assert protocol.schema() == SCHEMA
    files = sorted((ROOT / "schema" / "runtime").glob("*.schema.json"))
    assert len(files) >= 2
    for path in files:
        assert wire_schemas.document(path.name) == json.loads(path.read_text()), path.name
    assert protocol.RUNTIME_OPERATIONS == frozenset(schema_operations())


def options_validator() -> Draft202012Validator:
    return Draft202012Validator({"$ref": "#/$defs/ExecuteOptions", "$defs": SCHEMA["$defs"]})


def test_the_executor_options_are_the_schemas_execute_options() -> None:
    """The dataclass's members are the schema's properties, name for name, and what it
    sends is a valid ExecuteOptions that reads back as the same value."""
    members = {f.name for f in dataclasses.fields(transfer.ExecuteOptions)}
    assert members == set(SCHEMA["$defs"]["ExecuteOptions"]["properties"])
    assert SCHEMA["$defs"]["ExecuteOptions"]["additionalProperties"] is False
    for options in (transfer.ExecuteOptions(), transfer.ExecuteOptions(batch_segments=3, stall_seconds=0.25)):
        wire = options.to_wire()
        assert set(wire) == members
        assert not list(options_validator().iter_errors(wire)), wire
        assert transfer.ExecuteOptions.from_wire(json.loads(json.dumps(wire))) == options
    # A member left out is its default, as the schema says (each optional).
    assert transfer.ExecuteOptions.from_wire({}) == transfer.ExecuteOptions()


@pytest.mark.parametrize("name", sorted(SCHEMA["$defs"]["ExecuteOptions"]["properties"]))
def test_an_executor_option_is_refused_exactly_where_the_schema_refuses_it(name: str) -> None:
    """Around each bound of the schema and for every other JSON type, the dataclass
    accepts the value exactly when jsonschema does, and refuses it with
    transfer_arguments_invalid and the option's pointer."""
    rule = SCHEMA["$defs"]["ExecuteOptions"]["properties"][name]
    bound = rule.get("minimum", rule.get("exclusiveMinimum"))
    assert bound is not None, rule
    candidates = [bound - 1, bound, bound + 1, bound + 0.5, float(bound + 2), 1 << 40, True, False, None, "4", [4], {}]
    for value in candidates:
        valid = not list(options_validator().iter_errors({name: value}))
        try:
            transfer.ExecuteOptions.from_wire({name: value})
            accepted = True
        except wm.ManifestError as error:
            assert (error.code, error.path) == ("transfer_arguments_invalid", f"/{name}"), error
            accepted = False
        assert accepted == valid, (name, value)


def test_an_option_the_schema_lacks_is_refused_with_its_pointer() -> None:
    assert not options_validator().is_valid({"stall": 1})
    with pytest.raises(wm.ManifestError) as caught:
        transfer.ExecuteOptions.from_wire({"stall": 1})
    assert (caught.value.code, caught.value.path) == ("transfer_arguments_invalid", "/stall")
