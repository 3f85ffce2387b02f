#!/usr/bin/env bash
# The whole test suite: installs and builds (scripts/setup.sh); runs the AddressSanitizer +
# UndefinedBehaviorSanitizer stage over the torch-free libraries' and the API's unit tests
# (scripts/sanitize.sh says why the torch parts are left to its `--full` mode); then every test
# through CTest — unit tests, the tokenizer cross-check against @huggingface/tokenizers, and the
# process-level tests that start the real binary on loopback. CTest runs last so its summary
# closes the output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/sanitize.sh
cd build
ctest --output-on-failure --timeout 900 -j2 "$@"
