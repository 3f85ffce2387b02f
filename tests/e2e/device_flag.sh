#!/usr/bin/env bash
# --device auto|cpu|cuda and --gpu-memory-utilization (issue #19): bad values exit 2 naming the
# flag; on a machine without a GPU, --device cuda fails at start with a message naming the flag
# and saying why, while --device cpu and --device auto serve on the CPU from the same binary.
# Where a GPU is visible (nvidia-smi -L lists one), the cuda checks are skipped here: the GPU
# path is checked by scripts/device-check.sh.
source "$(dirname "$0")/lib/server.bash" "$@"

expect_usage_error() {  # expect_usage_error NAME GREP-PATTERN ARGS...
  local name=$1 pattern=$2 rc=0
  shift 2
  "$BIN" generate --model "$MODEL" --prompt hi --max-tokens 2 "$@" >"$WORK/$name.log" 2>&1 || rc=$?
  check "$name exits 2" "$rc" = 2
  check "$name: message" "$(grep -c -- "$pattern" "$WORK/$name.log")" = 1
}

expect_usage_error bad-device "flag --device: unknown device 'tpu' (choose auto, cpu or cuda)" \
  --device tpu
expect_usage_error util-range "flag --gpu-memory-utilization must be a fraction in (0, 1], got '1.5'" \
  --device auto --gpu-memory-utilization 1.5
expect_usage_error util-text "flag --gpu-memory-utilization must be a fraction in (0, 1], got 'most'" \
  --device auto --gpu-memory-utilization most
expect_usage_error util-cpu "flag --gpu-memory-utilization applies to --device cuda, not cpu" \
  --device cpu --gpu-memory-utilization 0.5
expect_usage_error util-and-kv "both size the KV cache; give one" \
  --device auto --gpu-memory-utilization 0.5 --kv-cache-memory 64M

gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && gpu=1
if ((gpu == 0)); then
  start=$SECONDS
  expect_usage_error no-gpu "^pagedserve generate: --device cuda: .*use --device cpu$" --device cuda
  check "--device cuda fails at start (< 10 s)" "$((SECONDS - start < 10))" = 1
  check "it says why" \
    "$(grep -cE 'no CUDA GPU is visible|built without CUDA' "$WORK/no-gpu.log")" = 1
  # auto serves on the CPU and says why it did not pick cuda.
  start_server auto --device auto
  check "auto: serves on the CPU (start line names the CPU kernels)" \
    "$(grep -c '^kernels: kernel isa ' "$WORK/server-auto.log")" = 1
  check "auto: says why not cuda" \
    "$(grep -c '^pagedserve: --device auto chose cpu: ' "$WORK/server-auto.log")" = 1
  out=$(curl -s -H 'Content-Type: application/json' \
    -d '{"prompt":"Hello","max_tokens":4,"temperature":0,"ignore_eos":true}' "$URL/v1/completions")
  check "auto: completion has 4 tokens" \
    "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])')" = 4
  stop_server "$SERVER_PID" TERM 30
else
  echo "skip - a GPU is visible: scripts/device-check.sh checks --device cuda"
fi

# --device cpu: unchanged, no note.
start_server cpu --device cpu
check "cpu: no device note" "$(grep -c '^pagedserve: --device' "$WORK/server-cpu.log")" = 0
out=$(curl -s -H 'Content-Type: application/json' \
  -d '{"prompt":"Hello","max_tokens":3,"temperature":0,"ignore_eos":true}' "$URL/v1/completions")
check "cpu: completion has 3 tokens" \
  "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])')" = 3
stop_server "$SERVER_PID" TERM 30

finish
