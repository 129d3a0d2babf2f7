#!/usr/bin/env bash
# The core crate is what every Rust user compiles: at most 22 crates in its normal
# dependency tree (itself included), and none of the CLI's or the adapter's.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=22
FORBIDDEN="clap mimalloc libmimalloc-sys memmap2 indicatif console regex safetensors libfuzzer-sys"
crates=$(cargo tree --locked -q -p weight-manifest -e normal --prefix none --format '{p}' \
  | sed -e 's/ (.*//' -e 's/ v[0-9].*//' | sort -u)
count=$(printf '%s\n' "$crates" | grep -c .)
status=0
for name in $FORBIDDEN; do
  if printf '%s\n' "$crates" | grep -qx "$name"; then
    echo "check-core-deps: the core depends on $name (cargo tree -p weight-manifest -e normal -i $name)" >&2
    status=1
  fi
done
if [ "$count" -gt "$MAX" ]; then
  echo "check-core-deps: the core's normal dependency tree has $count crates (at most $MAX):" >&2
  printf '  %s\n' $crates >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "core dependencies: $count crates (at most $MAX), none of: $FORBIDDEN"
exit "$status"
