#!/usr/bin/env bash
# The official @anthropic-ai/sdk client drives /v1/messages and /v1/messages/count_tokens on
# the shipped model (tests/js/server_anthropic.mjs says what it checks), then a server started
# with --api-key takes the key as x-api-key (Anthropic clients' header) and refuses a wrong one
# in Anthropic's error shape.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules
MODEL="$ROOT/models/tiny"

start_server anthropic --max-model-len 512
if node "$ROOT/tests/js/server_anthropic.mjs" "$URL" "$ROOT"; then
  pass "anthropic client checks"
else
  fail "anthropic client checks"
fi
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

start_server anthropic-keyed --max-model-len 512 --api-key sk-test-key
if node "$ROOT/tests/js/server_anthropic.mjs" "$URL" "$ROOT" sk-test-key keyed; then
  pass "x-api-key checks"
else
  fail "x-api-key checks"
fi
stop_server "$SERVER_PID" TERM 30
finish
