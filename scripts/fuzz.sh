#!/usr/bin/env bash
# Fuzzing the readers, parsers, adapters and encoder (cargo-fuzz on stable, `-s none`).
#
#   scripts/fuzz.sh smoke [SECONDS]        every target for SECONDS each (default 30): CI
#   scripts/fuzz.sh run TARGET [SECONDS]   one target, long run (default 3600)
#   scripts/fuzz.sh runs TARGET N [W]      one target for exactly N executions (no time limit),
#                                          as W workers of N/W each over one corpus (default 1)
#   scripts/fuzz.sh list                   the targets
#
# Corpora are seeded from the conformance fixtures (tests/conformance), the Mooncake
# oracle corpus (tests/mooncake/corpus, target mooncake) and, for the
# placement and plan targets, the hostile box family (scripts/slab_family.py) into
# fuzz/corpus/TARGET; findings land in fuzz/artifacts/TARGET and fail the run. A finding
# becomes a regression fixture in tests/conformance (generate.py) once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(placement_parse placement_inventory runtime_inventory binding_inventory runtime_parse binding_parse canonical plan plan_bind adapt_rules safetensors_header mooncake content_manifest)

need_cargo_fuzz() {
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz (one time)" >&2
    cargo install cargo-fuzz --version 0.13.2 --locked >&2
  fi
}

# Which fixture inputs seed which target.
seed() {
  local target=$1 dir=fuzz/corpus/$1
  mkdir -p "$dir"
  python3 - "$target" "$dir" <<'PY'
import hashlib, json, pathlib, sys
target, out = sys.argv[1], pathlib.Path(sys.argv[2])
ops = {
    "placement_parse": {"placement.parse"},
    "placement_inventory": {"placement.from_inventory"},
    "runtime_inventory": {"runtime.from_inventory", "project.placement", "project.binding"},
    "binding_inventory": {"binding.from_inventory"},
    "runtime_parse": {"runtime.parse"},
    "binding_parse": {"binding.parse"},
    "canonical": None,
    "plan": {"placement.parse", "coverage"},
    # A plan, NUL, its source binding, NUL, its target binding (fuzz/fuzz_targets/plan_bind.rs).
    "plan_bind": {"plan.bind"},
    # Seeded below from their own example files, not from fixtures.
    "adapt_rules": set(),
    "safetensors_header": set(),
    "mooncake": set(),
    "content_manifest": set(),
}[target]
for path in sorted(pathlib.Path("tests/conformance").glob("*/*.json")):
    fixture = json.loads(path.read_text())
    inputs = fixture["input"]
    texts = []
    if target == "plan_bind" and fixture["op"] == "plan.bind":
        parts = [inputs.get(k) for k in ("plan", "source_binding", "target_binding")]
        if all(isinstance(p, str) for p in parts):
            texts.append("\0".join(parts))
    elif ops is None or fixture["op"] in ops:
        texts.append(inputs.get("document"))
    if target == "placement_parse" and fixture["op"] == "bind":
        texts.append(inputs.get("placement"))
    if target == "binding_inventory" and fixture["op"] == "bind":
        texts.append(inputs.get("binding"))
    if target == "plan" and fixture["op"] == "plan":
        # Two placements: source, a NUL byte, target (fuzz/fuzz_targets/plan.rs).
        texts.append(inputs["source"] + "\0" + inputs["target"])
    for text in texts:
        if text is not None:
            data = text.encode("utf-8", "surrogatepass")
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
  case $target in
    plan_bind)
      # A plan, NUL, its source binding, NUL, its target binding (fuzz/fuzz_targets/plan_bind.rs).
      local v=tests/vectors/plan_bind side
      for side in target-binding target-binding-stale target-binding-other-digest; do
        { cat $v/plan.json; printf '\0'; cat $v/source-binding.json; printf '\0'; cat $v/$side.json; } \
          >"$dir/vector-$side"
      done
      ;;
    adapt_rules)
      cp examples/rules/*.json "$dir/"
      ;;
    mooncake)
      # Every input of the Mooncake oracle corpus that fits -max_len.
      python3 - "$dir" <<'PY'
import hashlib, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for name in ("placement.json", "storage.json"):
    for case in json.loads(pathlib.Path("tests/mooncake/corpus", name).read_text())["cases"]:
        data = case["input"].encode("utf-8")
        if len(data) <= 65536:
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
      ;;
    content_manifest)
      # The content manifest of a small checkpoint, written by this project's CLI (the
      # fuzzer grows fragments and partials from the schema's members).
      local bin=${CARGO_TARGET_DIR:-target}/debug/weight-manifest
      [ -x "$bin" ] || cargo build --locked -q
      python3 - "$dir" <<'PY'
import json, pathlib, struct, sys
out = pathlib.Path(sys.argv[1])
header = {"a.weight": {"dtype": "U8", "shape": [4, 6], "data_offsets": [0, 24]},
          "b.bias": {"dtype": "F32", "shape": [3], "data_offsets": [24, 36]}}
text = json.dumps(header, separators=(",", ":")).encode()
data = bytes(range(24)) + struct.pack("<3f", 1.0, -2.5, 3.25)
(out / "checkpoint.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
PY
      "$bin" content checkpoint "$dir/checkpoint.safetensors" --block-elements 4 -o "$dir/manifest-tensors"
      rm "$dir/checkpoint.safetensors"
      ;;
    safetensors_header)
      # The real MiniLM header alone, and as a file with its 8-byte length prefix.
      local header=tests/vectors/minilm/model.safetensors.header.json
      cp "$header" "$dir/minilm-header"
      python3 -c 'import struct,sys; h=open(sys.argv[1],"rb").read(); sys.stdout.buffer.write(struct.pack("<Q",len(h))+h)' \
        "$header" >"$dir/minilm-file"
      ;;
  esac
  # The hostile slab family of SECURITY.md ("Superlinear paths and their bounds"): 3-, 4-
  # and 5-D, small m (each seed well under 100 KB).
  case $target in
    placement_parse|plan)
      local ndim m file
      for ndim in 3 4 5; do
        for m in 4 16 64; do
          file=$dir/slab-family-${ndim}d-m$m
          python3 scripts/slab_family.py --ndim "$ndim" --m "$m" -o "$file"
        done
      done
      ;;
  esac
}

# run_target TARGET SECONDS [RUNS [WORKERS]]: fuzz for SECONDS, or for exactly RUNS
# executions in all, split over WORKERS processes sharing the corpus (libFuzzer -jobs).
run_target() {
  local target=$1 seconds=$2 runs=${3:-} workers=${4:-1} log rc=0 budget
  seed "$target"
  if [ -n "$runs" ] && [ "$workers" -gt 1 ]; then
    if [ $((runs % workers)) -ne 0 ]; then
      echo "$runs executions do not split evenly over $workers workers" >&2
      return 2
    fi
    budget=(-runs=$((runs / workers)) -jobs="$workers" -workers="$workers")
    echo "== fuzz $target for $runs executions ($workers workers of $((runs / workers)))" >&2
  elif [ -n "$runs" ]; then
    budget=(-runs="$runs")
    echo "== fuzz $target for $runs executions" >&2
  else
    budget=(-max_total_time="$seconds")
    echo "== fuzz $target for ${seconds}s" >&2
  fi
  log=$(mktemp)
  cargo fuzz run -s none "$target" "fuzz/corpus/$target" -- \
    "${budget[@]}" -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
    -print_final_stats=1 >"$log" 2>&1 || rc=$?
  # With -jobs each worker logs to fuzz-JOB.log in the working directory.
  local logs=("$log")
  if [ "$workers" -gt 1 ]; then
    mapfile -t -O 1 logs < <(ls fuzz-*.log 2>/dev/null)
  fi
  for one in "${logs[@]}"; do
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$one" || true
    grep -E '^Done [0-9]+ runs in [0-9]+ second' "$one" || true
  done
  if compgen -G "fuzz/artifacts/$target/*" >/dev/null; then
    grep -E '(ERROR|SUMMARY|panicked)' "$log" | head -5 >&2 || true
    echo "FINDING in $target: see fuzz/artifacts/$target/" >&2
    rm -f "$log"
    return 1
  fi
  if [ "$rc" -ne 0 ]; then
    tail -20 "$log" >&2
    echo "fuzzing $target failed without a finding (exit $rc)" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

case "${1:-}" in
  list) printf '%s\n' "${TARGETS[@]}" ;;
  smoke)
    need_cargo_fuzz
    seconds=${2:-30}
    failed=0
    for target in "${TARGETS[@]}"; do run_target "$target" "$seconds" || failed=$((failed + 1)); done
    echo "$(( ${#TARGETS[@]} - failed )) passed, $failed failed"
    [ "$failed" -eq 0 ]
    ;;
  run)
    need_cargo_fuzz
    run_target "${2:?target}" "${3:-3600}"
    ;;
  runs)
    need_cargo_fuzz
    rm -f fuzz-*.log
    run_target "${2:?target}" 0 "${3:?number of executions}" "${4:-1}"
    ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
