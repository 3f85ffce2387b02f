# Qwen3-Next and Qwen3.5-MoE (issue #35) against real PyTorch. make_qwen35_fixture.py writes a
# random qwen3_next checkpoint (in_proj_qkvz / in_proj_ba fused per key head, layer_types from
# full_attention_interval, routed experts plus a sigmoid-gated shared expert, one dense layer
# from mlp_only_layers) and a qwen3_5_moe one (the multimodal wrapper, weights under
# model.language_model., experts stacked as mlp.experts.gate_up_proj / down_proj), with the logits
# a float64 torch forward gives over 300 tokens; convert_logits checks the naive oracle and the
# paged runner (chunks of 1, 7, 64, 300) against them. Edited routing must then miss, broken
# configs fail at load by name, and make-tiny-model checkpoints of both (bf16) serve the text
# the oracle generates. Needs /usr/bin/python3 with python3-torch.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/commands.bash"
source "$(dirname "$0")/lib/pytorch.bash"
TINY=$(tiny_model)

VOCAB=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$TINY/config.json")
for variant in qwen3_next qwen3_5_moe; do
  run "$variant fixture from PyTorch" "$PY" "$ROOT/tests/tools/make_qwen35_fixture.py" "$FX" "$VOCAB" "$variant"
  cat "$WORK/out.log"
  cp "$TINY/tokenizer.json" "$TINY/tokenizer_config.json" "$FX/$variant/"

  # 1. The oracle and the runner against PyTorch's logits, 1e-4, every chunking.
  matches_pytorch "$variant"
done

# 2. The comparison can fail: the same weights routed to three experts, or without renormalising.
FIXTURE=qwen3_next
expect_miss next-top3 'c["num_experts_per_tok"] = 3'
expect_miss next-no-renorm 'c["norm_topk_prob"] = False'
FIXTURE=qwen3_5_moe
expect_miss moe-top1 'c["text_config"]["num_experts_per_tok"] = 1'

# 3. Broken configs fail at load, naming the file and the field or tensor.
FIXTURE=qwen3_next
copy_fixture next-interval
edit_config "$WORK/next-interval" 'c["full_attention_interval"] = 2'
expect_fail "qwen3_next whose interval makes layer 1 full attention" "model.layers.1.self_attn.q_proj.weight" \
  "$BIN" generate --model "$WORK/next-interval" --prompt hi --max-tokens 1
copy_fixture next-no-shared
edit_config "$WORK/next-no-shared" 'del c["shared_expert_intermediate_size"]'
expect_fail "qwen3_next without shared_expert_intermediate_size" \
  'missing required field "shared_expert_intermediate_size"' \
  "$BIN" generate --model "$WORK/next-no-shared" --prompt hi --max-tokens 1
grep -qF "$WORK/next-no-shared/config.json" "$WORK/out.log" && pass "the error names the config file" ||
  fail "no file in: $(cat "$WORK/out.log")"
FIXTURE=qwen3_5_moe
copy_fixture moe-width
edit_config "$WORK/moe-width" 'c["text_config"]["moe_intermediate_size"] = 16'
expect_fail "qwen3_5_moe whose expert width the stacked experts do not have" \
  "model.layers.0.mlp.experts.gate_up_proj" \
  "$BIN" generate --model "$WORK/moe-width" --prompt hi --max-tokens 1

# 4. make-tiny-model checkpoints (bf16) write each family's own layout and generate what the
# oracle does: qwen3_5_moe offline, qwen3_next over HTTP.
run "make-tiny-model qwen3_5_moe bf16" "$BIN" make-tiny-model "$WORK/tiny-moe" \
  --model-type qwen3_5_moe --dtype bf16 --hidden-size 128 --num-layers 4 --num-heads 4 \
  --num-kv-heads 2 --head-dim 32 --intermediate-size 256 --linear-num-key-heads 2 \
  --linear-num-value-heads 4 --num-experts 8 --num-experts-per-tok 2 --moe-intermediate-size 64 \
  --shared-expert-intermediate-size 96
grep -q '"qwen3_5_moe_text"' "$WORK/tiny-moe/config.json" &&
  grep -q '"shared_expert_intermediate_size": 96' "$WORK/tiny-moe/config.json" &&
  pass "the tiny config is a qwen3_5_moe_text with its shared expert" ||
  fail "config: $(cat "$WORK/tiny-moe/config.json")"
tensor_names "$WORK/tiny-moe/model.safetensors" >"$WORK/names.txt"
grep -q "model.layers.0.mlp.experts.gate_up_proj \[8, 128, 128\]" "$WORK/names.txt" &&
  ! grep -q "mlp.experts.0.gate_proj" "$WORK/names.txt" &&
  pass "qwen3_5_moe's experts are stacked as gate_up_proj [E, 2I, H]" ||
  fail "names: $(grep experts "$WORK/names.txt" | head)"
cp "$TINY/tokenizer.json" "$TINY/tokenizer_config.json" "$WORK/tiny-moe/"
"$BIN" generate --model "$WORK/tiny-moe" --prompt "Hello there, tell me a story" --max-tokens 32 \
  --ignore-eos >"$WORK/engine.txt" 2>"$WORK/engine.err" || fail "generate: $(cat "$WORK/engine.err")"
"$(dirname "$BIN")/pagedserve-train" generate --model "$WORK/tiny-moe" \
  --prompt "Hello there, tell me a story" --max-tokens 32 --ignore-eos --naive >"$WORK/naive.txt"
same=$("$PY" -c '
import sys
a, b = (open(p, "rb").read().decode("utf-8", "ignore") for p in sys.argv[1:3])
print("yes" if a == b and len(a) > 20 else "no: %r vs %r" % (a, b))' "$WORK/engine.txt" "$WORK/naive.txt")
check "qwen3_5_moe: the engine's greedy text equals the naive oracle's" "$same" = yes

run "make-tiny-model qwen3_next bf16" "$BIN" make-tiny-model "$WORK/tiny-next" \
  --model-type qwen3_next --dtype bf16 --hidden-size 128 --num-layers 4 --num-heads 4 \
  --num-kv-heads 2 --head-dim 32 --intermediate-size 256 --linear-num-key-heads 2 \
  --linear-num-value-heads 4 --num-experts 8 --num-experts-per-tok 2 --moe-intermediate-size 64
tensor_names "$WORK/tiny-next/model.safetensors" >"$WORK/names.txt"
# Two key heads, each [q 32 | k 32 | v 2x32 | z 2x32] = 192 rows; ba: 2 x (2 + 2).
grep -q "model.layers.0.linear_attn.in_proj_qkvz.weight \[384, 128\]" "$WORK/names.txt" &&
  grep -q "model.layers.0.linear_attn.in_proj_ba.weight \[8, 128\]" "$WORK/names.txt" &&
  grep -q "model.layers.0.mlp.shared_expert_gate.weight \[1, 128\]" "$WORK/names.txt" &&
  pass "qwen3_next writes in_proj_qkvz / in_proj_ba fused and a shared expert gate" ||
  fail "names: $(grep -E 'linear_attn|shared' "$WORK/names.txt" | head)"
cp "$TINY/tokenizer.json" "$TINY/tokenizer_config.json" "$WORK/tiny-next/"
MODEL="$WORK/tiny-next"
start_server next --max-num-seqs 4
body='{"model":"tiny-next","prompt":"Hello there, tell me a story","max_tokens":32,"temperature":0,"ignore_eos":true}'
code=$(curl -s -o "$WORK/comp.json" -w '%{http_code}' --max-time 120 -H 'Content-Type: application/json' \
  -d "$body" "$URL/v1/completions")
check "completion on the qwen3_next checkpoint answers 200" "$code" = 200
same=$(http_equals_naive "$WORK/comp.json" 32)
check "qwen3_next: HTTP greedy text equals the naive oracle's" "$same" = yes
stop_server "$SERVER_PID" TERM 30

expect_fail "--shared-expert-intermediate-size on a dense family" "needs --model-type qwen3_5_moe or qwen3_next" \
  "$BIN" make-tiny-model "$WORK/bad-tiny" --model-type qwen3_5_text --shared-expert-intermediate-size 8
check "nothing written for the bad make-tiny-model" ! -e "$WORK/bad-tiny"

finish
