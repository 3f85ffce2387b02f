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
