# The two commands of the README: `make example` and `make test`.
# Everything they need is installed by the targets themselves.

CARGO ?= cargo
# A build from a clean clone never reuses cargo's incremental state, which would take 3 GB
# of a CI machine's disk; set CARGO_INCREMENTAL=1 to keep it for an edit loop.
export CARGO_INCREMENTAL ?= 0
BIN := target/release/weight-manifest
EXAMPLE := examples/moe-ep-pp

.PHONY: example test test-rust conformance checks rust-consumer fuzz-smoke mooncake-oracle mutants mutants-sample mutants-tool

# Each binding adds its own targets to TEST_TARGETS in bindings/<name>/rules.mk.
TEST_TARGETS := checks test-rust rust-consumer conformance
-include $(sort $(wildcard bindings/*/rules.mk))
# The weight-update runtime (runtime/rules.mk): its tests, examples and benchmarks.
include runtime/rules.mk
# Upstream Mooncake's own code as the oracle (needs the venv with its wheel).
TEST_TARGETS += mooncake-oracle
# A fixed sample of the guards' mutants (scripts/mutants.py --sample): a new guard that no
# test pins is noticed here; `make mutants` runs them all.
TEST_TARGETS += mutants-sample
# Last: a short fuzz smoke of every target (scripts/fuzz.sh; FUZZ_SECONDS per target).
TEST_TARGETS += fuzz-smoke
FUZZ_SECONDS ?= 8

## Runs the main job on the bundled example: validate a placement, project a runtime
## inventory to its placement and binding, bind them back, and check the round trip.
example:
	$(CARGO) build --locked --release -q
	@echo "== placement validate $(EXAMPLE)/placement.json"
	$(BIN) placement validate $(EXAMPLE)/placement.json
	@echo "== project placement $(EXAMPLE)/runtime-inventory.json"
	$(BIN) project placement $(EXAMPLE)/runtime-inventory.json -o target/example-placement.json
	$(BIN) placement validate target/example-placement.json
	@echo "== project binding"
	$(BIN) project binding $(EXAMPLE)/runtime-inventory.json -o target/example-binding.json
	$(BIN) binding validate target/example-binding.json
	@echo "== bind placement + binding inventory"
	$(BIN) bind target/example-placement.json $(EXAMPLE)/binding-inventory.json -o target/example-runtime.json
	$(BIN) runtime validate target/example-runtime.json

## Runs every test: generated-code drift, formatting, lints, Rust tests, conformance,
## and each binding's tests.
test: $(TEST_TARGETS)

checks:
	$(CARGO) metadata --locked --format-version 1 >/dev/null \
		|| { echo "Cargo.lock is stale: run cargo build and commit Cargo.lock"; exit 1; }
	$(CARGO) run --locked -q -p weight-manifest-codegen -- --check
	scripts/check-core-deps.sh
	python3 tests/conformance/generate.py --check
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --workspace --all-targets -q -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --workspace --no-deps -q
	@! grep -rn --include='*.rs' '#\[ignore' src tests crates bindings codegen \
		|| { echo "a Rust test is ignored: make it a check, or a tool under --cfg wm_tools (docs/testing.md)"; exit 1; }
	@! grep -rnIE --exclude-dir=target --exclude-dir=.venv --exclude-dir=corpus -- '-{4} (end of )?issue' \
		Makefile README.md src tests crates bindings runtime codegen scripts examples docs schema benches fuzz \
		|| { echo "a process marker (dashes and an issue number) in the sources: say what follows instead"; exit 1; }

# The venv first: a CLI test reads the real all-MiniLM-L6-v2 checkpoint from it.
test-rust: python-venv
	$(CARGO) test --locked --workspace

## The README's Rust example as a project outside the workspace (scripts/rust-consumer.sh).
rust-consumer:
	scripts/rust-consumer.sh

conformance:
	$(CARGO) build --locked -q
	target/debug/weight-manifest conformance run --dir tests/conformance

## The Mooncake oracle (tests/mooncake/): the corpus regenerated with upstream's wheel must
## equal the recorded one (tests/mooncake_oracle.rs runs it in test-rust), and the
## DeepSeek-V3-like placement must go through upstream's reader and back (about 40 s).
mooncake-oracle: python-venv
	$(PY) tests/mooncake/generate.py --check
	$(CARGO) build --locked -q
	$(PY) tests/mooncake/deepseek_check.py $${CARGO_TARGET_DIR:-target}/debug/weight-manifest

## Mutation testing of the guards that keep bytes correct (docs/testing.md): every mutant
## of tests/mutants/ must fail a test; the last line is the JSON summary (23 min on 2 cores).
mutants: python-wheel mutants-tool
	$(PY) scripts/mutants.py

mutants-sample: python-wheel mutants-tool
	$(PY) scripts/mutants.py --sample

## cargo-mutants at the version the mutant lists were written for (about 3 min to build).
CARGO_MUTANTS_VERSION := 27.1.0
mutants-tool:
	@$(CARGO) mutants --version 2>/dev/null | grep -qx "cargo-mutants $(CARGO_MUTANTS_VERSION)" \
		|| $(CARGO) install -q --locked cargo-mutants --version $(CARGO_MUTANTS_VERSION)

fuzz-smoke:
	scripts/fuzz.sh smoke $(FUZZ_SECONDS)
