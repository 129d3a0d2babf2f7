#!/usr/bin/env bash
# Content digest throughput on one core (BENCHMARKS.md, "Content digests (issue 20)"):
# `weight-manifest content checkpoint` of a synthetic safetensors file (bfloat16 and
# float32 tensors with rows of 4096 elements, so B = 64 blocks are 128 and 256 bytes),
# next to `sha256sum` of the same file and a memmove of its bytes (`dd` from the page cache
# into a user buffer: one copy of every byte), in the same run, pinned to one core. Medians
# of RUNS; the ratios are the figures to compare across machines.
#
#   RUNS=5 MIB=1024 scripts/bench-content.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
MIB=${MIB:-1024}
CORE=${CORE:-0}
cargo build --release -q -p weight-manifest-cli
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/weight-manifest
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/model.safetensors

python3 - "$FILE" "$MIB" <<'PY'
import json, os, struct, sys
path, mib = sys.argv[1], int(sys.argv[2])
half = mib * (1 << 20) // 2
rows_bf16, rows_f32 = half // (4096 * 2), half // (4096 * 4)
header = {
    "w.bf16": {"dtype": "BF16", "shape": [rows_bf16, 4096], "data_offsets": [0, half]},
    "w.f32": {"dtype": "F32", "shape": [rows_f32, 4096], "data_offsets": [half, 2 * half]},
}
text = json.dumps(header).encode()
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    chunk = os.urandom(1 << 24)
    for _ in range(2 * half // len(chunk)):
        f.write(chunk)
    f.write(chunk[: 2 * half % len(chunk)])
PY
BYTES=$(stat -c %s "$FILE")
cat "$FILE" > /dev/null  # into the page cache

seconds() {
  local start end
  start=$(date +%s.%N)
  taskset -c "$CORE" "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A times
for _ in $(seq "$RUNS"); do
  times[content]+="$(seconds "$BIN" -q content checkpoint "$FILE" -o "$WORK/content.json")"$'\n'
  times[sha256sum]+="$(seconds sha256sum "$FILE")"$'\n'
  times[memmove]+="$(seconds dd if="$FILE" of=/dev/null bs=1M)"$'\n'
done
printf 'file: %d bytes (%d MiB), %d runs on core %s\n' "$BYTES" "$MIB" "$RUNS" "$CORE"
printf '%-10s %10s %10s\n' what seconds GB/s
declare -A rate
for what in content sha256sum memmove; do
  t=$(printf '%s' "${times[$what]}" | median)
  rate[$what]=$(echo "$BYTES / $t / 1000000000" | bc -l)
  printf '%-10s %10.3f %10.2f\n' "$what" "$t" "${rate[$what]}"
done
printf 'content / sha256sum: %.2fx   content / memmove: %.2fx\n' \
  "$(echo "${rate[content]} / ${rate[sha256sum]}" | bc -l)" \
  "$(echo "${rate[content]} / ${rate[memmove]}" | bc -l)"
