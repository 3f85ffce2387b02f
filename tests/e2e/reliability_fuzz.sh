#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ on its checked-in corpus for a fixed number of inputs from
# a fixed seed (PAGEDSERVE_FUZZ_BUDGET, default runs:40000: the same inputs on every machine, so a
# failure reproduces and a loaded machine does not test less; seconds per target for a longer,
# time-boxed search); fails on any crash, sanitizer report or broken invariant.
# Needs clang and libclang-rt-14-dev (scripts/setup.sh installs both). Usage as every e2e test:
# bash tests/e2e/reliability_fuzz.sh PAGEDSERVE_BINARY BUILD_DIR (the binary is not used).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${2:?usage: $0 PAGEDSERVE_BINARY BUILD_DIR}")
if bash "$ROOT/fuzz/build_and_run.sh" "$BUILD/fuzz" "${PAGEDSERVE_FUZZ_BUDGET:-runs:40000}"; then
  echo "ok   - every fuzz target ran clean"
  echo "1 passed, 0 failed"
else
  echo "FAIL - a fuzz target failed (reproducers under $BUILD/fuzz/crashes/)"
  echo "0 passed, 1 failed"
  exit 1
fi
