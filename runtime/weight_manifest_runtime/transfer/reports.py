"""What an update moved: one :class:`PairReport` per (source worker, target worker) pair,
an :class:`UpdateReport` per :func:`execute` call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PairReport", "UpdateReport"]


@dataclass
class PairReport:
    """What one (source worker, target worker) pair moved."""

    source_worker_id: str
    target_worker_id: str
    #: Bytes delivered to the copies' destinations.
    bytes: int = 0
    #: Bytes on the wire: ``bytes`` plus the gaps of spans read whole (``read_gaps``).
    wire_bytes: int = 0
    #: Contiguous runs of the pair's copies after merging (what a plain executor issues).
    runs: int = 0
    #: Operations handed to the backend.
    segments: int = 0
    #: Local copies into or out of the staging buffer.
    staged_pieces: int = 0
    batches: int = 0
    seconds: float = 0.0
    #: Of ``seconds``: waiting for batches, and copying into or out of staging.
    wait_seconds: float = 0.0
    staging_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class UpdateReport:
    """The pairs an :func:`execute` call ran, with totals."""

    mode: str
    pairs: list[PairReport] = field(default_factory=list)
    seconds: float = 0.0
    #: Of ``seconds``: lowering the copies to operations and setting up staging.
    prepare_seconds: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.pairs)

    @property
    def segments(self) -> int:
        return sum(p.segments for p in self.pairs)

    @property
    def batches(self) -> int:
        return sum(p.batches for p in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "bytes": self.bytes,
            "segments": self.segments,
            "batches": self.batches,
            "seconds": self.seconds,
            "prepare_seconds": self.prepare_seconds,
            "pairs": [p.to_dict() for p in self.pairs],
        }
