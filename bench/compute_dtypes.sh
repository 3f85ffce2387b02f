#!/usr/bin/env bash
# The four compute paths of a bf16 checkpoint on one machine, one after the other (issue #38):
# bf16 weights computed in fp32 (the default) and with --compute-dtype bfloat16 (AVX512_BF16),
# int8 weights (--quantization int8) computed in fp32 (the default) and with --compute-dtype
# int8 (w8a8, AVX512_VNNI). Per path: batch-1 decode, 16 and 64 sequences of 45-token prompts,
# and the prefill of one 2048-token prompt, each against its in-run floor (bench offline).
#
#   bash bench/compute_dtypes.sh MODEL_DIR      # e.g. the 0.6B checkpoint bench/real_size.sh writes
#
# A path this CPU cannot run is refused by name (exit 2) and skipped. Needs build/app/pagedserve.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${PAGEDSERVE:-build/app/pagedserve}
MODEL=${1:?usage: bench/compute_dtypes.sh MODEL_DIR}
export PAGEDSERVE_TUNING_CACHE=${PAGEDSERVE_TUNING_CACHE:-$(mktemp -d)/linear-tuning.json}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(date -u)"

run() {  # run NAME FLAGS...
  local name=$1
  shift
  echo "=== $name batch-1"
  "$BIN" bench offline --model "$MODEL" --num-prompts 2 --input-len 16 --output-len 64 \
    --max-num-seqs 2 "$@" 2>&1 | grep -E "^(kernels|single  |bandwidth floor|machine|pagedserve)" || return
  echo "=== $name 16 seqs"
  "$BIN" bench offline --model "$MODEL" --num-prompts 16 --input-len 45 --output-len 32 \
    --max-num-seqs 16 --skip-single "$@" 2>&1 | grep -E "^(continuous  |decode at)"
  echo "=== $name 64 seqs"
  "$BIN" bench offline --model "$MODEL" --num-prompts 64 --input-len 45 --output-len 32 \
    --max-num-seqs 64 --skip-single "$@" 2>&1 | grep -E "^(continuous  |decode at)"
  echo "=== $name prefill 2048"
  "$BIN" bench offline --model "$MODEL" --num-prompts 1 --input-len 2048 --output-len 1 \
    --skip-single "$@" 2>&1 | grep -E "^(continuous  |prefill of)"
}
run bf16-fp32
run bf16-bf16 --compute-dtype bfloat16
run int8-fp32 --quantization int8
run int8-int8 --quantization int8 --compute-dtype int8
