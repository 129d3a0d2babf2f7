"""The case builders of the conformance corpus, one module per group of operations; each
`cases_<group>()` registers its fixtures through `cases.common.ok` and `cases.common.bad`."""
