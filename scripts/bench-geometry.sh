#!/usr/bin/env bash
# The hostile box family of SECURITY.md ("Superlinear paths and their bounds") at growing
# sizes: `placement validate`, `coverage` and `plan F F` (onto itself) of the release CLI,
# wall time per fragment, in 3, 4 and 5 dimensions (BENCHMARKS.md, "Hostile box geometry").
#
#   scripts/bench-geometry.sh [SIZES...]     default: 10000 100000 1000000
#
# The family leaves most of its tensor uncovered, so `plan` ends in plan_uncovered_tensor
# (exit 1) after both tiling analyses of the source cover search: that is the path timed.
# The last column is the time per fragment at the largest size over that at the smallest;
# n log n scaling keeps it at log(largest)/log(smallest) (1.5 for 1M over 10k) or below.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000 1000000)
cargo build --release -q -p weight-manifest-cli
BIN=$PWD/target/release/weight-manifest
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Wall seconds of one run of the command (its exit status is ignored: see above).
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

header="dims  command   "
for n in "${SIZES[@]}"; do header+=$(printf '%16s' "us/frag@$n"); done
header+=$(printf '%10s' ratio)
echo "$header"
for ndim in 3 4 5; do
  declare -A per=()
  for n in "${SIZES[@]}"; do
    file=$WORK/family-${ndim}d-$n.json
    python3 scripts/slab_family.py --ndim "$ndim" --fragments "$n" -o "$file"
    frags=$(( (n + ndim - 1) / ndim * ndim ))
    for command in validate coverage plan; do
      case $command in
        validate) t=$(seconds "$BIN" placement validate "$file") ;;
        coverage) t=$(seconds "$BIN" coverage "$file") ;;
        plan) t=$(seconds "$BIN" plan "$file" "$file" -o /dev/null) ;;
      esac
      per[$command,$n]=$(echo "$t * 1000000 / $frags" | bc -l)
    done
    rm -f "$file"
  done
  first=${SIZES[0]}
  last=${SIZES[${#SIZES[@]}-1]}
  for command in validate coverage plan; do
    line=$(printf '%-5s %-9s' "${ndim}-D" "$command")
    for n in "${SIZES[@]}"; do line+=$(printf '%16.2f' "${per[$command,$n]}"); done
    line+=$(printf '%10.2f' "$(echo "${per[$command,$last]} / ${per[$command,$first]}" | bc -l)")
    echo "$line"
  done
  unset per
done
