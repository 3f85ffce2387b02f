#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/*_fuzz.cpp with clang (-fsanitize=fuzzer,address,undefined)
# against only the torch-free sources they exercise, then runs each on its checked-in corpus
# (fuzz/corpus/<target>/, read-only: new inputs go to a scratch dir).
#
#   bash fuzz/build_and_run.sh [OUT_DIR (default build-fuzz)] [BUDGET (default 20)] [TARGET...]
#
# BUDGET is seconds per target (a time-boxed search, for long local runs), or runs:N: N inputs
# per target from a fixed seed, the same inputs on every machine however loaded (what CI runs,
# so a failure there is reproducible and never a matter of how far a slow run got).
# Prints one line per target: "fuzz <target>: <N> executions in <S> s, 0 crashes". Exits non-zero
# if a target crashes (the reproducer is kept under OUT_DIR/crashes/<target>/) or fails to build.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:-$ROOT/build-fuzz}")
BUDGET=${2:-20}
if [[ "$BUDGET" =~ ^runs:([1-9][0-9]*)$ ]]; then
  LIMIT=(-runs="${BASH_REMATCH[1]}" -seed=1)
elif [[ "$BUDGET" =~ ^[1-9][0-9]*$ ]]; then
  LIMIT=(-max_total_time="$BUDGET")
else
  echo "fuzz: the budget must be seconds or runs:N, not '$BUDGET'" >&2
  exit 2
fi
shift $(($# > 2 ? 2 : $#))
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then TARGETS=(request tokenizer safetensors stop); fi

CXX=${FUZZ_CXX:-clang++}
command -v "$CXX" >/dev/null || { echo "fuzz: $CXX not found (Debian: apt-get install clang libclang-rt-14-dev)"; exit 1; }
LAUNCH=()
command -v ccache >/dev/null && LAUNCH=(ccache)
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
# -gline-tables-only: file:line in reports, without the full debug info (9% less compile).
FLAGS=(-std=c++20 -O1 -gline-tables-only "${SAN[@]}" -I"$ROOT" $(pkg-config --cflags libpcre2-8 icu-uc))
LIBS=($(pkg-config --libs libpcre2-8 icu-uc))

# The library code under test: instrumented for coverage (fuzzer-no-link) and sanitizers.
SOURCES=("$ROOT"/tokenizer/*.cpp "$ROOT"/chat/*.cpp "$ROOT"/sampling/*.cpp
  "$ROOT/checkpoint/safetensors_reader.cpp" "$ROOT/openai/openai_request.cpp" "$ROOT/openai/chat_messages.cpp"
  "$ROOT/openai/generation_defaults.cpp" "$ROOT/openai/json_fields.cpp" "$ROOT/openai/structured_request.cpp"
  "$ROOT/http/sse.cpp")
# Compiled in batches of 16 files of one folder, in name order, as the main build's unity build
# batches them (so the same files are known to compile together): each batch parses the heavy
# headers (nlohmann/json, the standard library) once instead of once a file. In a fresh clone
# with an empty ccache this compile is most of this script's time inside CTest (245 s of
# e2e_reliability_fuzz, 55 files one by one).
mkdir -p "$OUT/obj" "$OUT/unity"
batches=()  # unity source files
current="" count=0 n=0
for src in "${SOURCES[@]}"; do
  rel=${src#"$ROOT"/}
  folder=${rel%%/*}
  if [[ "$folder" != "$current" || $count -eq 16 ]]; then
    [[ "$folder" != "$current" ]] && n=0
    current=$folder count=0
    unity="$OUT/unity/${folder}_$n.cpp"
    n=$((n + 1))
    batches+=("$unity")
    : >"$unity.new"
  fi
  echo "#include \"$src\"" >>"$unity.new"
  count=$((count + 1))
done
objs=()
jobs_args=()
for unity in "${batches[@]}"; do
  # Rewritten only when its list changed, so its timestamp (and ccache's direct mode) holds.
  if cmp -s "$unity.new" "$unity"; then rm "$unity.new"; else mv "$unity.new" "$unity"; fi
  obj="$OUT/obj/$(basename "$unity" .cpp).o"
  objs+=("$obj")
  # With ccache every batch goes through it (a hit when nothing it includes changed); without,
  # a batch is rebuilt when one of its sources is newer than its object.
  stale=0
  if ((${#LAUNCH[@]} > 0)) || [[ ! -f "$obj" ]]; then
    stale=1
  else
    while read -r line; do
      f=${line#\#include \"}
      f=${f%\"}
      [[ "$f" -nt "$obj" ]] && stale=1
    done <"$unity"
  fi
  ((stale)) && jobs_args+=("$unity" "$obj")
done
# In parallel (FUZZ_JOBS, default every core): the test beside this one in CTest often waits on
# a server and leaves a core idle. xargs exits non-zero if any compile fails.
if ((${#jobs_args[@]} > 0)); then
  printf '%s\0' "${jobs_args[@]}" | xargs -0 -n 2 -P "${FUZZ_JOBS:-$(nproc)}" \
    bash -c '"${@:1:$#-2}" -fsanitize=fuzzer-no-link -c "${@: -2:1}" -o "${@: -1}"' _ \
    "${LAUNCH[@]}" "$CXX" "${FLAGS[@]}" ||
    { echo "fuzz: a source failed to compile (above)"; exit 1; }
fi
rm -f "$OUT/libfuzzdeps.a"
ar rcs "$OUT/libfuzzdeps.a" "${objs[@]}"

status=0
for t in "${TARGETS[@]}"; do
  "${LAUNCH[@]}" "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$ROOT/fuzz/${t}_fuzz.cpp" \
    "$OUT/libfuzzdeps.a" "${LIBS[@]}" -o "$OUT/${t}_fuzz"
  scratch="$OUT/corpus-new/$t"
  crashes="$OUT/crashes/$t"
  rm -rf "$scratch"
  mkdir -p "$scratch" "$crashes"
  log="$OUT/$t.log"
  rc=0
  t_run=$(date +%s)
  # -rss_limit_mb: a blow-up (a parser allocating per input byte) fails instead of swapping.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$OUT/${t}_fuzz" "$scratch" "$ROOT/fuzz/corpus/$t" "${LIMIT[@]}" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix="$crashes/" \
    >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  secs=$(($(date +%s) - t_run))
  if ((rc != 0)); then
    echo "fuzz $t: FAILED (exit $rc) after ${execs:-?} executions; reproducer in $crashes/, log $log"
    grep -m 5 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" || tail -n 20 "$log"
    status=1
  else
    echo "fuzz $t: ${execs:-?} executions in $secs s, 0 crashes (corpus $(ls "$ROOT/fuzz/corpus/$t" | wc -l) seeds)"
  fi
done
exit $status
