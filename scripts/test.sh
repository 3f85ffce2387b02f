#!/usr/bin/env bash
# The whole test suite: installs and builds (scripts/setup.sh), then runs every test through
# CTest — unit tests, the tokenizer cross-check against @huggingface/tokenizers, and the
# process-level tests that start the real binary on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure --timeout 900 -j2 "$@"
