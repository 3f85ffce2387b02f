#!/usr/bin/env bash
# Issue #36: our chat and completion responses validate against OpenAI's own OpenAPI document
# (the part of it in tests/api_schemas/, tests/api_schemas/README.md says where it comes from).
# The shipped model answers over the real HTTP API, curl keeps each body or event stream, and
# tests/tools/validate_openai_schema.py (Draft 2020-12, python3-jsonschema) checks it against
# the schema OpenAI documents for it: chat plain, with logprobs and top_logprobs, n 2, a tool
# call, streamed (with the usage chunk, with logprobs, a tool call); completions plain, with
# logprobs, n 2, streamed; error bodies; the model list. Each case also checks that the reply
# has the shape it is meant to exercise (logprobs present, two choices, finish_reason
# tool_calls, ...), so the schema parts it names were really validated. And the check can
# fail: a valid body with a required field deleted is rejected.
source "$(dirname "$0")/lib/server.bash" "$@"

PY=/usr/bin/python3
VALIDATE="$ROOT/tests/tools/validate_openai_schema.py"
MODEL="$ROOT/models/tiny"
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
  fail "python3-jsonschema is missing (apt-get install python3-jsonschema)"
  finish
fi
start_server schemas --max-model-len 512

# request NAME PATH JSON_BODY: posts it, keeps the reply in $WORK/NAME.out; sets STATUS.
request() {
  STATUS=$(curl -s -N -o "$WORK/$1.out" -w '%{http_code}' --max-time 120 "$URL$2" \
    -H 'Content-Type: application/json' --data-binary "$3")
}

valid() {  # valid NAME SCHEMA [--sse]: $WORK/NAME.out against SCHEMA
  schema_valid "$1" "$2" "$WORK/$1.out" "${@:3}"
}

# respond NAME PATH SCHEMA JSON_BODY [--sse]: the request answers 200 and its reply validates.
respond() {
  local name=$1 path=$2 schema=$3 body=$4
  shift 4
  request "$name" "$path" "$body"
  check "$name: HTTP 200" "$STATUS" = 200
  valid "$name" "$schema" "$@"
}

# jqs NAME FILTER: jq on the reply, or for a stream on the array of its events' JSON.
jqs() {
  if grep -q '^data: ' "$WORK/$1.out"; then
    sed -n 's/^data: //p' "$WORK/$1.out" | grep -v '^\[DONE\]$' | jq -s -r "$2"
  else
    jq -r "$2" "$WORK/$1.out"
  fi
}

ASK='"model": "tiny", "temperature": 0, "messages": [{"role": "user", "content": "Who are you?"}]'
PROMPT='"model": "tiny", "temperature": 0, "prompt": "pagedserve is"'

# --- /v1/chat/completions
respond chat /v1/chat/completions CreateChatCompletionResponse "{$ASK, \"max_tokens\": 16}"
check "chat: an answer in words" -n "$(jqs chat '.choices[0].message.content // empty')"

respond chat_logprobs /v1/chat/completions CreateChatCompletionResponse \
  "{$ASK, \"max_tokens\": 4, \"logprobs\": true, \"top_logprobs\": 3}"
check "chat_logprobs: 4 tokens with 3 top_logprobs each" \
  "$(jqs chat_logprobs '[.choices[0].logprobs.content[].top_logprobs | length] | join(",")')" = 3,3,3,3

respond chat_n2 /v1/chat/completions CreateChatCompletionResponse "{$ASK, \"max_tokens\": 4, \"n\": 2}"
check "chat_n2: two choices" "$(jqs chat_n2 '.choices | map(.index) | join(",")')" = 0,1

# A training question about a city's weather, with its tools: the model answers with a call
# (tests/e2e/tiny_tool_call.sh checks the call itself). The call takes about 46 tokens.
TOOL_ASK=$(tool_dialogue | jq -c '{model: "tiny", temperature: 0, max_tokens: 64, tools,
                                     messages: [{role: "user", content: .user}]}' | sed 's/^{//; s/}$//')
check "a tool question was found in the training data" -n "$TOOL_ASK"
respond chat_tool_call /v1/chat/completions CreateChatCompletionResponse "{$TOOL_ASK}"
check "chat_tool_call: finish_reason tool_calls" \
  "$(jqs chat_tool_call '.choices[0].finish_reason')" = tool_calls
check "chat_tool_call: one function call" \
  "$(jqs chat_tool_call '.choices[0].message.tool_calls | map(.type) | join(",")')" = function

respond chat_stream /v1/chat/completions CreateChatCompletionStreamResponse \
  "{$ASK, \"max_tokens\": 8, \"stream\": true, \"stream_options\": {\"include_usage\": true}}" --sse
check "chat_stream: ends with [DONE]" "$(tail -n 2 "$WORK/chat_stream.out" | head -n 1)" = "data: [DONE]"
check "chat_stream: a finish_reason, then the usage chunk" \
  "$(jqs chat_stream '[.[-2].choices[0].finish_reason, (.[-1].choices | length),
                       .[-1].usage.total_tokens > 0] | join(",")')" \
  = length,0,true

respond chat_stream_logprobs /v1/chat/completions CreateChatCompletionStreamResponse \
  "{$ASK, \"max_tokens\": 4, \"stream\": true, \"logprobs\": true, \"top_logprobs\": 2}" --sse
check "chat_stream_logprobs: 4 chunks carry logprobs" \
  "$(jqs chat_stream_logprobs 'map(.choices[0].logprobs.content // empty | .[]) | length')" = 4

respond chat_stream_tool_call /v1/chat/completions CreateChatCompletionStreamResponse \
  "{$TOOL_ASK, \"stream\": true}" --sse
check "chat_stream_tool_call: tool_calls deltas, finish_reason tool_calls" \
  "$(jqs chat_stream_tool_call '[(map(.choices[0].delta.tool_calls // empty) | length > 1),
                                 .[-1].choices[0].finish_reason] | join(",")')" \
  = true,tool_calls

# --- /v1/completions
respond completion /v1/completions CreateCompletionResponse "{$PROMPT, \"max_tokens\": 8}"
check "completion: text" -n "$(jqs completion '.choices[0].text')"

respond completion_logprobs /v1/completions CreateCompletionResponse \
  "{$PROMPT, \"max_tokens\": 3, \"logprobs\": 2}"
check "completion_logprobs: 3 tokens, text_offset, 2 top_logprobs each" \
  "$(jqs completion_logprobs '.choices[0].logprobs | [(.tokens | length), (.text_offset | length),
                               (.top_logprobs | map(length) | join(" "))] | join(",")')" \
  = "3,3,2 2 2"

respond completion_n2 /v1/completions CreateCompletionResponse "{$PROMPT, \"max_tokens\": 4, \"n\": 2}"
check "completion_n2: two choices" "$(jqs completion_n2 '.choices | map(.index) | join(",")')" = 0,1

# OpenAI's document has no schema for a /v1/completions stream (its 200 is CreateCompletionResponse,
# application/json only): each chunk is held to DerivedCompletionStreamChunk, that body's schema
# with finish_reason and usage also allowed to be null, as OpenAI's own streamed example and its
# include_usage documentation show them (tests/tools/extract_openai_schemas.py derives it).
respond completion_stream /v1/completions DerivedCompletionStreamChunk \
  "{$PROMPT, \"max_tokens\": 4, \"stream\": true, \"stream_options\": {\"include_usage\": true}}" --sse
check "completion_stream: 4 text chunks, then the usage chunk" \
  "$(jqs completion_stream '[(map(.choices[0].text // empty) | length),
                             .[-1].usage.completion_tokens] | join(",")')" = 4,4

# --- error bodies and the model list
request chat_error /v1/chat/completions '{"model": "tiny", "messages": "not a list"}'
check "chat_error: HTTP 400" "$STATUS" = 400
valid chat_error ErrorResponse
request completion_error /v1/completions "{$PROMPT, \"max_tokens\": -1}"
check "completion_error: HTTP 400" "$STATUS" = 400
valid completion_error ErrorResponse
STATUS=$(curl -s -o "$WORK/models.out" -w '%{http_code}' --max-time 10 "$URL/v1/models")
check "models: HTTP 200" "$STATUS" = 200
valid models ListModelsResponse

# --- the check can fail: OpenAI requires logprobs.refusal (null when there is none), so a
# valid body without it is rejected, with exit status 1 and the field named.
jq 'del(.choices[0].logprobs.refusal)' "$WORK/chat_logprobs.out" >"$WORK/no_refusal.out"
rc=0
"$PY" "$VALIDATE" CreateChatCompletionResponse "$WORK/no_refusal.out" \
  >"$WORK/no_refusal.validate" 2>&1 || rc=$?
check "a body without logprobs.refusal is rejected (exit 1)" "$rc" = 1
check "the rejection names the field" \
  "$(grep -cF "\$.choices[0].logprobs: 'refusal' is a required property" "$WORK/no_refusal.validate")" = 1

check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 20
check "the server stopped cleanly" "$STOP_RC" = 0
finish
