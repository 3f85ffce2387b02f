#!/usr/bin/env bash
# The official openai npm client drives the real server: chat and completions, streaming and
# not, include_usage, seeded stream == non-stream, n > 1, logprobs, stop strings.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules

start_server openai
if node "$ROOT/tests/js/server_openai.mjs" "$URL"; then
  pass "openai client checks"
else
  fail "openai client checks"
fi
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0
finish
