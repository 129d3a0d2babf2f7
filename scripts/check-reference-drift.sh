#!/usr/bin/env bash
# Developer check: the vendored reference vectors (tests/vectors/reference) and their
# checksums (tests/vectors/reference.sha256, verified by tests/reference_vectors.rs) are
# the reference's own, byte for byte. Needs the reference folder given as $1.
set -euo pipefail
cd "$(dirname "$0")/.."
reference=${1:?usage: scripts/check-reference-drift.sh REFERENCE_DIR}
diff -r "$reference" tests/vectors/reference
(cd "$reference" && find . -type f | sort | sed 's|^\./||' | xargs sha256sum) |
    diff - tests/vectors/reference.sha256
echo "vendored reference vectors match $reference"
