#!/usr/bin/env bash
# Request priorities and deadlines over HTTP (issue #39): --scheduling-policy fcfs|priority and
# a request's "priority"; --max-queue-seconds / --max-request-seconds and a request's
# max_queue_seconds / max_request_seconds. Bad values are a 400 naming the field in each route's
# own error shape, and bad flags a start-up error naming the flag.
#
# Nothing here bounds a time: a "long" request asks for 4000 tokens on the tiny model (seconds
# even on a fast host) and is cancelled, never awaited; deadlines are 0.5-1 s, and what tells a
# deadline from a natural end is the finish reason, usage and the /metrics counters.
source "$(dirname "$0")/lib/server.bash" "$@"

J=(-H 'Content-Type: application/json')
status() { curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' --max-time 60 "${J[@]}" "$@" || true; }
err_field() { python3 -c "import json; print(json.load(open('$WORK/body'))$1)"; }
long='"prompt":"Count:","max_tokens":4000,"ignore_eos":true,"temperature":0'

# Bad flags: exit 2 before listening, naming the flag.
for bad in "--scheduling-policy lifo" "--max-queue-seconds -1" "--max-request-seconds abc"; do
  rc=0
  # shellcheck disable=SC2086  # the flag and its value are two words
  "$BIN" serve --model "$MODEL" $bad >"$WORK/bad.log" 2>&1 || rc=$?
  check "serve $bad exits 2" "$rc" = 2
  check "... and names ${bad%% *}" "$(grep -c -- "${bad%% *}" "$WORK/bad.log")" -ge 1
done

# fcfs (the default): a priority other than 0 is refused, naming the field and the flag.
start_server fcfs
check "fcfs: priority 0 is served" "$(status -d '{"prompt":"a","max_tokens":2,"priority":0}' "$URL/v1/completions")" = 200
check "fcfs: priority 3 is a 400" "$(status -d '{"prompt":"a","max_tokens":2,"priority":3}' "$URL/v1/completions")" = 400
check "... naming priority" "$(err_field '["error"]["param"]')" = priority
check "... and the flag" "$(grep -c -- '--scheduling-policy priority' "$WORK/body")" = 1
for body in '"priority":"high"' '"priority":1.5' '"max_queue_seconds":-1' '"max_queue_seconds":0' \
  '"max_request_seconds":"10"' '"max_request_seconds":1e9'; do
  field=$(echo "$body" | sed 's/^"\([a-z_]*\)".*/\1/')
  check "completions {$body} is a 400" "$(status -d "{\"prompt\":\"a\",\"max_tokens\":2,$body}" "$URL/v1/completions")" = 400
  check "... naming $field" "$(err_field '["error"]["param"]')" = "$field"
  check "chat {$body} is a 400" \
    "$(status -d "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2,$body}" "$URL/v1/chat/completions")" = 400
done
code=$(status -d '{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"hi"}],"max_queue_seconds":-2}' "$URL/v1/messages")
check "messages: a negative deadline is a 400" "$code" = 400
check "... in Anthropic's error shape" "$(err_field '["type"]')" = error
check "... naming the field" "$(grep -c max_queue_seconds "$WORK/body")" -ge 1
check "responses: a bad priority is a 400" "$(status -d '{"input":"hi","max_output_tokens":2,"priority":"x"}' "$URL/v1/responses")" = 400
check "... naming it" "$(grep -c priority "$WORK/body")" -ge 1
stop_server "$SERVER_PID" TERM 30

# One seat: whatever arrives while a long request runs waits.
start_server prio --scheduling-policy priority --max-num-seqs 1
wait_running() {  # wait_running N: until N requests run (bounded; the check that follows says)
  for _ in $(seq 1 600); do
    [[ "$(metric pagedserve_num_requests_running)" == "$1" ]] && return 0
    sleep 0.1
  done
}
wait_idle() { wait_until 60 engine_counts_are 0 0 || true; }
curl -s -N -o "$WORK/a.out" --max-time 300 "${J[@]}" -d "{$long,\"stream\":true,\"priority\":5}" "$URL/v1/completions" &
a=$!
wait_running 1
check "a long priority-5 request runs" "$(metric pagedserve_num_requests_running)" = 1
# A second one queued behind it keeps the seat taken twice as long on a fast host.
curl -s -N -o "$WORK/b.out" --max-time 300 "${J[@]}" -d "{$long,\"stream\":true,\"priority\":5}" "$URL/v1/completions" &
b=$!
for _ in $(seq 1 600); do [[ "$(metric pagedserve_num_requests_waiting)" == 1 ]] && break; sleep 0.1; done
check "a second one waits" "$(metric pagedserve_num_requests_waiting)" = 1

# Queue deadline: refused with 503 + Retry-After, whole and streamed, without running.
code=$(status -d '{"prompt":"hi","max_tokens":5,"priority":5,"max_queue_seconds":0.5}' "$URL/v1/completions")
check "queue deadline: 503" "$code" = 503
check "... with Retry-After" "$(grep -ci '^retry-after: [0-9]' "$WORK/headers")" = 1
check "... code queue_timeout" "$(err_field '["error"]["code"]')" = queue_timeout
curl -s -N -o "$WORK/q.out" --max-time 60 "${J[@]}" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"priority":9,"max_queue_seconds":0.5,"stream":true}' \
  "$URL/v1/chat/completions"
check "streamed: an error event with queue_timeout" "$(grep -c '^data: {"error".*queue_timeout' "$WORK/q.out")" = 1
check "... then [DONE]" "$(tail -n 2 "$WORK/q.out" | grep -c '^data: \[DONE\]')" = 1
check "... and no content" "$(grep -c '"content":"[^"]' "$WORK/q.out")" = 0
model=$(curl -s "$URL/v1/models" | jq -r '.data[0].id')
code=$(status -d "{\"model\":\"$model\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"priority\":7,\"max_queue_seconds\":0.5}" "$URL/v1/messages")
check "messages: queue deadline is a 503" "$code" = 503
check "... in Anthropic's shape" "$(err_field '["type"]')" = error
check "both refusals counted" "$(metric pagedserve_requests_queue_timeout_total)" = 3
check "the refused took no seat from the long ones" "$(metric pagedserve_num_requests_running)" = 1
check "the long requests were never preempted" "$(metric pagedserve_num_preemptions_total)" = 0

# Priority: a priority-0 request takes the seat at once and finishes while the long one waits.
code=$(status -d '{"prompt":"hi","max_tokens":5,"priority":0,"ignore_eos":true}' "$URL/v1/completions")
check "priority 0 is served while a priority-5 request holds the only seat" "$code" = 200
check "... with all its tokens" "$(err_field '["usage"]["completion_tokens"]')" = 5
check "... by preempting it" "$(metric pagedserve_num_preemptions_total)" = 1
check "the long requests were still going" "$(kill -0 "$a" 2>/dev/null && kill -0 "$b" 2>/dev/null && echo alive)" = alive
kill "$a" "$b" 2>/dev/null || true
wait "$a" "$b" 2>/dev/null || true
wait_idle

# Total deadline: a request still generating at max_request_seconds ends there with
# finish_reason length and the tokens it made, whole and streamed.
code=$(status -d "{$long,\"max_request_seconds\":1}" "$URL/v1/completions")
check "total deadline (whole): 200" "$code" = 200
check "... finish_reason length" "$(err_field '["choices"][0]["finish_reason"]')" = length
n=$(err_field '["usage"]["completion_tokens"]')
check "... with some of its 4000 tokens ($n)" "$(( n > 0 && n < 4000 ))" = 1
curl -s -N -o "$WORK/d.out" --max-time 120 "${J[@]}" -d "{$long,\"max_request_seconds\":1,\"stream\":true}" "$URL/v1/completions"
check "total deadline (streamed): finish_reason length" "$(grep -c '"finish_reason":"length"' "$WORK/d.out")" = 1
check "... then [DONE]" "$(tail -n 2 "$WORK/d.out" | grep -c '^data: \[DONE\]')" = 1
check "... no error event" "$(grep -c '"error"' "$WORK/d.out")" = 0
check "both counted" "$(metric pagedserve_requests_deadline_total)" = 2
wait_idle
check "nothing left running or waiting" "$(metric pagedserve_num_requests_running)/$(metric pagedserve_num_requests_waiting)" = 0/0
check "no KV block held" "$(metric pagedserve_kv_cache_usage_perc)" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

# Server defaults, and a body asking for more than the server allows gets the server's.
start_server defaults --max-request-seconds 1
code=$(status -d "{$long,\"max_request_seconds\":1000}" "$URL/v1/completions")
check "--max-request-seconds caps a longer body deadline" "$(err_field '["choices"][0]["finish_reason"]')/$code" = length/200
check "... counted" "$(metric pagedserve_requests_deadline_total)" = 1
stop_server "$SERVER_PID" TERM 30

finish
