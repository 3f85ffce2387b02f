#!/usr/bin/env bash
# The shapes users run (issue #38), each held to its in-run floors (app/bench_floors.h): random
# bf16 checkpoints of the Qwen3-0.6B and Qwen3-4B shapes (make-tiny-model; the 4B one is ~8 GB),
# `bench offline` at 16 and 64 sequences (16: also one at a time, batch-1 decode against the
# bandwidth floor) and the prefill of one 512- and one 2048-token prompt against the compute
# floor, per kernel ISA this CPU has (the narrower ones forced with --kernel-isa) and per weight
# format (bf16 as stored, and --quantization int8). Prints the CPU model and flags first: a
# figure without them means nothing.
#
#   bash bench/real_size.sh [OUT_DIR]      # default: a temp dir; ~25 min for both shapes here
#
# SHAPES="0.6b 4b" ISAS="avx2 avx512" FORMATS="bf16 int8" pick subsets; the checkpoints are kept
# in OUT_DIR for the next run. Needs a built build/app/pagedserve.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PAGEDSERVE:-build/app/pagedserve}
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
export PAGEDSERVE_TUNING_CACHE="$OUT/linear-tuning.json"
rm -f "$PAGEDSERVE_TUNING_CACHE"  # decisions cached on a busy minute must not leak in

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "flags: $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx2|fma|f16c|avx512f|avx512bw|avx512_bf16|avx512_vnni|avx_vnni|amx_bf16|amx_int8)$' |
  tr '\n' ' ')"
echo "threads: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"

isas=${ISAS:-}
if [[ -z "$isas" ]]; then
  isas="avx2"
  grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && isas="$isas avx512"
fi

# Qwen3-0.6B and Qwen3-4B (their config.json shapes; both tie the embedding to lm_head).
shape_flags() {
  case "$1" in
    0.6b) echo "--hidden-size 1024 --num-layers 28 --num-heads 16 --num-kv-heads 8 --head-dim 128
      --intermediate-size 3072 --vocab-size 151936 --max-position-embeddings 40960" ;;
    4b) echo "--hidden-size 2560 --num-layers 36 --num-heads 32 --num-kv-heads 8 --head-dim 128
      --intermediate-size 9728 --vocab-size 151936 --max-position-embeddings 40960" ;;
    *) echo "unknown shape $1 (0.6b or 4b)" >&2; exit 2 ;;
  esac
}

summary() {  # the lines that carry figures
  grep -E '^(kernels|continuous|single|machine|model|bandwidth|compute|decode at|prefill of)' "$1"
}

for shape in ${SHAPES:-0.6b 4b}; do
  model="$OUT/qwen3-$shape"
  if [[ ! -f "$model/config.json" ]]; then
    # shellcheck disable=SC2046
    "$BIN" make-tiny-model "$model" --dtype bf16 $(shape_flags "$shape") >/dev/null
  fi
  # The bigger shape runs fewer, shorter requests: one at a time it decodes ~5 tok/s here.
  small=$([[ "$shape" == 4b ]] && echo 1 || echo 0)
  out16=$((small ? 8 : 32)); out64=$((small ? 8 : 16))
  for isa in $isas; do
    for format in ${FORMATS:-bf16 int8}; do
      q=()
      [[ "$format" == int8 ]] && q=(--quantization int8)
      tag="$shape-$isa-$format"
      echo
      echo "== Qwen3-$shape shape, $format weights, --kernel-isa $isa"
      "$BIN" bench offline --model "$model" --kernel-isa "$isa" ${q[@]+"${q[@]}"} \
        --num-prompts 16 --input-len 32 --output-len "$out16" --max-num-seqs 16 \
        --kv-cache-memory 4G --json "$OUT/$tag-16.json" >"$OUT/$tag-16.txt" 2>&1
      summary "$OUT/$tag-16.txt"
      "$BIN" bench offline --model "$model" --kernel-isa "$isa" ${q[@]+"${q[@]}"} \
        --num-prompts 64 --input-len 32 --output-len "$out64" --max-num-seqs 64 --skip-single \
        --kv-cache-memory 4G --json "$OUT/$tag-64.json" >"$OUT/$tag-64.txt" 2>&1
      summary "$OUT/$tag-64.txt" | grep -E '^(continuous|decode at)'
      for len in 512 2048; do
        "$BIN" bench offline --model "$model" --kernel-isa "$isa" ${q[@]+"${q[@]}"} \
          --num-prompts 1 --input-len "$len" --output-len 1 --max-num-seqs 1 --skip-single \
          --max-batched-tokens "$len" --kv-cache-memory 4G \
          --json "$OUT/$tag-prefill$len.json" >"$OUT/$tag-prefill$len.txt" 2>&1
        summary "$OUT/$tag-prefill$len.txt" | grep -E '^prefill of'
      done
    done
  done
done
echo
echo "raw outputs in $OUT"
