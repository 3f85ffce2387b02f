#!/usr/bin/env bash
# Structured outputs and tool calling (issue #18) over HTTP with the official openai client
# (tests/js/structured_outputs_http.mjs): a random-weight model sampled at temperature 1 under
# response_format / structured_outputs / tools grammars, served with a Qwen3 chat template
# (tools rendered by the template, the hermes parser detected from it).
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules

start_server structured --chat-template "$ROOT/tests/chat/templates/qwen--qwen3-0.6b.jinja"
check "ready line: the hermes tool-call parser, detected from the template" \
  "$(grep -c 'tool-call parser hermes' "$WORK/server-structured.log")" = 1
if node "$ROOT/tests/js/structured_outputs_http.mjs" "$URL"; then
  pass "openai client structured-output and tool checks"
else
  fail "openai client structured-output and tool checks"
fi
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

# A template the tools format cannot be read from: requests with tools are refused, naming the
# flag; --tool-call-parser sets it.
start_server plain --chat-template chatml
code=$(curl -s -o "$WORK/notools.json" -w '%{http_code}' "$URL/v1/chat/completions" \
  -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}')
check "no tool-call parser: tools are a 400" "$code" = 400
check "the message names --tool-call-parser" "$(grep -c 'tool-call-parser' "$WORK/notools.json")" = 1
stop_server "$SERVER_PID" TERM 30
rc=0
"$BIN" serve --model "$MODEL" --port 0 --tool-call-parser pythonic >"$WORK/badflag.log" 2>&1 || rc=$?
check "--tool-call-parser unknown: exits non-zero" "$rc" != 0
check "the message names the flag and the choices" \
  "$(grep -c 'tool-call-parser pythonic: unknown; use hermes, llama3_json, mistral' "$WORK/badflag.log")" = 1
finish
