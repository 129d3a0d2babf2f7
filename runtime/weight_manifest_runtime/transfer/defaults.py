"""The executor's default bounds, shared by the executor, its backends and the workers."""

DEFAULT_BATCH_SEGMENTS = 256
# The engine's TCP lanes reject work beyond their queue (measured: 4 x 1,024 segments in
# flight fail with "queue-full"); 4 x 256 stays below it.
DEFAULT_MAX_IN_FLIGHT = 4
DEFAULT_STAGE_BELOW = 256 << 10
DEFAULT_STAGING_BYTES = 64 << 20
#: A pair whose batches make no progress for this long fails with ``transfer_timeout``
#: (a partitioned link, a hung peer); the engine itself has no bound on TCP.
DEFAULT_STALL_SECONDS = 30.0
#: No bound on the segments a delta's coalescing may cut a pair's changed ranges into.
DEFAULT_MAX_SEGMENTS = 1 << 32
#: Pairs a worker runs at once (1: one after another, the schedule's staggered order).
DEFAULT_CONCURRENT_PAIRS = 1
