#!/usr/bin/env bash
# The checkpoint's generation_config.json fills sampling fields a request leaves out
# (--generation-config auto, the default), the request's own fields win, --generation-config none
# turns it off, and the start-up line says which defaults are in force. Observed through the
# real server: max_new_tokens caps how many tokens a chat reply without max_tokens gets.
source "$(dirname "$0")/lib/server.bash" "$@"

CKPT="$WORK/ckpt"
cp -r "$MODEL" "$CKPT"
cat >"$CKPT/generation_config.json" <<'JSON'
{"bos_token_id": 1, "do_sample": true, "temperature": 0.7, "top_p": 0.8, "top_k": 20,
 "repetition_penalty": 1.05, "max_new_tokens": 3, "transformers_version": "4.51.0"}
JSON
MODEL="$CKPT"

# completion_tokens of a chat request with extra JSON fields $1 (ignore_eos: always full length).
chat_tokens() {
  curl -s --max-time 60 -H 'Content-Type: application/json' \
    -d "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"ignore_eos\":true$1}" \
    "$URL/v1/chat/completions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])'
}

start_server auto --max-model-len 64
line=$(grep '^generation defaults:' "$WORK/server-auto.log" || true)
[[ "$line" == *"temperature=0.7 top_p=0.8 top_k=20 repetition_penalty=1.05 max_new_tokens=3"* && "$line" == *"$CKPT/generation_config.json"* ]] &&
  pass "start-up line lists the defaults in force and their file" || fail "start-up line: '$line'"
check "default max_new_tokens applies when max_tokens is left out" "$(chat_tokens '')" = 3
check "the request's max_tokens wins over the default" "$(chat_tokens ',"max_tokens":7')" = 7
# distinct_choices EXTRA: how many different texts 4 choices of 8 tokens come out as.
distinct_choices() {
  curl -s --max-time 60 -H 'Content-Type: application/json' \
    -d "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"n\":4,\"max_tokens\":8,\"ignore_eos\":true$1}" \
    "$URL/v1/chat/completions" |
    python3 -c 'import json,sys; print(len({c["message"]["content"] for c in json.load(sys.stdin)["choices"]}))'
}
# The default temperature 0.7 samples (random weights: 4 choices all alike would be a fluke);
# the client's temperature 0 wins and makes them greedy, so identical.
check "the default temperature samples when the request sends none" "$(distinct_choices '')" -gt 1
check "a request's temperature 0 overrides the default" "$(distinct_choices ',"temperature":0')" = 1
stop_server "$SERVER_PID" TERM 20

start_server none --max-model-len 64 --generation-config none
grep -q '^generation defaults: none (--generation-config none)' "$WORK/server-none.log" &&
  pass "start-up line says none with --generation-config none" || fail "$(grep generation "$WORK/server-none.log")"
check "without defaults a chat reply fills the context (more than 3 tokens)" "$(chat_tokens '')" -gt 3
stop_server "$SERVER_PID" TERM 20

# A bad generation_config.json fails at load naming the file and field.
echo '{"temperature": 9}' >"$CKPT/generation_config.json"
rc=0
timeout 120 "$BIN" serve --model "$CKPT" --port 0 >"$WORK/bad.log" 2>&1 || rc=$?
check "a bad generation_config.json stops the server" "$rc" -ne 0
grep -q 'generation_config.json: temperature' "$WORK/bad.log" && pass "the error names the file and field" ||
  fail "$(tail -3 "$WORK/bad.log")"
finish
