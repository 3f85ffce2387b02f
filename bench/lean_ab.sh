#!/usr/bin/env bash
# Before/after of one change on `bench offline`, alternating the two binaries (A B A B ...) so a
# drift of the shared machine hits both alike; prints each run's output tok/s and the median
# ratio A/B per workload. Used for issue #32 (the libtorch-free serve path against main before it).
#
#   bash bench/lean_ab.sh NEW_BIN OLD_BIN TINY_DIR Q06_DIR [PAIRS (default 3)]
# TINY_DIR: `pagedserve make-tiny-model DIR`; Q06_DIR: the Qwen3-0.6B shape of bench/README.md.
set -euo pipefail
A=${1:?new binary} B=${2:?old binary} TINY=${3:?tiny model dir} Q06=${4:?0.6B model dir}
PAIRS=${5:-3}
# Extra flags for every run, e.g. LEAN_AB_FLAGS="--kernel-isa avx2" to force a narrower path.
read -r -a EXTRA <<<"${LEAN_AB_FLAGS:-}"
export PAGEDSERVE_TUNING_CACHE=${PAGEDSERVE_TUNING_CACHE:-/tmp/lean-ab-tuning.json}

out_toks() {  # out_toks BIN ARGS...: the continuous run's output tok/s
  "$@" 2>&1 | awk '/^continuous/ { for (i = 1; i <= NF; ++i) if ($i == "output") print $(i + 1) }'
}

run() {  # run NAME ARGS...
  local name=$1 a b ratios=()
  shift
  echo "== $name: $*"
  for ((p = 0; p < PAIRS; ++p)); do
    a=$(out_toks "$A" bench offline "$@" "${EXTRA[@]}")
    b=$(out_toks "$B" bench offline "$@" "${EXTRA[@]}")
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')")
    echo "  pair $p: new $a  old $b  output tok/s  (new/old ${ratios[-1]})"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v n="$name" '{ r[NR] = $1 } END {
    m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "  %s: median new/old %.3f (min %.3f, max %.3f)\n", n, m, r[1], r[NR] }'
}

run tiny-f32-auto --model "$TINY" --num-prompts 64 --input-len 64 --output-len 32 --skip-single \
  --no-probe
run q06-bf16-16seqs --model "$Q06" --dtype bfloat16 --num-prompts 16 --input-len 32 --output-len 16 \
  --max-num-seqs 16 --kv-cache-memory 256M --skip-single --no-probe
run q06-int8-16seqs --model "$Q06" --dtype bfloat16 --quantization int8 --num-prompts 16 \
  --input-len 32 --output-len 16 --max-num-seqs 16 --kv-cache-memory 256M --skip-single --no-probe
run q06-bf16-batch1 --model "$Q06" --dtype bfloat16 --num-prompts 1 --input-len 16 --output-len 32 \
  --max-num-seqs 1 --kv-cache-memory 256M --skip-single --no-probe
