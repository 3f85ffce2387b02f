#!/usr/bin/env bash
# 64 concurrent streaming clients get complete, correct outputs, batched by the engine.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules

start_server concurrency --max-num-seqs 64
if node "$ROOT/tests/js/server_concurrency.mjs" "$URL" 64; then
  pass "64 concurrent streaming clients"
else
  fail "64 concurrent streaming clients"
fi
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0
finish
