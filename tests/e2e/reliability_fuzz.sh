#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for a bounded time (PAGEDSERVE_FUZZ_SECONDS, default 15
# each) on its checked-in corpus; fails on any crash, sanitizer report or broken invariant.
# Needs clang and libclang-rt-14-dev (scripts/setup.sh installs both). Usage as every e2e test:
# bash tests/e2e/reliability_fuzz.sh PAGEDSERVE_BINARY BUILD_DIR (the binary is not used).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${2:?usage: $0 PAGEDSERVE_BINARY BUILD_DIR}")
if bash "$ROOT/fuzz/build_and_run.sh" "$BUILD/fuzz" "${PAGEDSERVE_FUZZ_SECONDS:-15}"; then
  echo "ok   - every fuzz target ran clean"
  echo "1 passed, 0 failed"
else
  echo "FAIL - a fuzz target failed (reproducers under $BUILD/fuzz/crashes/)"
  echo "0 passed, 1 failed"
  exit 1
fi
