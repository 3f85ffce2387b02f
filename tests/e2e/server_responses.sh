#!/usr/bin/env bash
# The official openai client's responses.* drives /v1/responses on the shipped model
# (tests/js/server_responses.mjs says what it checks); a server with --responses-store-size 2
# forgets the oldest of three stored responses; every event of real streams (text, a function
# call) and every whole response validates against OpenAI's published OpenAPI schemas.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules
MODEL="$ROOT/models/tiny"

start_server responses --max-model-len 512
if node "$ROOT/tests/js/server_responses.mjs" "$URL" "$ROOT"; then
  pass "openai client responses checks"
else
  fail "openai client responses checks"
fi

# Every whole response and every streamed event validates against OpenAI's OpenAPI schemas
# (tests/api_schemas/): a plain response, an incomplete one, a function call, text.format, and
# their streams; an error body.
TOOLS=$(tool_dialogue | jq -c '{tools: [.tools[] | {type: "function"} + .function], input: .user}' |
  sed 's/^{//; s/}$//')
validated() {  # validated NAME SCHEMA BODY [--sse]
  curl -s -N -o "$WORK/$1.out" --max-time 120 "$URL/v1/responses" \
    -H 'Content-Type: application/json' --data-binary "$3"
  schema_valid "$1" "$2" "$WORK/$1.out" "${@:4}"
}
ASK='"model": "tiny", "temperature": 0, "input": "Who are you?"'
FORMAT='"text": {"format": {"type": "json_schema", "name": "r", "schema": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 8}}, "required": ["a"]}}}'
validated plain Response "{$ASK, \"max_output_tokens\": 16, \"store\": true}"
validated incomplete Response "{$ASK, \"max_output_tokens\": 2}"
check "incomplete: status incomplete" "$(jq -r .status "$WORK/incomplete.out")" = incomplete
validated function_call Response "{\"model\": \"tiny\", \"temperature\": 0, \"max_output_tokens\": 64, $TOOLS}"
check "function_call: a function_call item" "$(jq -r '.output[-1].type' "$WORK/function_call.out")" = function_call
validated format Response "{$ASK, \"max_output_tokens\": 32, $FORMAT}"
validated plain_stream ResponseStreamEvent "{$ASK, \"max_output_tokens\": 16, \"stream\": true}" --sse
validated incomplete_stream ResponseStreamEvent "{$ASK, \"max_output_tokens\": 2, \"stream\": true}" --sse
check "incomplete_stream: ends with response.incomplete" \
  "$(sed -n 's/^event: //p' "$WORK/incomplete_stream.out" | tail -n 1)" = response.incomplete
validated function_call_stream ResponseStreamEvent \
  "{\"model\": \"tiny\", \"temperature\": 0, \"max_output_tokens\": 64, \"stream\": true, $TOOLS}" --sse
check "function_call_stream: function_call_arguments events" \
  "$(grep -c '^event: response.function_call_arguments.done' "$WORK/function_call_stream.out")" = 1
validated format_stream ResponseStreamEvent "{$ASK, \"max_output_tokens\": 32, \"stream\": true, $FORMAT}" --sse
validated error ErrorResponse '{"model": "tiny", "input": [{"type": "bogus"}]}'
STORED=$(jq -r .id "$WORK/plain.out")
curl -s -o "$WORK/retrieved.out" "$URL/v1/responses/$STORED"
schema_valid retrieved Response "$WORK/retrieved.out"
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

start_server responses-store2 --max-model-len 512 --responses-store-size 2
if node "$ROOT/tests/js/server_responses.mjs" "$URL" "$ROOT" 2; then
  pass "store size bound checks"
else
  fail "store size bound checks"
fi
stop_server "$SERVER_PID" TERM 30
finish
