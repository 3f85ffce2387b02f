#!/usr/bin/env bash
# The kernel choice flags (issue #14): --kernel auto|packed|blas and --kernel-isa
# auto|avx512|avx2|generic are checked up front (exit 2 naming the flag), what runs is printed at
# start and shown in /metrics and in bench offline, and every path this CPU can run serves.
source "$(dirname "$0")/lib/server.bash" "$@"

rc=0
"$BIN" serve --model "$MODEL" --kernel fast >"$WORK/badkernel.log" 2>&1 || rc=$?
check "unknown --kernel exits 2" "$rc" = 2
check "the message names --kernel and the choices" \
  "$(grep -c -- "--kernel: unknown --kernel 'fast' (expected auto, packed or blas)" "$WORK/badkernel.log")" = 1
rc=0
"$BIN" serve --model "$MODEL" --kernel-isa sse9 >"$WORK/badisa.log" 2>&1 || rc=$?
check "unknown --kernel-isa exits 2" "$rc" = 2
check "the message names --kernel-isa" "$(grep -c -- "--kernel-isa: unknown kernel ISA 'sse9'" "$WORK/badisa.log")" = 1
if ! grep -q avx512f /proc/cpuinfo; then
  rc=0
  "$BIN" serve --model "$MODEL" --kernel-isa avx512 >"$WORK/noavx512.log" 2>&1 || rc=$?
  check "--kernel-isa avx512 on a CPU without it exits 2" "$rc" = 2
  check "the message says what the CPU can run" "$(grep -c 'this CPU cannot run it' "$WORK/noavx512.log")" = 1
fi

# Every ISA this CPU runs, with each linear kernel forced: the start line and /metrics say so,
# and a greedy completion is served.
isas="generic"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && isas="$isas avx2"
grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && isas="$isas avx512"
for isa in $isas; do
  for kernel in packed blas; do
    start_server "$isa-$kernel" --kernel-isa "$isa" --kernel "$kernel"
    check "$isa/$kernel: start line names the kernels" \
      "$(grep -c "^kernels: kernel isa $isa, linear $kernel" "$WORK/server-$isa-$kernel.log")" = 1
    metrics=$(curl -s "$URL/metrics")
    check "$isa/$kernel: /metrics kernel_info" \
      "$(echo "$metrics" | grep -c "^pagedserve_kernel_info{summary=\"kernel isa $isa, linear $kernel")" = 1
    out=$(curl -s -H 'Content-Type: application/json' \
      -d '{"prompt":"Hello","max_tokens":6,"temperature":0,"ignore_eos":true}' "$URL/v1/completions")
    check "$isa/$kernel: completion has 6 tokens" \
      "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])')" = 6
    stop_server "$SERVER_PID" TERM 30
  done
done

# auto: tuned at load, the plan of every projection shape printed.
export PAGEDSERVE_TUNING_CACHE="$WORK/tuning.json"
start_server auto --kernel auto
check "auto: start line shows the tuned plans" \
  "$(grep -c '^kernels: kernel isa [a-z0-9]*, linear auto (tuned .* s; against OpenBLAS core [A-Za-z0-9]*); ' "$WORK/server-auto.log")" = 1
check "auto: the tuning cache was written" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$WORK/tuning.json")" = 1
stop_server "$SERVER_PID" TERM 30
start_server auto2 --kernel auto
check "auto again: read from the cache" "$(grep -c '^kernels: .*linear auto (tuned 0.00 s, cached; ' "$WORK/server-auto2.log")" = 1
stop_server "$SERVER_PID" TERM 30
# OpenBLAS's own kernel choice (what an AVX2-only host runs, forced): named on the start line,
# and part of the tuning cache's key, so the cached plans of the other core are not reused.
OPENBLAS_CORETYPE=Haswell start_server auto-haswell --kernel auto
check "auto with OPENBLAS_CORETYPE=Haswell: the start line names that core" \
  "$(grep -cE '^kernels: .*linear auto \(tuned [0-9.]* s(, cached)?; against OpenBLAS core Haswell\); ' "$WORK/server-auto-haswell.log")" = 1
default_core=$(grep -o 'against OpenBLAS core [A-Za-z0-9]*' "$WORK/server-auto.log" | awk '{print $4}')
if [ "$default_core" != Haswell ]; then
  check "another OpenBLAS core than the cached one ($default_core): tuned afresh" \
    "$(grep -c '^kernels: .*linear auto (tuned [0-9.]* s; against OpenBLAS core Haswell); ' "$WORK/server-auto-haswell.log")" = 1
fi
stop_server "$SERVER_PID" TERM 30

# PAGEDSERVE_KERNEL is the default of --kernel (the test suite pins it); the flag wins over it.
PAGEDSERVE_KERNEL=blas start_server env-blas
check "PAGEDSERVE_KERNEL=blas is the default" "$(grep -c '^kernels: kernel isa [a-z0-9]*, linear blas' "$WORK/server-env-blas.log")" = 1
stop_server "$SERVER_PID" TERM 30
PAGEDSERVE_KERNEL=blas start_server env-flag --kernel packed
check "--kernel beats PAGEDSERVE_KERNEL" "$(grep -c '^kernels: kernel isa [a-z0-9]*, linear packed' "$WORK/server-env-flag.log")" = 1
stop_server "$SERVER_PID" TERM 30

# bench offline reports the kernels it ran on (the JSON too).
"$BIN" bench offline --model "$MODEL" --num-prompts 2 --output-len 4 --no-probe --max-num-seqs 2 \
  --kernel-isa generic --json "$WORK/offline.json" >"$WORK/offline.out" 2>&1
check "bench offline prints the kernels" "$(grep -c '^kernels: kernel isa generic' "$WORK/offline.out")" = 1
check "bench offline JSON has them" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["continuous"]["kernels"].split(",")[0])' "$WORK/offline.json")" = "kernel isa generic"

finish
