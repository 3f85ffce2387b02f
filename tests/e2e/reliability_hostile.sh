#!/usr/bin/env bash
# Hostile input (issue #8), beyond tests/e2e/server_errors.sh: duplicate keys, NaN/Infinity,
# overflowing numbers, deep object nesting, lone surrogates, huge and negative n / max_tokens /
# logprobs, empty stop strings, oversized headers, and slow clients (a header byte at a time
# must hold neither an engine slot nor other clients). Each gets a 4xx; the server stays healthy.
source "$(dirname "$0")/lib/server.bash" "$@"

# expect STATUS NAME CURL_ARGS...: the status and an OpenAI error body.
expect() {
  local want=$1 name=$2 code
  shift 2
  code=$(curl -s -o "$WORK/body" -w '%{http_code}' --max-time 60 "$@") || true
  if [[ "$code" != "$want" ]]; then
    fail "$name: status '$code', want $want: $(head -c 300 "$WORK/body" 2>/dev/null)"
  elif python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["message"]' "$WORK/body" 2>/dev/null; then
    pass "$name ($want)"
  else
    fail "$name: not an OpenAI error body: $(head -c 300 "$WORK/body")"
  fi
}
comp() { expect "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3" "$URL/v1/completions"; }
chat() { expect "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3" "$URL/v1/chat/completions"; }
P='"prompt":"hi"'

start_server hostile --max-n 8
comp 400 "duplicate key" "{$P,\"max_tokens\":1,\"max_tokens\":4000}"
comp 400 "NaN literal" "{$P,\"temperature\":NaN}"
comp 400 "Infinity literal" "{$P,\"temperature\":Infinity}"
comp 400 "number overflowing to infinity" "{$P,\"temperature\":1e999}"
comp 400 "-1e999" "{$P,\"top_p\":-1e999}"
comp 400 "huge n" "{$P,\"n\":1000000000000}"
comp 400 "n beyond int64" "{$P,\"n\":99999999999999999999999}"
comp 400 "negative n" "{$P,\"n\":-1}"
comp 400 "fractional n" "{$P,\"n\":1.5}"
comp 400 "huge max_tokens" "{$P,\"max_tokens\":1099511627776}"
comp 400 "negative max_tokens" "{$P,\"max_tokens\":-5}"
comp 400 "huge logprobs" "{$P,\"logprobs\":1000000000}"
comp 400 "negative logprobs" "{$P,\"logprobs\":-1}"
chat 400 "negative top_logprobs" '{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":-2}'

comp 400 "stop list with an empty string" "{$P,\"stop\":[\"a\",\"\"]}"
comp 400 "stop as an empty string" "{$P,\"stop\":\"\"}"
comp 400 "negative min_tokens" "{$P,\"min_tokens\":-3}"
comp 400 "huge top_k" "{$P,\"top_k\":4294967296}"
comp 400 "logit_bias key not a number" "{$P,\"logit_bias\":{\"abc\":1}}"
comp 400 "logit_bias key negative" "{$P,\"logit_bias\":{\"-4\":1}}"
comp 400 "lone surrogate escape in the prompt" '{"prompt":"\ud800 x"}'
comp 400 "invalid UTF-8 in the prompt" $'{"prompt":"ok \xc0\xaf \xed\xa0\x80"}'
comp 400 "deep object nesting" "$(python3 -c 'print("{\"a\":" * 200 + "1" + "}" * 200)')"
comp 400 "nesting just past the limit inside a valid field" \
  "{$P,\"stream_options\":$(python3 -c 'print("[" * 70 + "]" * 70)')}"
comp 400 "a NUL byte in the JSON text" $'{"prompt":"a"\x01}'
comp 400 "prompt array mixing types" '{"prompt":[1,"a"]}'
comp 400 "2^31 token id" '{"prompt":[2147483648]}'

# A request line and headers past httplib's limits: refused, connection closed, server fine.
long_header=$(python3 -c 'print("x" * 20000)')
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "X-Big: $long_header" "$URL/health" || true)
if [[ "$code" =~ ^4[0-9][0-9]$ || "$code" == 000 ]]; then pass "20 KB header refused ($code)"; else fail "20 KB header: $code"; fi
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$URL/health?q=$long_header" || true)
if [[ "$code" =~ ^4[0-9][0-9]$ || "$code" == 000 ]]; then pass "20 KB URI refused ($code)"; else fail "20 KB URI: $code"; fi

# Slow clients: 16 connections each sending a header byte per ~0.3 s. Meanwhile normal
# requests complete, and no engine slot is taken (running stays 0 between them).
python3 - "$URL" >"$WORK/slow.out" 2>&1 <<'PY' &
import socket, sys, time, threading
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
req = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30\r\n"
def slow():
    s = socket.create_connection((u.hostname, u.port))
    try:
        for b in req[:40]:  # ~12 s of dribble, never finishing the headers
            s.send(bytes([b]))
            time.sleep(0.3)
    except OSError:
        pass  # the server may drop a client that is this slow; that is fine
    s.close()
ts = [threading.Thread(target=slow) for _ in range(16)]
[t.start() for t in ts]
[t.join() for t in ts]
print("slow clients done")
PY
slow_pid=$!
# The normal requests go out once the server holds all 16 dribbling connections.
slow_connected() { (($(metric 'pagedserve_http_connections{state="reading_head"}' || echo 0) >= 16)); }
wait_until 30 slow_connected || true
check "the server holds the 16 slow connections" \
  "$(metric 'pagedserve_http_connections{state="reading_head"}')" -ge 16
ok=0
for i in 1 2 3; do
  code=$(curl -s -o "$WORK/fast.json" -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' \
    -d '{"prompt":"hello","max_tokens":4}' "$URL/v1/completions" || true)
  [[ "$code" == 200 ]] && ok=$((ok + 1))
done
check "3 normal requests succeed while 16 slow clients dribble headers" "$ok" = 3
check "slow clients hold no engine slot" "$(metric pagedserve_num_requests_running)" = 0
check "slow clients are still connected (the test really overlapped them)" "$(kill -0 $slow_pid 2>/dev/null && echo yes)" = yes
wait "$slow_pid" || true

check "health after the hostile inputs" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
  -d '{"prompt":"hello","max_tokens":3}' "$URL/v1/completions")
check "a valid request after them succeeds" "$code" = 200
# 503 is left out: /health answers it while the model loads, and start_server polls it then.
fives=$(curl -s "$URL/metrics" | awk '/^pagedserve_http_responses_total\{code="5/ && !/"503"/ { s += $2 } END { print s + 0 }')
check "no 5xx other than the loading 503s was answered" "$fives" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0
finish
