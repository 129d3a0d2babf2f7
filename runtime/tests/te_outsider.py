"""A process of no group and no Ray cluster that reaches a member's Transfer Engine port
(test_hosts.py): ``te_outsider.py MY_ADDRESS TARGET_SESSION TARGET_ADDRESS SOURCE_SESSION
SOURCE_ADDRESS`` writes 4 KiB of 0xAB at the target's address and reads 16 bytes at the
source's, then prints the engine's return codes and the bytes read as one JSON line."""

import json
import sys

import numpy as np
from mooncake.engine import TransferEngine

me, target, target_address, source, source_address = sys.argv[1:6]
engine = TransferEngine()
assert engine.initialize(me, "P2PHANDSHAKE", "tcp", "") == 0
buffer = np.full(4096, 0xAB, dtype=np.uint8)
engine.register_memory(int(buffer.ctypes.data), buffer.nbytes)
write = engine.transfer_sync_write(target, int(buffer.ctypes.data), int(target_address), 4096)
buffer[:] = 0
read = engine.transfer_sync_read(source, int(buffer.ctypes.data), int(source_address), 16)
print(json.dumps({"write": int(write), "read": int(read), "read_bytes": buffer[:16].tolist()}))
