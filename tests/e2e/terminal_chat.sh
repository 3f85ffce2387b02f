#!/usr/bin/env bash
# `pagedserve chat` driven like a person would, in a real terminal (tmux: send-keys,
# capture-pane): against a running server (--url) and in-process (--model). Checks streaming,
# history (seen in the prompt token counts), /reset /system /set, Ctrl-C stopping an answer
# without quitting (and the server freeing it), server errors shown, Ctrl-D quitting cleanly.
source "$(dirname "$0")/lib/server.bash" "$@"

if ! command -v tmux >/dev/null; then
  fail "tmux is missing: install the Debian package tmux (scripts/setup.sh)"
  finish
fi
SOCK="$WORK/tmux.sock"
tmx() { tmux -S "$SOCK" "$@"; }
trap 'tmx kill-server 2>/dev/null || true; cleanup' EXIT

# The whole pane, wrapped lines joined.
screen() { tmx capture-pane -p -J -S -2000 -t chat 2>/dev/null || true; }
# wait_for REGEX [TIMEOUT_S]: until the pane matches (grep -E); false on timeout.
pane_matches() { screen | grep -Eq -- "$1"; }
wait_for() { wait_until "${2:-60}" pane_matches "$1"; }
check_wait() {  # check_wait NAME REGEX TIMEOUT_S
  if wait_for "$2" "$3"; then pass "$1"; else fail "$1 (no /$2/ on the screen)"; fi
}
count() { screen | grep -Ec -- "$1" || true; }
# answers: how many answers (stats lines) and errors the pane shows.
answers() { echo $(($(count '^\[([0-9]+|\?) prompt') + $(count '^error: '))); }
more_answers_than() { (($(answers) > $1)); }
# say TEXT: types a line and waits for its answer (one more stats line) or an error.
say() {
  local before
  before=$(answers)
  tmx send-keys -t chat -l -- "$1"
  tmx send-keys -t chat Enter
  wait_until 60 more_answers_than "$before" || fail "no answer to '$1' within 60 s"
}
# Prompt tokens / full stats of the Nth-from-last answer (1 = last).
prompt_tokens() { screen | grep -E '^\[([0-9]+|\?) prompt' | tail -n "${1:-1}" | head -n 1 | sed 's/^\[\([0-9]*\) prompt.*/\1/'; }
stats() { screen | grep -E '^\[([0-9]+|\?) prompt' | tail -n "${1:-1}" | head -n 1; }
# The text of the Nth-from-last answer.
answer() {
  screen | python3 -c '
import re, sys
blocks = re.findall(r"> ([^\n]*?)\n\[\d+ prompt", sys.stdin.read())
n = int(sys.argv[1])
print(blocks[-n] if len(blocks) >= n else "<none>")' "${1:-1}"
}
start_chat() {  # start_chat ARGS...: runs `pagedserve chat ARGS` in a fresh tmux session
  tmx kill-session -t chat 2>/dev/null || true
  rm -f "$WORK/chat.rc"
  local args="" a
  for a in "$@"; do args+=" $(printf '%q' "$a")"; done
  tmx new-session -d -s chat -x 160 -y 50 \
    "$(printf '%q' "$BIN") chat$args 2>&1; echo \$? > $(printf '%q' "$WORK/chat.rc"); sleep 600"
  wait_for '^you> ' 120
}
# long_answer_then_ctrl_c NAME: a long answer streams, Ctrl-C stops it, the chat goes on.
long_answer_then_ctrl_c() {
  local name=$1
  local stats_before=$(count '^\[([0-9]+|\?) prompt')
  tmx send-keys -t chat '/set max_tokens 3000' Enter
  # A random model can sample EOS at any step; the answer must still be running at Ctrl-C.
  tmx send-keys -t chat '/set ignore_eos on' Enter
  tmx send-keys -t chat -l 'Tell me a very long story.'
  tmx send-keys -t chat Enter
  # Two looks at the screen while the answer is being written: it grows, so it is streamed. The
  # answer is 3000 tokens, so it is still being written at the second look; no answer line
  # (stats) may have appeared in between.
  local base len1=0 len2=0
  base=$(screen | wc -c)
  grown_past() { len2=$(screen | wc -c); ((len2 > $1)); }
  wait_until 60 grown_past $((base + 80)) || true
  len1=$len2
  wait_until 60 grown_past "$len1" || true
  check "$name: the answer streams (screen grew from $len1 to $len2 bytes)" "$len2" -gt "$len1"
  check "$name: ... and was still being written" "$(count '^\[([0-9]+|\?) prompt')" = "$stats_before"
  tmx send-keys -t chat C-c
  stats_past() { (($(count '^\[([0-9]+|\?) prompt') > stats_before)); }
  wait_until 30 stats_past || true
  check "$name: Ctrl-C stops the answer (finish stopped)" "$(stats | grep -c 'finish stopped')" = 1
  tmx send-keys -t chat '/set max_tokens 24' Enter
  check_wait "$name: the chat is still alive after Ctrl-C" '(^|you> )max_tokens = 24' 30
}
quit_with_ctrl_d() {
  local name=$1 i
  tmx send-keys -t chat C-d
  wait_until 30 test -s "$WORK/chat.rc" || true
  check "$name: Ctrl-D quits with status 0" "$(cat "$WORK/chat.rc" 2>/dev/null)" = 0
}

# ---- as a client of a running server -------------------------------------------------
start_server chat
if ! start_chat --url "$URL" --max-tokens 24 --temperature 0.7 --history 8; then
  fail "the chat did not start"
  screen
  finish
fi
check "url: the banner names the model and the server" "$(count "chatting with e2e-tiny-model \\($URL\\)")" = 1

say "hello"
check "url: an answer with its stats line" "$(stats | grep -Ec 'finish (length|stop)')" = 1
p1=$(prompt_tokens)
say "hello"
p2=$(prompt_tokens)
check "url: the second question carries the first turn ($p1 -> $p2 prompt tokens)" "$p2" -gt "$p1"
tmx send-keys -t chat '/reset' Enter
wait_for 'conversation cleared' 10 || true
say "hello"
check "url: /reset forgets the conversation" "$(prompt_tokens)" = "$p1"
tmx send-keys -t chat -l '/system You are a terse assistant.'
tmx send-keys -t chat Enter
wait_for 'system prompt set' 10 || true
tmx send-keys -t chat '/reset' Enter
say "hello"
p_sys=$(prompt_tokens)
check "url: /system adds a system prompt ($p1 -> $p_sys prompt tokens)" "$p_sys" -gt "$p1"
tmx send-keys -t chat '/system' Enter
wait_for 'system prompt cleared' 10 || true  # typed ahead, answers interleave with the prompt
tmx send-keys -t chat '/set history 0' Enter
check_wait "url: /set history 0" '(^|you> )history = 0' 30
tmx send-keys -t chat '/set temperature 0.9' Enter
check_wait "url: /set temperature 0.9" '(^|you> )temperature = 0.9' 30
tmx send-keys -t chat '/set seed 7' Enter
wait_for '(^|you> )seed = 7' 10 || true
say "same question"
say "same question"
a1=$(answer 2)
a2=$(answer 1)
check "url: with history 0 each question is sent alone" "$(prompt_tokens 2)" = "$(prompt_tokens 1)"
check "url: a fixed seed repeats the sampled answer (so the knobs reach the server)" "$a1" = "$a2"
tmx send-keys -t chat '/set seed off' Enter
tmx send-keys -t chat '/set temperature hot' Enter
check_wait "url: a bad /set value is explained" "/set temperature: 'hot' is not a number" 30

tmx send-keys -t chat '/set max_tokens 100000' Enter
say "too long"
check "url: a server error (max tokens over the context) is shown" \
  "$(screen | grep -Ec '^error: HTTP 400: .*context')" -ge 1

long_answer_then_ctrl_c url
running=""
none_running() {
  # Not lib's metric(): its awk exits at the first match, and curl's write error then fails
  # the pipeline under pipefail.
  running=$(curl -s --max-time 5 "$URL/metrics" | awk '$1 == "pagedserve_num_requests_running" { v = $2 } END { print v }')
  [[ "$running" == 0 ]]
}
wait_until 30 none_running || true
check "url: the server frees the stopped request (running $running)" "$running" = 0

tmx send-keys -t chat -l 'half a line'
tmx send-keys -t chat C-c
check_wait "url: Ctrl-C at the prompt does not quit" 'Ctrl-D or /quit leaves' 30
quit_with_ctrl_d url
screen >"$BUILD/terminal-chat-url.txt"

# ---- in-process on a model directory -------------------------------------------------
if ! start_chat --model "$MODEL" --max-tokens 24 --num-blocks 512; then
  fail "the in-process chat did not start"
  screen
  finish
fi
check "model: the banner says in-process" "$(count 'chatting with e2e-tiny-model \(in-process\)')" = 1
say "hello"
p1=$(prompt_tokens)
say "hello again"
check "model: an answer streams and the history grows" "$(prompt_tokens)" -gt "$p1"
long_answer_then_ctrl_c model
say "still there?"
check "model: a question after Ctrl-C is answered" "$(stats | grep -Ec 'finish (length|stop)')" = 1
quit_with_ctrl_d model
screen >"$BUILD/terminal-chat-model.txt"

# A reasoning model (the scripted Qwen3 checkpoint, reply "<think>Let me think</think>The
# answer"): the reasoning is printed dimmed (ANSI SGR 2) above the answer, in-process and with
# --url. Read from a pipe, so the raw bytes, escapes included, are what we compare.
if /usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py" --out "$WORK/qwen3" \
  --template "$ROOT/tests/chat/templates/qwen--qwen3-0.6b.jinja" \
  --reply-text '<think>Let me think</think>The answer' >"$WORK/make.log" 2>&1; then
  want=$'\e[2mLet me think\e[0m\nThe answer\n'
  printf 'What is six times seven?\n' |
    timeout 120 "$BIN" chat --model "$WORK/qwen3" --temperature 0 >"$WORK/reasoning-model.out" 2>&1 || true
  check "model: reasoning dimmed above the answer" \
    "$(python3 -c 'import sys; print(sys.stdin.read().count(sys.argv[1]))' "$want" <"$WORK/reasoning-model.out")" = 1
  MODEL="$WORK/qwen3"
  start_server reasoning
  printf 'What is six times seven?\n' |
    timeout 120 "$BIN" chat --url "$URL" --temperature 0 >"$WORK/reasoning-url.out" 2>&1 || true
  check "url: reasoning dimmed above the answer" \
    "$(python3 -c 'import sys; print(sys.stdin.read().count(sys.argv[1]))' "$want" <"$WORK/reasoning-url.out")" = 1
  stop_server "$SERVER_PID" TERM 20
else
  fail "make_scripted_model: $(cat "$WORK/make.log")"
fi
finish
