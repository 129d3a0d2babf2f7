#!/usr/bin/env bash
# Whole-process benchmarks (BENCHMARKS.md): builds the release CLI, generates the workloads
# (hidden `bench-data` command; nothing large is stored in the repository), then runs each
# command RUNS times under /usr/bin/time and prints the median wall time and peak RSS next
# to `sha256sum` of the same file, measured in the same run (cpu = user + sys). The ratios to
# sha256sum are the figures that survive a noisy machine.
#
#   scripts/bench.sh                 # all workloads, 5 runs each
#   RUNS=9 scripts/bench.sh deepseek # one workload: deepseek | kimi | plan
#   BENCH_DIR=/tmp/wm-bench scripts/bench.sh   # keep (and reuse) the generated files
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
DIR=${BENCH_DIR:-$(mktemp -d)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR"
ONLY=${1:-all}

cargo build --release -q
BIN=${CARGO_TARGET_DIR:-target}/release/weight-manifest

# generate FILE ARGS...: writes the workload once (reused when BENCH_DIR is kept).
generate() {
    local file=$DIR/$1
    shift
    [ -s "$file" ] || "$BIN" bench-data "$@" -o "$file"
}

# median: the middle line of sorted numbers on standard input.
median() {
    sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# measure LABEL FILE COMMAND...: RUNS timed runs of COMMAND and of `sha256sum FILE`,
# interleaved so both see the same machine; prints one table row (medians; cpu = user + sys).
measure() {
    local label=$1 file=$2
    shift 2
    local log=$DIR/time.log walls=() cpus=() rss=() sums=() sum_cpus=()
    cat "$file" >/dev/null # page cache
    for _ in $(seq "$RUNS"); do
        if ! /usr/bin/time -f "%e %M %U %S" -o "$log" "$@" >/dev/null 2>"$DIR/stderr.log"; then
            cat "$DIR/stderr.log" >&2
            exit 1
        fi
        read -r wall kb user sys <"$log"
        walls+=("$wall")
        rss+=("$kb")
        cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')")
        /usr/bin/time -f "%e %U %S" -o "$log" sha256sum "$file" >/dev/null
        read -r wall user sys <"$log"
        sums+=("$wall")
        sum_cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')")
    done
    local wall_m cpu_m rss_m sum_m sum_cpu_m bytes
    wall_m=$(printf '%s\n' "${walls[@]}" | median)
    cpu_m=$(printf '%s\n' "${cpus[@]}" | median)
    rss_m=$(printf '%s\n' "${rss[@]}" | median)
    sum_m=$(printf '%s\n' "${sums[@]}" | median)
    sum_cpu_m=$(printf '%s\n' "${sum_cpus[@]}" | median)
    bytes=$(stat -L -c %s "$file")
    awk -v l="$label" -v b="$bytes" -v w="$wall_m" -v c="$cpu_m" -v r="$rss_m" \
        -v s="$sum_m" -v sc="$sum_cpu_m" 'BEGIN {
        printf "| %-32s | %7.1f | %6.2f | %6.2f | %8.1f | %5.2f | %6.2f | %6.2f | %5.2f | %5.2f |\n",
            l, b / 1e6, w, c, r / 1024, r * 1024 / b, s, sc,
            (s > 0 ? w / s : 0), (sc > 0 ? c / sc : 0)
    }'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "sha_ni: $(grep -qw sha_ni /proc/cpuinfo && echo yes || echo no), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS (medians)"
echo
echo "| workload / command               | file MB | wall s | cpu s  | peak MiB | RSS/file | sha256sum wall s | sha256sum cpu s | wall ratio | cpu ratio |"
echo "|----------------------------------|---------|--------|--------|----------|----------|--------|--------|-------|-------|"

if [ "$ONLY" = all ] || [ "$ONLY" = deepseek ]; then
    generate deepseek-v3.placement.json --model deepseek-v3 --kind placement
    generate deepseek-v3.inventory.json --model deepseek-v3 --kind runtime-inventory
    measure "DeepSeek-V3 placement validate" "$DIR/deepseek-v3.placement.json" \
        "$BIN" placement validate "$DIR/deepseek-v3.placement.json"
    measure "DeepSeek-V3 runtime inventory" "$DIR/deepseek-v3.inventory.json" \
        "$BIN" runtime validate --inventory "$DIR/deepseek-v3.inventory.json"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = kimi ]; then
    generate kimi-k2.placement.json --model kimi-k2 --kind placement
    generate kimi-k2.inventory.json --model kimi-k2 --kind runtime-inventory
    measure "Kimi-K2 DP14 placement validate" "$DIR/kimi-k2.placement.json" \
        "$BIN" placement validate "$DIR/kimi-k2.placement.json"
    measure "Kimi-K2 DP14 runtime inventory" "$DIR/kimi-k2.inventory.json" \
        "$BIN" runtime validate --inventory "$DIR/kimi-k2.inventory.json"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = plan ]; then
    # The reshard workload (issue 9): the DeepSeek-V3 placement, TP8/EP8/PP4/DP2, planned
    # onto TP4/EP16/PP8/DP2; written by a tool test of tests/plan_deepseek.rs (`--cfg wm_tools`).
    src=$DIR/deepseek-v3.tp8-ep8-pp4-dp2.json tgt=$DIR/deepseek-v3.tp4-ep16-pp8-dp2.json
    if [ ! -s "$src" ] || [ ! -s "$tgt" ]; then
        PLAN_BENCH_DIR=$DIR RUSTFLAGS="--cfg wm_tools" cargo test --release -q --test plan_deepseek \
            write_reshard_workload >/dev/null
    fi
    # sha256sum of both inputs together: the bytes the command reads.
    [ -s "$DIR/reshard-inputs.json" ] || cat "$src" "$tgt" >"$DIR/reshard-inputs.json"
    measure "DeepSeek-V3 reshard plan -o FILE" "$DIR/reshard-inputs.json" \
        "$BIN" plan "$src" "$tgt" --stats -o "$DIR/plan.json"
fi
