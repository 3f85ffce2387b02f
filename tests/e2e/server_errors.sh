#!/usr/bin/env bash
# Every client mistake gets its 4xx with an OpenAI error body, never a 5xx, and the server keeps
# serving afterwards. Also: the queue limit (429 + Retry-After) and the API key (401).
source "$(dirname "$0")/lib/server.bash" "$@"

# expect STATUS NAME CURL_ARGS...: the status, and a body {"error": {message, type, param, code}}.
expect() {
  local want=$1 name=$2
  shift 2
  local code
  code=$(curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' --max-time 60 "$@") || true
  if [[ "$code" != "$want" ]]; then
    fail "$name: status '$code', want $want: $(head -c 300 "$WORK/body" 2>/dev/null)"
    return 0
  fi
  if python3 - "$WORK/body" <<'PY'; then
import json, sys
e = json.load(open(sys.argv[1], encoding="utf-8"))["error"]
assert isinstance(e["message"], str) and e["message"]
assert isinstance(e["type"], str) and e["type"]
assert "param" in e and "code" in e
PY
    pass "$name ($want)"
  else
    fail "$name: not an OpenAI error body: $(head -c 300 "$WORK/body")"
  fi
}

# body_has NAME TEXT: the last error body's message mentions TEXT.
body_has() {
  if grep -qF -- "$2" "$WORK/body"; then pass "$1"; else fail "$1: '$2' not in $(head -c 300 "$WORK/body")"; fi
}

post_chat() { expect "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3" "$URL/v1/chat/completions"; }
post_comp() { expect "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3" "$URL/v1/completions"; }
MSG='"messages":[{"role":"user","content":"hi"}]'

start_server errors --max-num-seqs 1 --max-queued-requests 1 --max-body-bytes 65536 --max-n 8

post_chat 400 "malformed JSON" '{"messages": ['
post_chat 400 "body is not an object" '[1, 2]'
post_chat 400 "invalid UTF-8 in the body" $'{"messages":[{"role":"user","content":"\xff\xfe"}]}'
post_chat 400 "deeply nested JSON" "$(printf '[%.0s' $(seq 1 20000))"
post_chat 400 "wrong type: messages" '{"messages":"hi"}'
post_chat 400 "wrong type: temperature" "{$MSG,\"temperature\":\"hot\"}"
body_has "type error names the field" "temperature"
post_chat 400 "wrong type: max_tokens" "{$MSG,\"max_tokens\":\"10\"}"
post_chat 400 "wrong type: stream" "{$MSG,\"stream\":\"yes\"}"
post_chat 400 "wrong type: content" '{"messages":[{"role":"user","content":42}]}'
post_comp 400 "wrong type: prompt" '{"prompt":{"a":1}}'
post_chat 400 "out of range: temperature" "{$MSG,\"temperature\":5}"
post_chat 400 "out of range: top_p" "{$MSG,\"top_p\":0}"
post_chat 400 "out of range: presence_penalty" "{$MSG,\"presence_penalty\":9}"
post_chat 400 "out of range: top_logprobs" "{$MSG,\"logprobs\":true,\"top_logprobs\":50}"
post_chat 400 "out of range: logit_bias" "{$MSG,\"logit_bias\":{\"5\":200}}"
post_chat 400 "out of range: max_tokens 0" "{$MSG,\"max_tokens\":0}"
post_comp 400 "token id outside the vocabulary" '{"prompt":[1,2,99999999]}'
post_chat 400 "too many stop strings" "{$MSG,\"stop\":[$(printf '"s%d",' $(seq 1 20))\"x\"]}"
post_chat 400 "n over --max-n" "{$MSG,\"n\":9}"
body_has "n message says the limit" "between 1 and 8"
post_chat 404 "unknown model" "{$MSG,\"model\":\"no-such-model\"}"
body_has "unknown model is named" "no-such-model"
post_chat 400 "empty messages" '{"messages":[]}'
post_comp 400 "empty prompt" '{"prompt":""}'
post_chat 400 "prompt + max_tokens beyond the context" "{$MSG,\"max_tokens\":100000}"
body_has "context message says the context length" "4096"
body_has "context message says max_tokens" "100000"
ids=$(python3 -c 'print(",".join(["7"] * 5000))')
post_comp 400 "prompt alone beyond the context" "{\"prompt\":[$ids],\"max_tokens\":1}"
body_has "long prompt message says its length" "5000"
post_chat 400 "unsupported: tools" "{$MSG,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}"
expect 400 "tokenize without prompt" -H 'Content-Type: application/json' -d '{}' "$URL/tokenize"
expect 400 "detokenize outside the vocabulary" -H 'Content-Type: application/json' \
  -d '{"tokens":[99999999]}' "$URL/detokenize"
expect 404 "unknown route" "$URL/v1/nothing-here"
expect 404 "GET on a POST route" "$URL/v1/chat/completions"

# Body over --max-body-bytes: read and refused (below 2x the limit), refused before it is sent
# (Expect: 100-continue), and dropped by httplib far above the limit.
python3 -c 'import json; print(json.dumps({"prompt": "a" * 100000}))' >"$WORK/big.json"
python3 -c 'import json; print(json.dumps({"prompt": "a" * 400000}))' >"$WORK/huge.json"
expect 413 "body over --max-body-bytes" -H 'Content-Type: application/json' -H 'Expect:' \
  --data-binary @"$WORK/big.json" "$URL/v1/completions"
body_has "413 message says the limit" "65536"
expect 413 "body over the limit, Expect: 100-continue" -H 'Content-Type: application/json' \
  -H 'Expect: 100-continue' --data-binary @"$WORK/huge.json" "$URL/v1/completions"

# curl -d without a Content-Type sends a form type; a JSON body past 8 KiB must still be read as
# JSON (httplib would refuse a form that large).
python3 -c 'import json; print(json.dumps({"prompt": "hello world " * 800, "max_tokens": 1}))' >"$WORK/form.json"
check "a 9 KB JSON body sent as a form type is served" \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -d @"$WORK/form.json" "$URL/v1/completions")" = 200

# Queue over --max-queued-requests (1 running + 1 queued allowed): the third gets 429.
long='{"prompt":"Count:","max_tokens":2000,"temperature":0,"ignore_eos":true}'
curl -s -o /dev/null --max-time 120 -H 'Content-Type: application/json' -d "$long" "$URL/v1/completions" &
bg1=$!
curl -s -o /dev/null --max-time 120 -H 'Content-Type: application/json' -d "$long" "$URL/v1/completions" &
bg2=$!
wait_until 60 engine_counts_are 1 1 || true
post_comp 429 "queue full" "$long"
check "429 carries Retry-After" "$(grep -ci '^retry-after: [0-9]' "$WORK/headers")" = 1
# Both clients leave mid-request; each must end as an abort, not run out its 2000 tokens. The
# wait is for both aborts and an idle engine (no timing bound: a slow host only waits longer);
# the abort counter is what tells a noticed disconnect from a request that ran to its end. The
# queued one can be scheduled before its handler sees the hang-up, so idleness alone, read too
# early, is not the end of the story.
aborted_before=$(metric pagedserve_requests_aborted_total)
kill "$bg1" "$bg2" 2>/dev/null || true
wait "$bg1" "$bg2" 2>/dev/null || true
both_aborted() { (($(metric pagedserve_requests_aborted_total) - aborted_before >= 2)); }
wait_until 120 both_aborted || true
wait_until 60 engine_counts_are 0 0 || true
check "disconnected queue clients leave the engine idle" "$(engine_counts_are 0 0 && echo idle)" = idle
check "disconnected queue clients were cancelled" \
  "$(( $(metric pagedserve_requests_aborted_total) - aborted_before ))" = 2

# After all of that, the server still serves.
code=$(curl -s -o "$WORK/ok.json" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
  -d "{$MSG,\"max_tokens\":4}" "$URL/v1/chat/completions")
check "a valid request after the errors succeeds" "$code" = 200
check "no 500 was ever answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

# API key from the environment: /v1 needs it, /health and /metrics do not.
PAGEDSERVE_API_KEY=sekrit start_server auth-env
expect 401 "no API key" -H 'Content-Type: application/json' -d "{$MSG,\"max_tokens\":2}" "$URL/v1/chat/completions"
expect 401 "wrong API key" -H 'Authorization: Bearer nope' "$URL/v1/models"
check "right API key" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit' "$URL/v1/models")" = 200
check "/health needs no key" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200
stop_server "$SERVER_PID" INT 30
check "SIGINT exits 0" "$STOP_RC" = 0
start_server auth-flag --api-key flagkey
expect 401 "no API key (--api-key)" "$URL/v1/models"
check "right API key (--api-key)" \
  "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer flagkey' "$URL/v1/models")" = 200
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 (auth server)" "$STOP_RC" = 0
finish
