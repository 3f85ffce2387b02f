#!/usr/bin/env bash
# The sanitizer stage of the test command (issue #8). Any sanitizer report fails it.
#
#   bash scripts/sanitize.sh           # CI: ASan+UBSan, then TSan (both below)
#   bash scripts/sanitize.sh --asan    # only the ASan+UBSan part
#   bash scripts/sanitize.sh --tsan    # only the TSan part
#
# ASan+UBSan (build-asan/, -DPAGEDSERVE_ASAN=ON): the unit tests of kvcache, scheduler, sampling,
# tokenizer, chat, api and engine, then the HTTP e2e tests against the ASan-built
# `pagedserve serve` (real clients on loopback: curl, the openai npm client, python's stdlib soak
# and hostile clients). Every server the tests start is stopped with SIGTERM, so LeakSanitizer
# checks it at exit; reports go to build-asan/sanitizer-reports/ as well as stderr, and the stage
# fails if that folder has any, even from a server whose test did not look at its exit status.
# TSan (build-tsan/, -DPAGEDSERVE_TSAN=ON): the engine tests, both programs (the engine thread,
# its lock-free inbox, the per-request outboxes, cancel and shutdown from other threads) and the
# scheduler and kvcache tests.
#
# model/ and train/ (the code that includes libtorch) are left uninstrumented in both builds (see
# pagedserve_leave_torch_code_uninstrumented in CMakeLists.txt): they are then the main build's
# objects, from ccache, which is what keeps this stage inside the CI budget on 2 cores. Everything
# that parses requests, schedules, samples and serves is instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths: relative to the checkout, a fresh clone in any folder (CI's) reuses
# what another checkout of the same code compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
ROOT=$(pwd)
MODE=${1:-all}
JOBS=${SANITIZE_JOBS:-2}
case "$MODE" in
  all | --asan | --tsan) ;;
  *)
    echo "usage: $0 [--asan | --tsan]" >&2
    exit 2
    ;;
esac

# Release like the main build, so the uninstrumented torch objects are ccache hits; the
# sanitizer flags add -g1 (line tables) to what they instrument.
configure() {  # configure DIR CMAKE_FLAGS...
  local dir=$1
  shift
  # No CUDA executor: the sanitizers do not instrument device code, and CI saves its compile.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAGEDSERVE_BENCH=OFF \
    -DPAGEDSERVE_CUDA=OFF "$@" >/dev/null
}

# halt_on_error: the first report ends the process (and fails its test). detect_leaks stays on
# for our code; scripts/lsan.supp names third-party process-lifetime allocations.
asan_env() {
  local reports=$1
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$reports/asan"
  export LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
  export PAGEDSERVE_SANITIZER=address  # tests/e2e/reliability_soak.py: RSS is no leak signal
}

# Sanitizer reports written to files (log_path) are printed and fail the stage.
check_reports() {  # check_reports DIR NAME
  local dir=$1 name=$2 f found=0
  for f in "$dir"/*; do
    [[ -f "$f" ]] || continue
    found=1
    echo "=== $name report: $f"
    cat "$f"
  done
  if ((found)); then
    echo "sanitize: $name reported problems (above)"
    exit 1
  fi
}

# build_for DIR OPTION TARGETS...: configures DIR with the sanitizer OPTION, empties its
# report folder (REPORTS), builds the targets.
build_for() {
  local dir=$1 option=$2 t0
  shift 2
  t0=$(date +%s)
  configure "$dir" "-D$option=ON"
  REPORTS="$ROOT/$dir/sanitizer-reports"
  rm -rf "$REPORTS"
  mkdir -p "$REPORTS"
  cmake --build "$dir" -j"$JOBS" --target "$@"
  echo "sanitize: $option build took $(($(date +%s) - t0)) s"
}

run_asan() {
  local t0 reports
  t0=$(date +%s)
  local tests=(test_kvcache test_scheduler test_sampling test_tokenizer test_chat test_api
    test_engine test_engine_torch_free)
  build_for build-asan PAGEDSERVE_ASAN "${tests[@]}" pagedserve tokenize_jsonl
  reports=$REPORTS
  local rc=0
  (
    asan_env "$reports"
    for t in "${tests[@]}"; do
      echo "== $t (ASan+UBSan)"
      "build-asan/tests/$t" --gtest_brief=1 || exit 1
    done
    # The process-level tests that talk HTTP to the ASan server.
    cd build-asan
    ctest --output-on-failure -j"$JOBS" --timeout 900 \
      -R '^e2e_(server_errors|server_connections|server_lifecycle|server_concurrency|server_openai|reliability_hostile|reliability_limits|reliability_soak|bench_serve)$'
  ) || rc=1
  check_reports "$reports" "ASan/UBSan/LSan"
  ((rc == 0)) || exit 1
  echo "sanitize: ASan+UBSan passed in $(($(date +%s) - t0)) s"
}

run_tsan() {
  local t0 reports
  t0=$(date +%s)
  local tests=(test_kvcache test_scheduler test_engine test_engine_torch_free)
  build_for build-tsan PAGEDSERVE_TSAN "${tests[@]}"
  reports=$REPORTS
  local rc=0
  (
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan"
    # One OpenMP thread: libgomp (Debian's, not built with TSan) hands work to its pool through
    # futexes and spinning TSan cannot see, so with a pool every tensor a torch op touches on a
    # worker is reported as a race with the thread that allocated it (seen: engine_test, an
    # allocation in c10::alloc_cpu on the main thread vs a write in libtorch on a gomp worker).
    # With one, the threads TSan checks are exactly ours: callers submitting and cancelling,
    # the engine thread, and the readers of request streams.
    export OMP_NUM_THREADS=1
    for t in "${tests[@]}"; do
      echo "== $t (TSan)"
      "build-tsan/tests/$t" --gtest_brief=1 || exit 1
    done
  ) || rc=1
  check_reports "$reports" "TSan"
  ((rc == 0)) || exit 1
  echo "sanitize: TSan passed in $(($(date +%s) - t0)) s"
}

[[ "$MODE" == --tsan ]] || run_asan
[[ "$MODE" == --asan ]] || run_tsan
