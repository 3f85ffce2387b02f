#!/usr/bin/env bash
# The web chat page: served at / from the copy embedded in the binary (also when the binary is
# moved away from the source tree), then driven in real headless Chromium by
# tests/js/web_chat.mjs (streaming, Stop, knobs sent, history, consistency check, errors).
# Writes a screenshot to BUILD/web-chat.png; with PAGEDSERVE_UPDATE_DOCS=1 it also copies it to
# docs/web-chat.png for the README (a test run does not change the checkout otherwise).
source "$(dirname "$0")/lib/server.bash" "$@"

if [[ ! -x /usr/bin/chromium ]]; then
  fail "/usr/bin/chromium is missing: install the Debian package chromium (scripts/setup.sh)"
  finish
fi
if [[ ! -d "$ROOT/tests/js/node_modules/playwright-core" ]]; then
  fail "tests/js/node_modules/playwright-core is missing: run 'npm ci --prefix tests/js'"
  finish
fi

# The page travels inside the binary: a copy in an empty folder serves it too.
mkdir -p "$WORK/moved"
cp "$BIN" "$WORK/moved/pagedserve"
ORIG_BIN=$BIN
BIN="$WORK/moved/pagedserve"
start_server moved
BIN=$ORIG_BIN
page=$(curl -s --max-time 5 "$URL/")
check "GET / serves the chat page from a moved binary" "$(grep -c 'id="messages"' <<<"$page")" -ge 1
check "GET /chat.js is JavaScript" \
  "$(curl -s -o /dev/null -w '%{content_type}' --max-time 5 "$URL/chat.js")" = "text/javascript; charset=utf-8"
check "GET /chat.css is CSS" \
  "$(curl -s -o /dev/null -w '%{content_type}' --max-time 5 "$URL/chat.css")" = "text/css; charset=utf-8"
check "an unknown file is still a 404" \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/nope.js")" = 404
stop_server "$SERVER_PID" TERM 20

start_server page
shot_copy=()
[[ "${PAGEDSERVE_UPDATE_DOCS:-0}" == 1 ]] && shot_copy=("$ROOT/docs/web-chat.png")
if timeout 300 node "$ROOT/tests/js/web_chat.mjs" "$URL" "$BUILD/web-chat.png" "${shot_copy[@]}" \
  >"$WORK/web_chat.out" 2>&1; then
  pass "web chat page in headless Chromium ($(tail -n 1 "$WORK/web_chat.out"))"
else
  fail "web chat page in headless Chromium"
fi
sed 's/^/    /' "$WORK/web_chat.out"
check "the screenshot was written" -s "$BUILD/web-chat.png"
stop_server "$SERVER_PID" TERM 20
check "the server stopped cleanly after the page test" "$STOP_RC" = 0

# A reasoning model: the scripted Qwen3 checkpoint (tests/tools/make_scripted_model.py).
if /usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py" --out "$WORK/qwen3" \
  --template "$ROOT/tests/chat/templates/qwen--qwen3-0.6b.jinja" \
  --reply-text '<think>Let me think</think>The answer' >"$WORK/make.log" 2>&1; then
  MODEL="$WORK/qwen3"
  start_server reasoning
  if timeout 120 node "$ROOT/tests/js/web_reasoning.mjs" "$URL" >"$WORK/web_reasoning.out" 2>&1; then
    pass "reasoning folded above the answer ($(tail -n 1 "$WORK/web_reasoning.out"))"
  else
    fail "reasoning folded above the answer"
  fi
  sed 's/^/    /' "$WORK/web_reasoning.out"
  stop_server "$SERVER_PID" TERM 20
else
  fail "make_scripted_model: $(cat "$WORK/make.log")"
fi
finish
