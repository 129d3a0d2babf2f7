"""The executor's options as one value: :class:`ExecuteOptions`, the ``ExecuteOptions`` of
``schema/runtime/protocol.schema.json`` (contract §23), with its defaults from
:mod:`.defaults`.

A coordinator sends it as an ``execute`` or ``delta_prepare`` request's ``options``
(:meth:`ExecuteOptions.to_wire`), a member reads it back (:meth:`ExecuteOptions.from_wire`),
and :func:`weight_manifest_runtime.transfer.execute` runs under it. A value outside the
schema's bounds is refused when it is made, with ``transfer_arguments_invalid`` and the
JSON pointer of the option, so an executor never sees one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from weight_manifest.errors import manifest_error as _error
from .defaults import (
    DEFAULT_BATCH_SEGMENTS,
    DEFAULT_CONCURRENT_PAIRS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_SEGMENTS,
    DEFAULT_STAGE_BELOW,
    DEFAULT_STAGING_BYTES,
    DEFAULT_STALL_SECONDS,
)

__all__ = ["ExecuteOptions"]


@dataclass(frozen=True)
class ExecuteOptions:
    """How the executor moves a bound plan's bytes; every member has its default."""

    #: Engine operations per submitted batch (>= 1).
    batch_segments: int = DEFAULT_BATCH_SEGMENTS
    #: Batches of one pair in flight at once (>= 1).
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    #: Runs shorter than this many bytes move through staging (0: nothing is staged).
    stage_below: int = DEFAULT_STAGE_BELOW
    #: The bound of the staging buffer the executor makes when it is given none (< 2: none).
    staging_bytes: int = DEFAULT_STAGING_BYTES
    #: The segments a delta's coalescing may cut a pair's changed ranges into (>= 1).
    max_segments: int = DEFAULT_MAX_SEGMENTS
    #: A pair whose batches make no progress this long fails with ``transfer_timeout`` (> 0).
    stall_seconds: float = DEFAULT_STALL_SECONDS
    #: Pairs a worker runs at once, each with its own staging buffer (>= 1; 1: one after
    #: another). More keep a worker's links busy when its remotes differ in what they get.
    concurrent_pairs: int = DEFAULT_CONCURRENT_PAIRS

    def __post_init__(self) -> None:
        for name in ("batch_segments", "max_in_flight", "max_segments", "stage_below", "staging_bytes",
                     "concurrent_pairs"):
            value = getattr(self, name)
            # JSON Schema's integer: a number without a fraction, never a boolean.
            if isinstance(value, float) and value.is_integer():
                object.__setattr__(self, name, value := int(value))
            least = 0 if name in ("stage_below", "staging_bytes") else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise _error("transfer_arguments_invalid",
                             f"the executor option {name} must be an integer >= {least}, not {value!r}", f"/{name}")
        stall = self.stall_seconds
        if isinstance(stall, bool) or not isinstance(stall, (int, float)) or not stall > 0:
            raise _error("transfer_arguments_invalid",
                         f"the executor option stall_seconds must be a number > 0, not {stall!r}", "/stall_seconds")

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> ExecuteOptions:
        """The options a request carries (any member left out has its default);
        ``transfer_arguments_invalid`` with the pointer of a member the schema does not
        name or a value outside its bounds."""
        if not isinstance(wire, Mapping):
            raise _error("transfer_arguments_invalid", f"the executor options must be an object, not {wire!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in wire if k not in names)
        if unknown:
            raise _error("transfer_arguments_invalid",
                         f"{unknown[0]!r} is not an executor option (they are {', '.join(sorted(names))})",
                         "/" + unknown[0].replace("~", "~0").replace("/", "~1"))
        return cls(**wire)

    def to_wire(self) -> dict[str, Any]:
        """The options as a request carries them: every member, by its schema name."""
        return dataclasses.asdict(self)
