"""Test-only, not part of the public API: the conformance testee
(``python -m weight_manifest.testing.testee``) the conformance runner drives."""
