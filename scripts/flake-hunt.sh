#!/usr/bin/env bash
# Flake hunt (issue #33): the whole CTest suite N times in a row while busy-looping processes
# compete for the cores, then one report of every test that failed at least once, with its
# output. A test that passes alone but fails here waits on time instead of on an event.
#
#   bash scripts/flake-hunt.sh N [ctest args...]
#
# Needs the build that the README's test command leaves in build/. Environment:
#   HUNT_BUSY   busy-looping processes beside the tests (default 2: one per core here)
#   HUNT_JOBS   ctest -j (default 2, as the test command runs it)
#   HUNT_DIR    where run logs and the report go (default build/flake-hunt)
# Exit status: 0 when every run passed, 1 when any test failed, 2 on usage errors.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
runs=${1:-}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [ctest args...]   (N: how many full CTest runs, at least 1)" >&2
  exit 2
fi
shift
if [[ ! -f build/CTestTestfile.cmake ]]; then
  echo "flake-hunt: build/ has no CTest suite; run the README's test command first" >&2
  exit 2
fi
busy=${HUNT_BUSY:-2}
jobs=${HUNT_JOBS:-2}
dir=${HUNT_DIR:-$ROOT/build/flake-hunt}
rm -rf "$dir"
mkdir -p "$dir"

# The same environment the test command gives CTest (scripts/test.sh).
export PAGEDSERVE_KERNEL=packed
export PAGEDSERVE_TUNING_CACHE="$ROOT/build/linear-tuning.json"

busy_pids=()
stop_busy() {
  local p
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  busy_pids=()
}
trap stop_busy EXIT
for ((b = 0; b < busy; b++)); do
  bash -c 'while :; do :; done' &
  busy_pids+=($!)
done

# extract_output LOG TEST: the section of CTest's LastTest.log that holds TEST's output.
extract_output() {
  awk -v name="$2" '
    /^[0-9]+\/[0-9]+ Testing: / { inside = ($3 == name) }
    inside { print }
    inside && / end time: / { inside = 0 }
  ' "$1"
}

declare -A fails=()
t_all=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  t0=$(date +%s)
  rc=0
  (cd build && ctest --timeout 900 -j"$jobs" "$@") >"$dir/run-$i.txt" 2>&1 || rc=$?
  cp build/Testing/Temporary/LastTest.log "$dir/run-$i.LastTest.log"
  failed=()
  if [[ -f build/Testing/Temporary/LastTestsFailed.log ]] && ((rc != 0)); then
    # Lines are "NUMBER:NAME".
    mapfile -t failed < <(cut -d: -f2- build/Testing/Temporary/LastTestsFailed.log)
  elif ((rc != 0)); then
    failed=("(ctest itself, exit $rc: see run-$i.txt)")
  fi
  summary=$(grep -E 'tests passed|tests failed' "$dir/run-$i.txt" | tail -1 || true)
  echo "flake-hunt: run $i/$runs: ${summary:-no summary} in $(($(date +%s) - t0)) s"
  for t in "${failed[@]}"; do
    fails[$t]+="$i "
    {
      echo "=== $t (run $i)"
      extract_output "$dir/run-$i.LastTest.log" "$t"
    } >>"$dir/failures.txt"
  done
done
stop_busy

{
  echo "flake hunt: $runs full CTest runs (-j$jobs) beside $busy busy-looping processes," \
    "$(nproc) cores, $(($(date +%s) - t_all)) s in all"
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if ((${#fails[@]} == 0)); then
    echo "every test passed in every run"
  else
    echo "tests that failed at least once (runs):"
    for t in "${!fails[@]}"; do echo "  $t: ${fails[$t]}"; done
    echo "their output: $dir/failures.txt"
  fi
} | tee "$dir/report.txt"
((${#fails[@]} == 0))
