"""Test-only helpers, not part of the public API: the conformance testee
(``python -m weight_manifest.testing.testee``), a Mooncake Store on 127.0.0.1
(:mod:`.local_store`) and the emulated cluster of network namespaces (:mod:`.hosts`)."""
