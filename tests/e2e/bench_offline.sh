#!/usr/bin/env bash
# `bench offline` with a tiny workload: both modes complete every request and their token counts
# add up; --dataset reads a JSONL file. Never asserts speed.
source "$(dirname "$0")/lib/server.bash" "$@"

if "$BIN" bench offline --model "$MODEL" --num-prompts 4 --output-len 8 --no-probe \
  --max-num-seqs 4 --json "$WORK/offline.json" >"$WORK/offline.out" 2>&1; then
  pass "bench offline exits 0"
else
  fail "bench offline exits 0: $(tail -n 20 "$WORK/offline.out")"
fi
if python3 - "$WORK/offline.json" <<'PY'; then pass "bench offline JSON consistent"; else fail "bench offline JSON"; fi
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] == 4 and r["expected_output_tokens"] == 32, r
for mode in ["continuous", "single"]:
    m = r[mode]
    assert m["requests"] == 4 and m["output_tokens"] == 32, m
    assert m["prompt_tokens"] == r["prompt_tokens"] == 4 * 64, m
    for k in ["seconds", "total_tok_s", "output_tok_s", "mean_ttft_ms", "mean_tpot_ms"]:
        assert m[k] > 0, (mode, k)
assert r["single"]["max_seqs_in_step"] == 1, r["single"]
assert r["continuous"]["max_seqs_in_step"] >= 1, r["continuous"]
assert r["ratio_output_tok_s"] > 0
PY

# The in-run floors (issue #38): decode at the batch the run reached, and a single request's
# prefill, each against the machine probed in the same run; their report fields agree with the
# printed lines (shares, not speeds, so nothing here depends on the machine).
if "$BIN" bench offline --model "$MODEL" --num-prompts 4 --input-len 32 --output-len 8 \
  --max-num-seqs 4 --skip-single --json "$WORK/floors.json" >"$WORK/floors.out" 2>&1 &&
  "$BIN" bench offline --model "$MODEL" --num-prompts 1 --input-len 200 --output-len 1 \
    --skip-single --json "$WORK/prefill.json" >"$WORK/prefill.out" 2>&1; then
  pass "bench offline with floors exits 0"
else
  fail "bench offline with floors: $(tail -n 20 "$WORK/floors.out" "$WORK/prefill.out")"
fi
grep -q "^decode at 4 seqs: floor [0-9.]* tok/s" "$WORK/floors.out" &&
  pass "a 4-sequence run is held to its decode floor" || fail "no decode floor: $(cat "$WORK/floors.out")"
grep -q "^prefill of 200 tokens: .* compute floor (matmuls + attention)" "$WORK/prefill.out" &&
  pass "a one-request run is held to its prefill floor" || fail "no prefill floor: $(cat "$WORK/prefill.out")"
if python3 - "$WORK/floors.json" "$WORK/prefill.json" <<'PY'; then pass "floor fields consistent"; else fail "floor fields"; fi
import json, sys
d, p = (json.load(open(f))["machine"] for f in sys.argv[1:3])
assert d["decode_batch"] == 4 and d["decode_floor_tok_s"] > 0 and d["decode_tok_s"] > 0, d
# The step floor is the slower of reading the weights and computing 4 tokens.
step = max(1 / d["bandwidth_floor_tok_s"], 4 / d["compute_floor_tok_s"])
assert abs(d["decode_floor_tok_s"] - 4 / step) < 1e-6 * d["decode_floor_tok_s"], d
assert "prefill_s" not in d, d
assert p["prefill_tokens"] == 200 and p["prefill_s"] > 0, p
# Matmuls alone take 200 tokens' worth of compute; attention adds to it.
assert p["prefill_floor_s"] > 200 / p["compute_floor_tok_s"], p
assert "decode_batch" not in p, p
PY

cat >"$WORK/data.jsonl" <<'JSONL'
{"prompt": "hello there", "output_len": 3}
{"conversations": [{"from": "human", "value": "what is a page?"}, {"from": "gpt", "value": "a block"}]}
{"prompt": [10, 11, 12, 13]}
JSONL
if "$BIN" bench offline --model "$MODEL" --dataset "$WORK/data.jsonl" --output-len 5 \
  --skip-single --json "$WORK/dataset.json" >"$WORK/dataset.out" 2>&1 &&
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["continuous"]
assert r["requests"] == 3 == c["requests"], r
assert c["output_tokens"] == r["expected_output_tokens"], r
assert c["prompt_tokens"] == r["prompt_tokens"] and r["prompt_tokens"] > 4, r
' "$WORK/dataset.json"; then
  pass "bench offline --dataset JSONL"
else
  fail "bench offline --dataset: $(tail -n 20 "$WORK/dataset.out")"
fi
out=$("$BIN" bench offline --model "$MODEL" --dataset "$WORK/missing.jsonl" 2>&1) &&
  fail "missing --dataset exits non-zero" ||
  check "missing --dataset names the file" -n "$(grep -F missing.jsonl <<<"$out")"
# Sliding-window release (kvcache/kv_pools.h): a Gemma-3-style model (window 32, one layer in
# three global) holds fewer KV blocks per sequence than with every layer global, and the report
# says so; --disable-hybrid-kv-cache-manager keeps one pool and reports nothing of the kind.
G3="$WORK/gemma3"
"$BIN" make-tiny-model "$G3" --model-type gemma3_text --hidden-size 64 --num-layers 6 --num-heads 2 \
  --num-kv-heads 1 --head-dim 32 --intermediate-size 128 --sliding-window 32 \
  --sliding-window-pattern 3 >"$WORK/g3-make.log" 2>&1
if "$BIN" bench offline --model "$G3" --num-prompts 4 --input-len 300 --output-len 16 --no-probe \
  --skip-single --json "$WORK/g3.json" >"$WORK/g3.out" 2>&1; then
  pass "bench offline on a sliding-window model exits 0"
else
  fail "bench offline on a sliding-window model: $(tail -n 20 "$WORK/g3.out")"
fi
check "the start-up line sizes both pools" \
  "$(grep -c '^KV cache: [0-9]* blocks for full-attention layers, [0-9]* for sliding-window layers' "$WORK/g3.out")" = 1
# 2 of 6 layers keep ~20 blocks of 16 tokens, 4 keep a window's 3-4: about 0.45x of all-global.
check "blocks held per sequence: fewer than all-global, more than the global layers alone" \
  "$(jq '.kv_blocks_per_sequence | .ratio < 0.6 and .ratio > 0.33 and .held < .all_global' "$WORK/g3.json")" = true
"$BIN" bench offline --model "$G3" --num-prompts 4 --input-len 300 --output-len 16 --no-probe \
  --skip-single --disable-hybrid-kv-cache-manager --json "$WORK/g3-one.json" >"$WORK/g3-one.out" 2>&1 || true
check "--disable-hybrid-kv-cache-manager: one pool, no release reported" \
  "$(grep -c 'sliding-window layers' "$WORK/g3-one.out")/$(jq 'has("kv_blocks_per_sequence")' "$WORK/g3-one.json")" = 0/false

finish
