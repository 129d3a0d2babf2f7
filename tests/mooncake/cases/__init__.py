"""The case modules of tests/mooncake/generate.py, one per kind of document."""
