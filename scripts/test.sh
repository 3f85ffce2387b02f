#!/usr/bin/env bash
# The whole test suite: installs and builds (scripts/setup.sh); runs the sanitizer stage
# (scripts/sanitize.sh: unit tests and the HTTP tests under ASan+UBSan, the engine tests under
# TSan; it reuses the main build's torch objects through ccache); then every test
# through CTest — unit tests, the tokenizer cross-check against @huggingface/tokenizers, and the
# process-level tests that start the real binary on loopback. CTest runs last so its summary
# closes the output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/sanitize.sh
cd build
ctest --output-on-failure --timeout 900 -j2 "$@"
