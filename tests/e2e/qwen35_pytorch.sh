# Qwen3.5's hybrid model (issue #35) against real PyTorch. make_qwen35_fixture.py writes a random
# qwen3_5_text checkpoint (Gated DeltaNet layers, one gated full-attention layer, (1 + w) norms,
# partial RoPE, MRoPE sections) and the logits a float64 torch forward following HF's modeling
# code gives over 300 tokens; convert_logits checks the naive oracle and the paged runner against
# them, the runner also prefilling in chunks of 1, 7, 64 and 300 with the recurrent state carried
# between steps. Configs edited to rotate more or a different base must then miss. A
# make-tiny-model qwen3_5_text checkpoint serves over HTTP (greedy text equals the oracle's,
# streamed equals whole, a client that disconnects mid-stream gives its state slot back), a small
# --kv-cache-memory lowers --max-num-seqs with a notice, and broken configs and checkpoints fail
# at load by name. Needs /usr/bin/python3 with python3-torch.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/commands.bash"
source "$(dirname "$0")/lib/pytorch.bash"
FIXTURE=qwen3_5
TINY=$(tiny_model)

VOCAB=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$TINY/config.json")
run "fixture from PyTorch" "$PY" "$ROOT/tests/tools/make_qwen35_fixture.py" "$FX" "$VOCAB"
cat "$WORK/out.log"
cp "$TINY/tokenizer.json" "$TINY/tokenizer_config.json" "$FX/qwen3_5/"

# 1. The oracle and the runner against PyTorch's logits, 1e-4, every chunking.
matches_pytorch qwen3_5

# 2. The comparison can fail: the same weights read with more of each head rotated, or another
# RoPE base.
expect_miss half-rotary 'c["rope_parameters"]["partial_rotary_factor"] = 0.5'
expect_miss other-base 'c["rope_parameters"]["rope_theta"] = 10000.0'

# 3. Broken configs and checkpoints fail at load, naming the file and the field or tensor.
copy_fixture bad-kind
edit_config "$WORK/bad-kind" 'c["layer_types"][1] = "mamba"'
expect_fail "an unknown layer_types entry" 'layer_types[1] is "mamba"' \
  "$BIN" generate --model "$WORK/bad-kind" --prompt hi --max-tokens 1
grep -qF "$WORK/bad-kind/config.json" "$WORK/out.log" && pass "the error names the config file" ||
  fail "no file in: $(cat "$WORK/out.log")"
copy_fixture no-vdim
edit_config "$WORK/no-vdim" 'del c["linear_value_head_dim"]'
expect_fail "a missing linear_* field" 'missing required field "linear_value_head_dim"' \
  "$BIN" generate --model "$WORK/no-vdim" --prompt hi --max-tokens 1
copy_fixture odd-heads
edit_config "$WORK/odd-heads" 'c["linear_num_value_heads"] = 3'
expect_fail "value heads not a multiple of key heads" \
  "linear_num_value_heads (3) must be a multiple of linear_num_key_heads (2)" \
  "$BIN" generate --model "$WORK/odd-heads" --prompt hi --max-tokens 1
copy_fixture wide-conv
edit_config "$WORK/wide-conv" 'c["linear_conv_kernel_dim"] = 5'
expect_fail "a conv kernel the checkpoint does not have" "model.layers.0.linear_attn.conv1d.weight" \
  "$BIN" generate --model "$WORK/wide-conv" --prompt hi --max-tokens 1

# 4. make-tiny-model qwen3_5_text (bf16) over HTTP.
run "make-tiny-model qwen3_5_text bf16" "$BIN" make-tiny-model "$WORK/tiny-q35" \
  --model-type qwen3_5_text --dtype bf16 --hidden-size 128 --num-layers 4 --num-heads 4 \
  --num-kv-heads 2 --head-dim 32 --intermediate-size 256 --linear-num-key-heads 2 \
  --linear-num-value-heads 4 --linear-key-head-dim 32 --linear-value-head-dim 32
grep -q '"linear_attention"' "$WORK/tiny-q35/config.json" &&
  grep -q '"linear_num_value_heads": 4' "$WORK/tiny-q35/config.json" &&
  pass "the tiny config lists linear_attention layers and their shape" ||
  fail "config: $(cat "$WORK/tiny-q35/config.json")"
MODEL="$WORK/tiny-q35"
start_server q35 --max-num-seqs 4
grep -q "recurrent state: 4 sequences at once" "$WORK/server-q35.log" &&
  pass "the start-up line says how many sequences' states fit" ||
  fail "no state line: $(cat "$WORK/server-q35.log")"
check "/metrics shows 4 state slots" "$(metric 'pagedserve_state_slots{state="total"}')" = 4
body='{"model":"tiny-q35","prompt":"Hello there, tell me a story","max_tokens":40,"temperature":0,"ignore_eos":true}'
code=$(curl -s -o "$WORK/comp.json" -w '%{http_code}' --max-time 120 -H 'Content-Type: application/json' \
  -d "$body" "$URL/v1/completions")
check "completion on the qwen3_5_text checkpoint answers 200" "$code" = 200
http_text=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["choices"][0]["text"], end="")' "$WORK/comp.json")
same=$(http_equals_naive "$WORK/comp.json" 40)
check "HTTP greedy text equals the naive oracle's" "$same" = yes
stream_text=$(streamed_completion_text "$body")
check "streamed text equals the non-streamed text" "$stream_text" = "$http_text"

# A client that disconnects mid-stream: its request is aborted and its state slot freed.
aborted_before=$(metric pagedserve_requests_aborted_total)
long='{"model":"tiny-q35","prompt":"Once upon a time","max_tokens":4000,"temperature":0,"ignore_eos":true,"stream":true}'
curl -sN --max-time 120 -H 'Content-Type: application/json' -d "$long" "$URL/v1/completions" >/dev/null &
CLIENT=$!
one_slot_in_use() { [[ "$(metric 'pagedserve_state_slots{state="in_use"}')" == 1 ]]; }
wait_until 60 one_slot_in_use || true
check "a streaming request holds one state slot" "$(metric 'pagedserve_state_slots{state="in_use"}')" = 1
kill "$CLIENT" 2>/dev/null || true
wait "$CLIENT" 2>/dev/null || true
aborted() { (($(metric pagedserve_requests_aborted_total) - aborted_before >= 1)); }
wait_until 60 aborted || true
slots_free() {
  curl -s --max-time 5 "$URL/metrics" | awk '
    $1 == "pagedserve_state_slots{state=\"in_use\"}" { u = $2 }
    $1 == "pagedserve_state_slots{state=\"free\"}" { f = $2 }
    END { exit !(u == 0 && f == 4) }'
}
wait_until 60 slots_free || true
check "the disconnected client was aborted" "$(( $(metric pagedserve_requests_aborted_total) - aborted_before ))" = 1
check "its state slot is free again (0 in use, 4 free)" "$(slots_free && echo yes)" = yes
stop_server "$SERVER_PID" TERM 30

# A budget whose half holds 2 states (57 KiB each) lowers --max-num-seqs 8 to 2, with a notice; requests still run.
start_server q35-small --max-num-seqs 8 --kv-cache-memory 240K
grep -q "max-num-seqs 8 lowered to" "$WORK/server-q35-small.log" &&
  pass "--max-num-seqs is lowered with a notice ($(grep -m1 -o 'lowered to [0-9]*' "$WORK/server-q35-small.log"))" ||
  fail "no notice: $(cat "$WORK/server-q35-small.log")"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 -H 'Content-Type: application/json' \
  -d "$body" "$URL/v1/completions")
check "the lowered server still answers 200" "$code" = 200
stop_server "$SERVER_PID" TERM 30

expect_fail "make-tiny-model qwen3_5_text with 3 value heads for 2 key heads" "multiple of --linear-num-key-heads" \
  "$BIN" make-tiny-model "$WORK/bad-tiny" --model-type qwen3_5_text --linear-num-key-heads 2 \
  --linear-num-value-heads 3
check "nothing written for the bad make-tiny-model" ! -e "$WORK/bad-tiny"

finish
