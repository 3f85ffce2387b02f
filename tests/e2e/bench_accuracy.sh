#!/usr/bin/env bash
# `bench accuracy` (issue #38): on the shipped tiny model (bf16 on disk), a precision that loses
# nothing (bf16 weights widened in registers are the fp32 reference's bit for bit, with an fp32
# cache) reports zero difference and identical continuations, on every kernel ISA this CPU runs;
# --kv-cache-dtype auto gives it a bf16 cache and the fp32 e2e model an fp32 one; on the e2e model
# (fp32 on disk), bf16 and f16 weights, int8 weights and a bf16 KV cache report a difference; the
# JSON agrees with the printed lines; --compute-dtype bfloat16 / int8 (the bf16 and int8 dot
# products, the int8 ones on avx512 and on avx2 with AVX-VNNI) differ from it where the CPU has
# them and are refused naming the flag where it has not; bad flags exit 2 naming the flag or file.
source "$(dirname "$0")/lib/server.bash" "$@"

accuracy() {  # accuracy NAME MODEL ARGS...: runs bench accuracy, JSON in $WORK/NAME.json
  local name=$1 model=$2
  shift 2
  if "$BIN" bench accuracy --model "$model" --num-prompts 4 --input-len 12 --range-ratio 0.5 \
    --output-len 8 --json "$WORK/$name.json" "$@" >"$WORK/$name.out" 2>&1; then
    pass "bench accuracy $name exits 0"
  else
    fail "bench accuracy $name: $(tail -n 20 "$WORK/$name.out")"
  fi
}

# consistent NAME EXACT: the report's fields agree with each other and with the printed lines;
# EXACT=1 wants no difference at all, 0 wants some.
consistent() {
  if python3 - "$WORK/$1.json" "$WORK/$1.out" "$2" <<'PY'; then pass "$1 report consistent"; else fail "$1 report: $(cat "$WORK/$1.out")"; fi
import json, re, sys
r = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
exact = sys.argv[3] == "1"
assert r["prompts"] == 4 and r["positions"] == 32, r
assert 0 <= r["top1_agree"] <= r["positions"] and 0 <= r["identical_continuations"] <= 4, r
assert r["max_abs_logit"] > 0, r
assert 0 <= r["mean_abs_dlogit"] <= r["max_abs_dlogit"], r
assert (r["top1_agree"] == r["positions"]) == (r["identical_continuations"] == 4), r
m = re.search(r"top-1 agreement [0-9.]+% \((\d+) of (\d+) tokens\); identical continuations (\d+) of 4", out)
assert m and [int(g) for g in m.groups()] == [r["top1_agree"], 32, r["identical_continuations"]], out
if exact:
    assert r["max_abs_dlogit"] == 0 and r["top1_agree"] == 32 and r["mean_first_divergence"] == 8, r
else:
    # A rounding error, not a different model: small against the logits' own scale.
    assert 0 < r["max_abs_dlogit"] < 0.25 * r["max_abs_logit"], r
PY
}

SHIPPED="$ROOT/models/tiny"
isas="generic"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && isas="$isas avx2"
grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && isas="$isas avx512"
for isa in $isas; do
  accuracy "shipped-bf16-$isa" "$SHIPPED" --dtype bfloat16 --kv-cache-dtype float32 \
    --kernel-isa "$isa"
  consistent "shipped-bf16-$isa" 1
done
grep -q "^candidate: --dtype bfloat16, --kv-cache-dtype float32" "$WORK/shipped-bf16-generic.out" &&
  pass "the candidate is named by its flags" ||
  fail "candidate line: $(cat "$WORK/shipped-bf16-generic.out")"
# --kv-cache-dtype auto is the model's dtype (vLLM's meaning): the shipped bf16 model keeps a
# bf16 cache, a rounding away from the reference; the fp32 e2e model an fp32 one, exact.
accuracy shipped-auto "$SHIPPED"
consistent shipped-auto 0
grep -q "kv cache bfloat16" "$WORK/shipped-auto.out" && pass "auto on a bf16 model: a bf16 cache" ||
  fail "shipped auto kernels: $(cat "$WORK/shipped-auto.out")"
accuracy fp32-auto "$MODEL"
consistent fp32-auto 1
grep -q "kv cache float32" "$WORK/fp32-auto.out" && pass "auto on an fp32 model: an fp32 cache" ||
  fail "fp32 auto kernels: $(cat "$WORK/fp32-auto.out")"
grep -q "^weights read per token: reference [0-9.]* MB, candidate [0-9.]* MB" \
  "$WORK/shipped-bf16-generic.out" && pass "both paths' bytes per token are printed" ||
  fail "bytes line: $(cat "$WORK/shipped-bf16-generic.out")"

accuracy bf16 "$MODEL" --dtype bfloat16
consistent bf16 0
accuracy f16 "$MODEL" --dtype float16
consistent f16 0
accuracy int8 "$MODEL" --quantization int8
consistent int8 0
grep -q "^candidate: --dtype auto, --quantization int8 (per channel)" "$WORK/int8.out" &&
  pass "int8 per channel is named" || fail "int8 candidate line: $(cat "$WORK/int8.out")"
accuracy int8g "$MODEL" --quantization int8 --quantization-group 32
consistent int8g 0
grep -q "(groups of 32)" "$WORK/int8g.out" && pass "int8 groups are named" ||
  fail "int8 group line: $(cat "$WORK/int8g.out")"
# Smaller groups quantize more finely than one scale per channel: they stray less on average.
check "int8 groups of 32 stray less than per channel" \
  "$(jq '.mean_abs_dlogit' "$WORK/int8g.json" "$WORK/int8.json" | paste -sd' ' |
    awk '{ print ($1 < $2) }')" = 1
accuracy kvbf16 "$MODEL" --kv-cache-dtype bfloat16
consistent kvbf16 0

# --compute-dtype bfloat16 (bf16 dot products) where this CPU has them: a difference from the
# fp32 reference, named in the candidate, the start line and /metrics of a server that answers.
if grep -qw avx512_bf16 /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo &&
  grep -qw avx512bw /proc/cpuinfo; then
  accuracy bf16dot "$SHIPPED" --compute-dtype bfloat16
  consistent bf16dot 0
  grep -q "^candidate: .*, --compute-dtype bfloat16$" "$WORK/bf16dot.out" &&
    pass "the bf16 compute candidate is named" || fail "bf16dot: $(cat "$WORK/bf16dot.out")"
  MODEL="$SHIPPED" start_server bf16dot --compute-dtype bfloat16
  check "bf16 compute: the start line says so" \
    "$(grep -c '^kernels: .*; compute bfloat16 (avx512_bf16 dot products)' "$WORK/server-bf16dot.log")" = 1
  check "bf16 compute: /metrics kernel_info says so" \
    "$(curl -s "$URL/metrics" | grep -c '^pagedserve_kernel_info{summary=".*compute bfloat16')" = 1
  out=$(curl -s -H 'Content-Type: application/json' \
    -d '{"prompt":"Hello","max_tokens":6,"temperature":0,"ignore_eos":true}' "$URL/v1/completions")
  check "bf16 compute: a completion has 6 tokens" \
    "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])')" = 6
  stop_server "$SERVER_PID" TERM 30
else
  echo "skip - no AVX512_BF16 here: --compute-dtype bfloat16 is only checked for its refusal"
fi

# --compute-dtype int8 (w8a8: int8 dot products) with int8 weights where AVX512_VNNI is.
if grep -qw avx512_vnni /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo &&
  grep -qw avx512bw /proc/cpuinfo; then
  accuracy w8a8 "$SHIPPED" --quantization int8 --compute-dtype int8
  consistent w8a8 0
  grep -q "^candidate: .*--quantization int8 (per channel), .*, --compute-dtype int8$" \
    "$WORK/w8a8.out" && pass "the int8 compute candidate is named" ||
    fail "w8a8: $(cat "$WORK/w8a8.out")"
  grep -q "^  kernels: .*; compute int8 (avx512_vnni dot products, activations per token)" \
    "$WORK/w8a8.out" && pass "the int8 compute kernels are named" ||
    fail "w8a8 kernels: $(cat "$WORK/w8a8.out")"
else
  echo "skip - no AVX512_VNNI here: --compute-dtype int8 is only checked for its refusal"
fi
# The same on the avx2 ISA where AVX-VNNI is (the VEX vpdpbusd), named in the kernels line.
if grep -qw avx_vnni /proc/cpuinfo && grep -qw avx2 /proc/cpuinfo; then
  accuracy w8a8-avx2 "$SHIPPED" --quantization int8 --compute-dtype int8 --kernel-isa avx2
  consistent w8a8-avx2 0
  grep -q "^  kernels: kernel isa avx2, .*; compute int8 (avx_vnni dot products, activations per token)" \
    "$WORK/w8a8-avx2.out" && pass "the avx2 int8 compute kernels are named" ||
    fail "w8a8 avx2 kernels: $(cat "$WORK/w8a8-avx2.out")"
else
  echo "skip - no AVX-VNNI here: --compute-dtype int8 on avx2 is only checked for its refusal"
fi

# A text dataset through the model's tokenizer: prompts of real text.
printf '%s\n' '{"prompt": "What is the capital of France?", "output_len": 5}' \
  '{"prompt": "Tell me about the moon.", "output_len": 9}' >"$WORK/prompts.jsonl"
if "$BIN" bench accuracy --model "$MODEL" --dataset "$WORK/prompts.jsonl" --quantization int8 \
  --json "$WORK/data.json" >"$WORK/data.out" 2>&1; then
  check "a dataset's output lengths are kept" "$(jq -c '[.prompts, .positions]' "$WORK/data.json")" = "[2,14]"
else
  fail "bench accuracy --dataset: $(tail -n 20 "$WORK/data.out")"
fi

bad() {  # bad NAME EXPECTED-MESSAGE ARGS...
  local name=$1 message=$2 rc=0
  shift 2
  "$BIN" bench accuracy --model "$MODEL" "$@" >"$WORK/bad.out" 2>&1 || rc=$?
  check "$name exits 2" "$rc" = 2
  grep -qF -- "$message" "$WORK/bad.out" && pass "$name names it" ||
    fail "$name message: $(cat "$WORK/bad.out")"
}
bad "--output-len 0" "--output-len must be between 1 and 100000" --output-len 0
bad "--lora" "--lora is not taken" --lora /nonexistent
bad "--dtype int4" "flag --dtype" --dtype int4
bad "an unknown flag" "--bogus" --bogus 1
bad "--compute-dtype float8" "flag --compute-dtype: unknown compute dtype 'float8'" \
  --compute-dtype float8
bad "--compute-dtype bfloat16 with int8" "flag --compute-dtype: --compute-dtype bfloat16 computes on float weights" \
  --compute-dtype bfloat16 --quantization int8
bad "--compute-dtype int8 on float weights" "flag --compute-dtype: --compute-dtype int8 needs --quantization int8 per output channel" \
  --compute-dtype int8
bad "--compute-dtype int8 with groups" "flag --compute-dtype: --compute-dtype int8 needs --quantization int8 per output channel" \
  --compute-dtype int8 --quantization int8 --quantization-group 32
bad "--compute-dtype int8 on generic" "flag --compute-dtype: --compute-dtype int8 needs AVX512_VNNI on the avx512 kernel ISA or AVX-VNNI on the avx2 one" \
  --compute-dtype int8 --quantization int8 --kernel-isa generic
bad "--compute-dtype bfloat16 on avx2" "flag --compute-dtype: --compute-dtype bfloat16 needs a CPU with AVX512_BF16 and the avx512 kernel ISA" \
  --compute-dtype bfloat16 --kernel-isa avx2
rc=0
"$BIN" bench accuracy --model "$MODEL" --dataset "$WORK/missing.jsonl" >"$WORK/bad.out" 2>&1 || rc=$?
check "a missing dataset fails" "$rc" != 0
grep -qF "$WORK/missing.jsonl" "$WORK/bad.out" && pass "a missing dataset is named" ||
  fail "missing dataset message: $(cat "$WORK/bad.out")"

finish
