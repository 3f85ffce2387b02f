#!/usr/bin/env bash
# Soak and fault test (issue #8): bursts of concurrent mixed requests, client disconnects and
# cancels, a KV pool small enough to force preemption, bursts past the queue limit; then no
# request lost, nothing running or waiting, no KV block leaked, integrity checked every engine
# step, and no thread or RSS growth across rounds. The client is tests/e2e/reliability_soak.py.
#
# Short form in CI (3 rounds x 150 requests). Longer: PAGEDSERVE_SOAK_ROUNDS=50
# PAGEDSERVE_SOAK_REQUESTS=400 bash tests/e2e/reliability_soak.sh BIN BUILD_DIR
source "$(dirname "$0")/lib/server.bash" "$@"

ROUNDS=${PAGEDSERVE_SOAK_ROUNDS:-3}
REQUESTS=${PAGEDSERVE_SOAK_REQUESTS:-150}
# 40 blocks of 16 tokens hold ~640 tokens: far fewer than 8 running sequences of up to ~300
# tokens each want, so decode runs out of blocks and preempts.
start_server soak --max-num-seqs 8 --max-queued-requests 24 --num-blocks 40 --block-size 16 \
  --max-batched-tokens 512 --debug-check-integrity --shutdown-timeout 5
if python3 "$ROOT/tests/e2e/reliability_soak.py" "$URL" "$SERVER_PID" --rounds "$ROUNDS" \
  --requests "$REQUESTS" --seed "${PAGEDSERVE_SOAK_SEED:-1}" | tee "$WORK/soak.out"; then
  pass "soak: $ROUNDS rounds x $REQUESTS requests, every request accounted for"
else
  fail "soak (see the FAIL lines above)"
fi
check "the server still answers /health" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/health")" = 200
check "no engine error was logged" "$(grep -c 'internal error\|integrity' "$WORK/server-soak.log" || true)" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM after the soak exits 0" "$STOP_RC" = 0
finish
