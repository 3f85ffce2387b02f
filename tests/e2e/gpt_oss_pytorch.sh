# gpt-oss (issue #34) against real PyTorch. make_gptoss_fixture.py writes a random gpt_oss
# checkpoint as the released ones store it (MXFP4 experts as U8 blocks and scales, gate/up rows
# interleaved, q/k/v/o biases, attention sinks, alternating sliding/full layers, YaRN) and the
# logits a plain-torch forward following HF's modeling_gpt_oss.py gives; convert_logits checks
# the naive oracle and the paged runner against them. Configs edited to drop the clamp or widen
# the window must then miss. A make-tiny-model gpt_oss checkpoint (bf16 + MXFP4) serves over HTTP,
# and broken checkpoints fail by name. Needs /usr/bin/python3 with python3-torch.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/commands.bash"
source "$(dirname "$0")/lib/pytorch.bash"
FIXTURE=gpt_oss
TINY=$(tiny_model)

# The safetensors header of DIR/model.safetensors with OLD replaced by NEW (same length, so the
# data offsets stay valid).
edit_header() {
  "$PY" - "$1/model.safetensors" "$2" "$3" <<'PYEOF'
import struct, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
assert len(old) == len(new)
data = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
header = bytes(data[8:8 + n])
assert header.count(old) == 1, (old, header.count(old))
data[8:8 + n] = header.replace(old, new)
open(path, "wb").write(data)
PYEOF
}

VOCAB=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$TINY/config.json")
run "fixture from PyTorch" "$PY" "$ROOT/tests/tools/make_gptoss_fixture.py" "$FX" "$VOCAB"
cat "$WORK/out.log"
cp "$TINY/tokenizer.json" "$TINY/tokenizer_config.json" "$FX/gpt_oss/"

# 1. The oracle and the runner (prefill of half, then decode steps past the window of 8 and the
# YaRN original context of 16) against PyTorch's logits.
run "gpt_oss logits match PyTorch" "$TOOL" "$FX/gpt_oss" "$FX/gpt_oss"
cat "$WORK/out.log"
grep -q "naive: 48 rows" "$WORK/out.log" && pass "the naive oracle was compared on every row" ||
  fail "naive rows: $(cat "$WORK/out.log")"

# 2. The comparison can fail: the same weights with the clamp lifted or the window widened.
expect_miss no-clamp 'c["swiglu_limit"] = 1000.0'
expect_miss wide-window 'c["sliding_window"] = 1000'

# 3. make-tiny-model gpt_oss, bf16 attention and MXFP4 experts, over HTTP: greedy text equals the
# naive oracle's, and streamed equals whole.
run "make-tiny-model gpt_oss bf16" "$BIN" make-tiny-model "$WORK/tiny-gptoss" --model-type gpt_oss \
  --dtype bf16 --hidden-size 128 --num-layers 4 --num-heads 4 --num-kv-heads 2 --head-dim 32 \
  --intermediate-size 96 --num-experts 8 --num-experts-per-tok 2 --sliding-window 16 --untied
"$PY" - "$WORK/tiny-gptoss/model.safetensors" >"$WORK/dtypes.txt" <<'PYEOF'
import json, struct, sys
f = open(sys.argv[1], "rb")
h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
for k, v in sorted(h.items()):
    if k != "__metadata__":
        print(k, v["dtype"], v["shape"])
PYEOF
grep -q "model.layers.3.mlp.experts.gate_up_proj_blocks U8 \[8, 192, 4, 16\]" "$WORK/dtypes.txt" &&
  grep -q "model.layers.0.self_attn.q_proj.weight BF16 \[128, 128\]" "$WORK/dtypes.txt" &&
  grep -q "model.layers.0.self_attn.sinks" "$WORK/dtypes.txt" &&
  pass "the tiny checkpoint stores MXFP4 experts (U8) beside bf16 attention" ||
  fail "tensors: $(cat "$WORK/dtypes.txt")"
MODEL="$WORK/tiny-gptoss"
start_server gptoss
body='{"model":"tiny-gptoss","prompt":"Hello there, tell me a story","max_tokens":40,"temperature":0,"ignore_eos":true}'
code=$(curl -s -o "$WORK/comp.json" -w '%{http_code}' --max-time 120 -H 'Content-Type: application/json' \
  -d "$body" "$URL/v1/completions")
check "completion on the gpt_oss checkpoint answers 200" "$code" = 200
http_text=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["choices"][0]["text"], end="")' "$WORK/comp.json")
tokens=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["usage"]["completion_tokens"])' "$WORK/comp.json")
check "40 completion tokens (past the window of 16)" "$tokens" = 40
same=$(http_equals_naive "$WORK/comp.json" 40)
check "HTTP greedy text equals the naive oracle's" "$same" = yes
stream_text=$(streamed_completion_text "$body")
check "streamed text equals the non-streamed text" "$stream_text" = "$http_text"
stop_server "$SERVER_PID" TERM 30

# 4. Broken checkpoints and configs fail by name.
copy_fixture no-sinks
edit_header "$WORK/no-sinks" "model.layers.1.self_attn.sinks" "model.layers.1.self_attn.sinkz"
expect_fail "a checkpoint without a layer's sinks" "model.layers.1.self_attn.sinks" \
  "$BIN" generate --model "$WORK/no-sinks" --prompt hi --max-tokens 1
copy_fixture i8-blocks
edit_header "$WORK/i8-blocks" '"model.layers.0.mlp.experts.down_proj_blocks": {"dtype": "U8"' \
  '"model.layers.0.mlp.experts.down_proj_blocks": {"dtype": "I8"'
expect_fail "MXFP4 blocks stored as I8" "MXFP4 blocks and scales are U8" \
  "$BIN" generate --model "$WORK/i8-blocks" --prompt hi --max-tokens 1
copy_fixture fp8
edit_config "$WORK/fp8" 'c["quantization_config"] = {"quant_method": "fp8"}'
expect_fail "quant_method fp8" 'only quant_method "mxfp4"' \
  "$BIN" generate --model "$WORK/fp8" --prompt hi --max-tokens 1
copy_fixture dequantized
edit_config "$WORK/dequantized" 'del c["quantization_config"]'
expect_fail "a config without quantization_config" "dequantized experts" \
  "$BIN" generate --model "$WORK/dequantized" --prompt hi --max-tokens 1
expect_fail "make-tiny-model gpt_oss with hidden 48" "multiples of 32" \
  "$BIN" make-tiny-model "$WORK/bad-tiny" --model-type gpt_oss --hidden-size 48
check "nothing written for the bad make-tiny-model" ! -e "$WORK/bad-tiny"

finish
