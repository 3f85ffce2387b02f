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
PY=/usr/bin/python3
VALIDATE="$ROOT/tests/tools/validate_openai_schema.py"
TOOLS=$("$PY" - "$ROOT/data/tiny_chat/train.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    row = json.loads(line)
    if row.get("kind") != "tool_answer":
        continue
    user, call = row["messages"][:2]
    if call["tool_calls"][0]["function"]["name"] == "get_weather" and user["content"].isascii():
        tools = [dict(type="function", **t["function"]) for t in row["tools"]]
        print(json.dumps({"tools": tools, "input": user["content"]})[1:-1])
        break
PYEOF
)
validated() {  # validated NAME SCHEMA BODY [--sse]
  local name=$1 schema=$2 body=$3
  shift 3
  curl -s -N -o "$WORK/$name.out" --max-time 120 "$URL/v1/responses" \
    -H 'Content-Type: application/json' --data-binary "$body"
  if "$PY" "$VALIDATE" "$schema" "$WORK/$name.out" "$@" >"$WORK/$name.validate" 2>&1; then
    pass "$name: valid $schema"
  else
    sed 's/^/    /' "$WORK/$name.validate"
    fail "$name: valid $schema"
  fi
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
if "$PY" "$VALIDATE" Response "$WORK/retrieved.out" >"$WORK/retrieved.validate" 2>&1; then
  pass "retrieved: valid Response"
else
  fail "retrieved: valid Response ($(cat "$WORK/retrieved.validate"))"
fi
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
