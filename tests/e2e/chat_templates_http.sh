#!/usr/bin/env bash
# Chat templates as the checkpoint ships them (issue #16): a scripted Qwen3 checkpoint
# (tests/tools/make_scripted_model.py: real Qwen3 template in tokenizer_config.json, greedy
# reply "<think>Let me think</think>The answer") served by the real binary.
#   - /tokenize with messages gives the tokens of Python Jinja2's rendering of the same
#     template (transformers' settings), for conversations with a system turn, multi-turn
#     history with <think>, tool calls and results, CJK and emoji, generation prompt on/off,
#     enable_thinking on/off (which must add the empty think block);
#   - chat completions over curl and the official openai client: reasoning_content then
#     content, streamed and not, identical splits; enable_thinking false: no reasoning field;
#     refusal null;
#   - a checkpoint whose template does not parse fails to load, naming the file and line.
source "$(dirname "$0")/lib/server.bash" "$@"

TEMPLATE="$ROOT/tests/chat/templates/qwen--qwen3-0.6b.jinja"
REPLY='<think>Let me think</think>The answer'
JINJA2=(/usr/bin/python3 "$ROOT/tests/tools/render_template_jinja2.py")

if /usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py" --out "$WORK/qwen3" \
  --template "$TEMPLATE" --reply-text "$REPLY" >"$WORK/make.log" 2>&1; then
  pass "scripted Qwen3 checkpoint written"
else
  fail "make_scripted_model: $(cat "$WORK/make.log")"
  finish
fi

# --- a template that does not parse is a load error, never a silent fallback
mkdir -p "$WORK/broken"
cp "$WORK/qwen3"/* "$WORK/broken/"
jq '.chat_template = "{{ bos_token }}\n{% for m in messages %}\n{{ m.content | no_such_filter }}\n{% endfor %}"' \
  "$WORK/qwen3/tokenizer_config.json" >"$WORK/broken/tokenizer_config.json"
rc=0
"$BIN" serve --model "$WORK/broken" --port 0 >"$WORK/broken.log" 2>&1 || rc=$?
check "a broken checkpoint template: serve exits non-zero" "$rc" != 0
check "the message names the file and the line" \
  "$(grep -c 'broken/tokenizer_config.json (chat_template): line 3' "$WORK/broken.log")" = 1
check "the message names the filter" "$(grep -c 'no_such_filter' "$WORK/broken.log")" -ge 1

MODEL="$WORK/qwen3"
start_server qwen3
check "ready line: the checkpoint's Jinja template, reasoning parser qwen3" \
  "$(grep -c 'chat template jinja (.*qwen3/tokenizer_config.json (chat_template)), reasoning parser qwen3' \
    "$WORK/server-qwen3.log")" = 1

post() {  # post PATH BODY
  curl -s --max-time 60 "$URL$1" -H 'content-type: application/json' -d "$2"
}

# --- /tokenize with messages == Jinja2's text, tokenized by the same server
EOS=$(jq -r '.eos_token // ""' "$MODEL/tokenizer_config.json")
BOS=$(jq -r 'if (.bos_token|type) == "string" then .bos_token else "" end' "$MODEL/tokenizer_config.json")
cat >"$WORK/conversations.jsonl" <<'JSON'
{"name":"one user turn","messages":[{"role":"user","content":"Hi"}]}
{"name":"system, multi-turn","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"And now?"}]}
{"name":"think in history is stripped","messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":"<think>\nadd them\n</think>\n\n4"},{"role":"user","content":"3+3?"}]}
{"name":"enable_thinking false","messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":false}}
{"name":"no generation prompt","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"}],"add_generation_prompt":false}
{"name":"CJK and emoji","messages":[{"role":"user","content":"你好，世界 🙂🚀"}]}
{"name":"tool call and result","messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris","days":2}}}]},{"role":"tool","tool_call_id":"c1","content":"sunny, 21 C"}]}
{"name":"content parts","messages":[{"role":"user","content":[{"type":"text","text":"part one"},{"type":"text","text":"part two"}]}]}
JSON
i=0
while IFS= read -r conv; do
  i=$((i + 1))
  name=$(jq -r .name <<<"$conv")
  # The context transformers builds: tools/documents None, the tokenizer's bos/eos, kwargs.
  # Content parts: a template that does not loop over content gets them joined by "\n" (vLLM).
  jq --arg bos "$BOS" --arg eos "$EOS" '
      {messages: [.messages[] | if (.content|type) == "array"
                                then .content = ([.content[].text] | join("\n")) else . end],
       tools: null, documents: null,
       add_generation_prompt: (if has("add_generation_prompt") then .add_generation_prompt else true end),
       bos_token: $bos, eos_token: $eos} + (.chat_template_kwargs // {})' <<<"$conv" \
    >"$WORK/ctx$i.json"
  if ! "${JINJA2[@]}" "$TEMPLATE" "$WORK/ctx$i.json" >"$WORK/jinja2_$i.txt" 2>"$WORK/jinja2_$i.err"; then
    fail "$name: Jinja2 failed: $(cat "$WORK/jinja2_$i.err")"
    continue
  fi
  ours=$(post /tokenize "$(jq -c 'del(.name)' <<<"$conv")" | jq -c .tokens)
  theirs=$(post /tokenize "$(jq -Rsc '{prompt: .}' "$WORK/jinja2_$i.txt")" | jq -c .tokens)
  if [[ "$ours" != null && "$ours" == "$theirs" ]]; then
    pass "/tokenize messages == Jinja2: $name"
  else
    fail "/tokenize messages != Jinja2: $name (ours $ours, Jinja2's $theirs)"
  fi
done <"$WORK/conversations.jsonl"
check "enable_thinking false: Jinja2 wrote the empty think block" "$(/usr/bin/python3 -c '
import sys; print(open(sys.argv[1], encoding="utf-8").read().endswith("<think>\n\n</think>\n\n"))' \
  "$WORK/jinja2_4.txt")" = True
check "enable_thinking true: no think block in the prompt" "$(grep -c 'think>' "$WORK/jinja2_1.txt")" = 0
check "think in history: Jinja2 dropped the old reasoning" "$(grep -c 'add them' "$WORK/jinja2_3.txt")" = 0
# Negative: a different conversation tokenizes differently (the comparison can fail).
a=$(post /tokenize '{"messages":[{"role":"user","content":"Hi"}]}' | jq -c .tokens)
b=$(post /tokenize '{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":false}}' | jq -c .tokens)
check "enable_thinking changes the prompt" "$a" != "$b"

# --- chat completions over curl: the reasoning split, streamed and not
Q='{"messages":[{"role":"user","content":"What is six times seven?"}],"max_tokens":64,"temperature":0'
whole=$(post /v1/chat/completions "$Q}")
check "non-streamed: reasoning_content" "$(jq -r '.choices[0].message.reasoning_content' <<<"$whole")" = "Let me think"
check "non-streamed: content" "$(jq -r '.choices[0].message.content' <<<"$whole")" = "The answer"
check "non-streamed: refusal is null" "$(jq -c '.choices[0].message | has("refusal") and .refusal == null' <<<"$whole")" = true
post /v1/chat/completions "$Q,\"stream\":true}" | sed -n 's/^data: //p' | grep -v '^\[DONE\]$' >"$WORK/stream.jsonl"
check "streamed: the role chunk has refusal null" \
  "$(jq -s -c '.[0].choices[0].delta' "$WORK/stream.jsonl")" = '{"content":"","refusal":null,"role":"assistant"}'
check "streamed: reasoning_content deltas join to the same reasoning" \
  "$(jq -rs '[.[].choices[0].delta.reasoning_content // empty] | join("")' "$WORK/stream.jsonl")" = "Let me think"
check "streamed: content deltas join to the same answer" \
  "$(jq -rs '[.[].choices[0].delta.content // empty] | join("")' "$WORK/stream.jsonl")" = "The answer"
check "streamed: every reasoning delta comes before any content" \
  "$(jq -s '[.[].choices[0].delta | select(((.content // "") != "") or ((.reasoning_content // "") != "")) | if (.content // "") != "" then "c" else "r" end] | join("") | test("^r+c+$")' "$WORK/stream.jsonl")" = true
check "streamed: no chunk carries a tag" "$(grep -c 'think>' "$WORK/stream.jsonl" || true)" = 0
# enable_thinking false: the prompt closed the think block, so the reply is all answer.
nothink=$(post /v1/chat/completions "$Q,\"chat_template_kwargs\":{\"enable_thinking\":false}}")
check "enable_thinking false: no reasoning field" "$(jq '.choices[0].message | has("reasoning_content")' <<<"$nothink")" = false
check "enable_thinking false: the reply is content" "$(jq -r '.choices[0].message.content' <<<"$nothink")" = "$REPLY"
# Bad chat fields are 400s naming the field.
code=$(curl -s -o "$WORK/bad.json" -w '%{http_code}' "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":"no"}')
check "chat_template_kwargs not an object: 400" "$code" = 400
check "  naming the field" "$(jq -r .error.param "$WORK/bad.json")" = chat_template_kwargs
code=$(curl -s -o "$WORK/bad.json" -w '%{http_code}' "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"x"}],"continue_final_message":true,"add_generation_prompt":false}')
check "continue_final_message after a user turn: 400" "$code" = 400

# --- the official openai client
if [[ -d "$ROOT/tests/js/node_modules/openai" ]]; then
  if node "$ROOT/tests/js/chat_templates_http.mjs" "$URL"; then
    pass "openai client: reasoning_content and chat_template_kwargs"
  else
    fail "openai client: reasoning_content and chat_template_kwargs"
  fi
else
  fail "tests/js/node_modules/openai is missing: run 'npm ci --prefix tests/js'"
fi
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

# --- --reasoning-parser none: the whole reply is content (the split above is the parser's)
start_server none --reasoning-parser none
plain=$(post /v1/chat/completions "$Q}")
check "--reasoning-parser none: the reply is content" "$(jq -r '.choices[0].message.content' <<<"$plain")" = "$REPLY"
check "--reasoning-parser none: no reasoning field" "$(jq '.choices[0].message | has("reasoning_content")' <<<"$plain")" = false
stop_server "$SERVER_PID" TERM 30
finish
