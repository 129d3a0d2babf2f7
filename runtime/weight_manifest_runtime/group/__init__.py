"""A weight-update group: the member role (:class:`Member`), the coordinator's
orchestration (:class:`Coordinator`), and the transports that carry its calls: Ray
(:mod:`weight_manifest_runtime.group.ray`, the control plane across hosts; needs the ``ray``
extra), child processes on one host (:mod:`.pipe`) and this process (:mod:`.local`)."""

from .coordinator import Coordinator, MemberInfo, Outcome, ProgressCallback, Side, Transport
from .local import LocalGroup
from .member import Handler, Member, ProgressSink
from .pipe import PipeGroup, serve_pipe

__all__ = [
    "Coordinator",
    "Handler",
    "LocalGroup",
    "Member",
    "MemberInfo",
    "Outcome",
    "PipeGroup",
    "ProgressCallback",
    "ProgressSink",
    "Side",
    "Transport",
    "serve_pipe",
]
