# The weight-update runtime (runtime/, package weight_manifest_runtime): installed beside
# the binding's wheel into the same venv, type-checked, its tests run; and its examples and
# benchmarks as make targets. Included by the root Makefile after the bindings' rules.

TEST_TARGETS += test-runtime
.PHONY: runtime-install test-runtime reshard-te fp8-update store-roundtrip multi-host fault-campaign rl-loop vllm-api simulate-frontier

## The runtime installed from its source as a wheel (its vLLM plugin's entry point is read
## from the installed metadata); pure Python, no dependency resolved (the lock has them).
runtime-install: python-wheel
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps --no-build-isolation ./runtime
	rm -rf runtime/build

# The slowest tests are listed at the end: the suite is most of CI's budget.
test-runtime: runtime-install
	$(CARGO) build --locked -q
	$(PY) -m mypy --strict --cache-dir target/mypy-cache runtime/weight_manifest_runtime
	$(PY) -m pytest -q -p no:cacheprovider --durations=15 runtime/tests

## A weight update on the Mooncake Transfer Engine (examples/reshard-te): 16 processes,
## synthetic 1 GiB TP4/PP2 -> TP2/PP4 (then a delta update of 1% of its blocks), then the
## real all-MiniLM-L6-v2 TP2 -> TP1; each
## prints its figures as its last line. RESHARD_ARGS adds flags to the first run.
reshard-te: runtime-install
	$(PY) examples/reshard-te/reshard_te.py --repeat 3 --delta 1 $(RESHARD_ARGS)
	$(PY) examples/reshard-te/reshard_te.py --model minilm --source tp2 --target tp1

## Quantize in flight (examples/fp8-update, contract §17.8): bfloat16 sources into block-FP8
## targets on 5 layouts, each plan bound and pushed by the executor between two Transfer
## Engine processes (the source quantizes in its registered staging), every landed byte equal
## to vLLM's per_block_cast_to_fp8 and every digest verified, then a delta of the changed
## blocks in process, then vLLM serving a block-FP8 checkpoint updated in flight through its
## layer-wise reload (tokens: vLLM from disk, HF on the dequantized weights); one JSON line.
fp8-update: runtime-install
	$(PY) examples/fp8-update/fp8_update.py

## Save to and restore from Mooncake Store (examples/store-roundtrip): the master and a store
## holder, 8 processes saving a synthetic 612 MiB model held as TP4/PP2, 8 restoring it as
## TP2/PP4 (three restores, medians), every byte checked; the last line is its figures.
store-roundtrip: runtime-install
	$(PY) examples/store-roundtrip/store_roundtrip.py --repeat 3 $(STORE_ARGS)

## A weight update and a Store round trip on Ray across 4 emulated hosts with 2 Gbit/s
## links (examples/multi-host, needs root): TP4/PP2 sources on hosts 0-1 update TP2/PP4
## targets on hosts 2-3 (1 GiB, every byte checked), then save and restore; three
## repetitions, medians. MULTIHOST_ARGS adds flags.
multi-host: runtime-install
	$(PY) examples/multi-host/multi_host.py --repeat 3 $(MULTIHOST_ARGS)

## The simulator's frontier (examples/simulate, docs/simulate.md; needs root): calibrate on
## 4 emulated hosts (8 short measured updates, the engine constants fitted), then plan and
## bind Kimi-K2 (BF16) from 256 GPUs to 128 GPUs for real with the release CLI and simulate
## the update and a 2 % delta at 400 Gb/s per GPU; then BF16 trainers into block-FP8
## engines (the sources quantize) for Kimi-K2 and a 2.8T model of its family at the same
## scale; the last line is one JSON object.
## FRONTIER_ARGS adds flags (e.g. --calibration FILE to reuse a calibration).
simulate-frontier: runtime-install
	$(CARGO) build --locked --release -q --bin weight-manifest
	$(PY) examples/simulate/frontier.py $(FRONTIER_ARGS)

## The RL loop on a cluster's shape (examples/rl-loop, needs root): 4 DTensor trainer ranks
## and 2 `vllm serve` of TP 2 through vLLM's weight-sync API (backend weight_manifest), each
## rank and each engine worker on an emulated host with its own shaped link (0.2 Gbit/s), a
## storage host; after each step every engine's greedy tokens must be HF transformers' on
## the trainer's weights; the disk route, a chain broadcast, gloo's broadcast and DTensor
## redistribute run beside it, each with its floor. The last line is its JSON. RL_ARGS adds
## flags (--steps, --gbit, --ranks, --engines, --tp, ...).
rl-loop: runtime-install
	$(PY) examples/rl-loop/rl_loop.py $(RL_ARGS)

## vLLM's own weight-sync API with the backend weight_manifest on 4 emulated hosts
## (examples/vllm-api, needs root): 2 real `vllm serve` (staged and direct) and a 2-rank
## DTensor trainer driving them through vLLM's HTTPVLLMWeightSyncClient; 2 full updates and
## 3 deltas checked against HF transformers' tokens, vLLM's reload from disk timed beside
## them, a corrupted source byte rolls both servers back. The last line is its JSON.
## VLLM_API_ARGS adds flags (--steps, --hidden, --layers, --vocab).
vllm-api: runtime-install
	$(PY) examples/vllm-api/vllm_api.py $(VLLM_API_ARGS)

## The fault campaign of versioned updates (runtime/tests/fault_campaign.py,
## docs/lifecycle.md): FAULTS randomized faults at random points of the lifecycle over
## random layouts and sizes, each outcome checked against the oracle's record; the seed is
## printed first (CAMPAIGN_ARGS="--seed S" repeats a campaign, "--seed S --trial N" one
## trial), the last line is its JSON; one trial more runs on 3 emulated hosts (root, --hosts).
## make test runs a seeded share (test_fault_campaign.py) and the hosts trial (test_hosts.py).
FAULTS ?= 1000
fault-campaign: runtime-install
	$(PY) runtime/tests/fault_campaign.py --faults $(FAULTS) --hosts $(CAMPAIGN_ARGS)
