#!/usr/bin/env bash
# Benchmarks of the Python binding (BENCHMARKS.md, "Python binding (issue 18)"): builds the
# release wheel into .venv and the release CLI, generates the DeepSeek-V3 placement and the
# TP8 -> TP4 reshard pair (nothing large is stored in the repository), then runs
# bindings/python/bench/bench_python.py: medians of RUNS measurements, each in a fresh
# interpreter, as ratios to CPython's json.loads of the same file (construction) and to the
# CLI (plan), measured in the same run.
#
#   scripts/bench-python.sh                  # 5 runs
#   RUNS=3 scripts/bench-python.sh
#   BENCH_DIR=/tmp/wm-pybench scripts/bench-python.sh   # keep (and reuse) the generated files
#   PY_BUILD=0 scripts/bench-python.sh       # use the wheel already installed in .venv
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
DIR=${BENCH_DIR:-$(mktemp -d)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR"

[ "${PY_BUILD:-1}" = 0 ] || make -s python-wheel PY_PROFILE=release
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-target}/release/weight-manifest

[ -s "$DIR/deepseek-v3.placement.json" ] ||
    "$BIN" -q bench-data --model deepseek-v3 --kind placement -o "$DIR/deepseek-v3.placement.json"
SOURCE=$DIR/deepseek-v3.tp8-ep8-pp4-dp2.json
TARGET=$DIR/deepseek-v3.tp4-ep16-pp8-dp2.json
[ -s "$SOURCE" ] && [ -s "$TARGET" ] ||
    PLAN_BENCH_DIR=$DIR RUSTFLAGS="--cfg wm_tools" cargo test --release -q --test plan_deepseek \
        write_reshard_workload >/dev/null

RUNS=$RUNS .venv/bin/python bindings/python/bench/bench_python.py \
    --placement "$DIR/deepseek-v3.placement.json" --source "$SOURCE" --target "$TARGET" --cli "$BIN"
