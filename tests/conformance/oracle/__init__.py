"""The independent Python implementation of the contract (docs/contract.md) that the
conformance corpus takes its expected values from: canonical JSON, ids, normalisation,
emissions, coverage, the reshard planner, plan binding, the adapter layout and the limits.
Standard library only; it never runs any implementation of the contract."""
