#!/usr/bin/env bash
# Every kernel path this CPU can run, measured in one sitting (issue #14): the packed linear on
# each ISA next to OpenBLAS on the default model's shapes (bench_model_linear), then
# `bench offline` (single-request decode vs the bandwidth floor, 64 sequences vs the compute
# floor) and serve/offline over HTTP at 16 and 64 clients, once per ISA (the narrower ones
# forced with --kernel-isa). Prints the CPU model first: a figure without it means nothing.
#
#   bash bench/isa_report.sh [OUT_DIR]        # default: a temp dir; ~15 min on 2 cores
#
# Needs a built build/ (bench_model_linear and pagedserve). ISAS="avx2 avx512" picks a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PAGEDSERVE:-build/app/pagedserve}
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
MODEL="$OUT/tiny-random"
[[ -f "$MODEL/config.json" ]] || "$BIN" make-tiny-model "$MODEL" >/dev/null
# A fresh tuning cache: decisions cached on a busy minute must not leak into this report.
export PAGEDSERVE_TUNING_CACHE="$OUT/linear-tuning.json"
rm -f "$PAGEDSERVE_TUNING_CACHE"

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "flags: $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512_bf16|amx_bf16)$' | tr '\n' ' ')"
echo "threads: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

isas=${ISAS:-}
if [[ -z "$isas" ]]; then
  isas="generic"
  grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && isas="$isas avx2"
  grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && isas="$isas avx512"
fi

echo
echo "== packed linear per ISA vs OpenBLAS (build/bench/bench_model_linear)"
# Three repetitions of every cell in random order; the summary takes each cell's median, so a
# burst from a neighbour decides no ratio (bench/micro/model_linear.cpp).
REPS=(--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true)
build/bench/bench_model_linear --benchmark_min_time=0.1 "${REPS[@]}" >"$OUT/linear.txt" 2>&1
sed -n '/^Summary/,$p' "$OUT/linear.txt"
# OpenBLAS picks its kernel by CPU, not by our --kernel-isa: on an AVX-512 host the run above
# compares our forced AVX2 path with OpenBLAS's AVX-512 kernel. An AVX2-only host runs
# OpenBLAS's Haswell kernel, so the AVX2 path is measured against that too, and the forced-AVX2
# engine runs below use it (their tuner's blas candidate).
haswell_blas=()
if grep -qw avx512f /proc/cpuinfo && [[ " $isas " == *" avx2 "* ]]; then
  haswell_blas=(env OPENBLAS_CORETYPE=Haswell)
  echo
  echo "== the AVX2 path vs OpenBLAS on its Haswell (AVX2) kernel, as on an AVX2-only host"
  "${haswell_blas[@]}" build/bench/bench_model_linear --benchmark_filter='avx2|Blas' \
    --benchmark_min_time=0.1 "${REPS[@]}" >"$OUT/linear-haswell-blas.txt" 2>&1
  sed -n '/^Summary/,$p' "$OUT/linear-haswell-blas.txt"
fi

for isa in $isas; do
  [[ "$isa" == generic ]] && continue  # the fallback: measured above, too slow to matter here
  blas_env=()
  [[ "$isa" == avx2 ]] && blas_env=(${haswell_blas[@]+"${haswell_blas[@]}"})
  echo
  echo "== bench offline --kernel-isa $isa (64 prompts x 64 in, 128 out, --max-num-seqs 64)" \
    "${blas_env[*]:-}"
  ${blas_env[@]+"${blas_env[@]}"} "$BIN" bench offline --model "$MODEL" --kernel-isa "$isa" \
    --json "$OUT/offline-$isa.json" >"$OUT/offline-$isa.txt" 2>&1
  grep -E '^(kernels|continuous|single|machine|model|bandwidth|compute)' "$OUT/offline-$isa.txt"
  for clients in 16 64; do
    echo "-- serve / offline, $clients streaming clients, --kernel-isa $isa"
    BENCH_PROMPTS=$clients BENCH_ENGINE_FLAGS="--kernel-isa $isa" \
      ${blas_env[@]+"${blas_env[@]}"} bash bench/http_vs_offline.sh "$MODEL" 1 2>&1 | tail -n 2
  done
done
echo
echo "raw outputs in $OUT"
