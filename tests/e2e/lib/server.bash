# Shared by tests/e2e/server_*.sh: a cached tiny model, starting the real `pagedserve serve` on a
# free loopback port, checks that count, and cleanup that always kills what we started.
# Usage (from a test script): source "$(dirname "$0")/lib/server.bash" "$@"
set -euo pipefail

BIN=$(realpath "${1:?usage: $0 PAGEDSERVE_BINARY BUILD_DIR}")
BUILD=$(realpath "${2:?usage: $0 PAGEDSERVE_BINARY BUILD_DIR}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pagedserve-e2e.XXXXXX")
PASSED=0
FAILED=0
SERVER_PIDS=()

cleanup() {
  local pid i
  # SIGTERM first, so every server a test started also goes through the graceful shutdown
  # path, and under AddressSanitizer through LeakSanitizer's check at exit (a SIGKILLed
  # process reports nothing); SIGKILL after 5 s for one that hangs.
  for pid in "${SERVER_PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${SERVER_PIDS[@]:-}"; do
    for i in $(seq 1 50); do
      [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null || true
  done
  # Children we put in the background (curl, node) die with the test, never outlive it.
  local jobs_left
  jobs_left=$(jobs -p || true)
  [[ -n "$jobs_left" ]] && kill -KILL $jobs_left 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() {
  PASSED=$((PASSED + 1))
  echo "ok   - $*"
}

fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL - $*"
}

check() {  # check "name" test-args...   (runs `test` on the rest)
  local name=$1
  shift
  if test "$@"; then pass "$name"; else fail "$name (test $*)"; fi
}

# The last line ctest shows; non-zero exit when anything failed.
finish() {
  echo "$PASSED passed, $FAILED failed"
  if ((FAILED > 0)); then
    for log in "$WORK"/server-*.log; do
      [[ -f "$log" ]] || continue
      echo "--- tail of $log"
      tail -n 30 "$log"
    done
    exit 1
  fi
  exit 0
}

# The tiny model, made once per build dir and remade when the binary is newer than it. A lock
# keeps parallel tests (ctest -j) from writing it at the same time.
tiny_model() {
  local dir="$BUILD/e2e-tiny-model"
  (
    flock -w 300 9
    if [[ ! -f "$dir/config.json" || "$BIN" -nt "$dir/config.json" ]]; then
      rm -rf "$dir.tmp"
      "$BIN" make-tiny-model "$dir.tmp" >"$WORK/make-tiny-model.log" 2>&1 || {
        cat "$WORK/make-tiny-model.log"
        exit 1
      }
      rm -rf "$dir"
      mv "$dir.tmp" "$dir"
    fi
  ) 9>"$BUILD/e2e-tiny-model.lock"
  echo "$dir"
}

# start_server NAME [serve flags...]: sets URL and SERVER_PID. Port 0: the server picks a free
# port and prints it; waits (bounded) for /health 200.
start_server() {
  local name=$1
  shift
  local log="$WORK/server-$name.log"
  # The log exists before the first read: the child opens it only once forked, and a sed on a
  # missing file would end the script here (set -e, pipefail).
  : >"$log"
  "$BIN" serve --model "$MODEL" --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  URL=""
  local i
  for i in $(seq 1 600); do
    URL=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$log" | head -n 1)
    [[ -n "$URL" ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$URL" ]]; then
    echo "server $name did not start:"
    cat "$log"
    return 1
  fi
  for i in $(seq 1 1200); do
    if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/health") == 200 ]]; then
      return 0
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server $name never became healthy:"
  cat "$log"
  return 1
}

# streamed_completion_text BODY: BODY (a /v1/completions JSON object) sent with "stream": true;
# prints the text of its chunks joined, as a client would show it.
streamed_completion_text() {
  curl -sN --max-time 120 -H 'Content-Type: application/json' \
    -d "${1%\}},\"stream\":true}" "$URL/v1/completions" |
    /usr/bin/python3 -c '
import json, sys
out = []
for line in sys.stdin:
    line = line.strip()
    if line.startswith("data: ") and line != "data: [DONE]":
        out.append(json.loads(line[6:])["choices"][0]["text"])
print("".join(out), end="")'
}

# wait_until TIMEOUT_S COMMAND...: runs COMMAND every 0.1 s until it succeeds or TIMEOUT_S
# seconds pass (wall time, however loaded the machine); returns 1 on timeout. Tests wait for the
# event they need (a log line, a metric, a health state) with it instead of sleeping for a guess;
# the check that follows says what was wanted.
wait_until() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.1
  done
}

# health_is CODE [URL]: /health (of URL, default $URL) answers CODE.
health_is() {
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${2:-$URL}/health")" == "$1" ]]
}

# stop_server PID SIGNAL TIMEOUT_S: sends the signal, waits (bounded); sets STOP_RC to the exit
# status, or "timeout" (the process is then killed). Not in $(...): only this shell can wait.
stop_server() {
  local pid=$1 sig=$2 timeout=$3 i
  kill -"$sig" "$pid" 2>/dev/null || true
  STOP_RC=timeout
  for i in $(seq 1 $((timeout * 10))); do
    if ! kill -0 "$pid" 2>/dev/null; then
      STOP_RC=0
      wait "$pid" || STOP_RC=$?
      return 0
    fi
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# metric NAME: the value of one Prometheus sample (name including labels) from /metrics.
metric() {
  # awk reads all of curl's output (no early exit): an early exit makes curl fail with a write
  # error, which pipefail + set -e would turn into a silent test death.
  curl -s --max-time 5 "$URL/metrics" | awk -v n="$1" '$1 == n && !found { print $2; found = 1 }'
}

# engine_counts_are RUNNING WAITING: one /metrics scrape shows that many requests running and
# waiting. One scrape, not a metric call each: between two reads a waiting request can move to
# running, and two reads of 0 would then describe an engine that was never idle.
engine_counts_are() {
  curl -s --max-time 5 "$URL/metrics" | awk -v r="$1" -v w="$2" '
    $1 == "pagedserve_num_requests_running" { run = $2 }
    $1 == "pagedserve_num_requests_waiting" { wait = $2 }
    END { exit !(run == r && wait == w) }'
}

# Node scripts need tests/js/node_modules (the test setup runs `npm ci --prefix tests/js`).
need_node_modules() {
  if [[ ! -d "$ROOT/tests/js/node_modules/openai" ]]; then
    fail "tests/js/node_modules/openai is missing: run 'npm ci --prefix tests/js'"
    finish
  fi
}

# schema_valid NAME SCHEMA FILE [--sse]: a check that FILE (a JSON body, or with --sse an event
# stream) validates against SCHEMA of OpenAI's published OpenAPI document (tests/api_schemas/),
# with Debian's python3-jsonschema; the validator's report is shown when it does not.
schema_valid() {
  local name=$1 schema=$2 file=$3
  shift 3
  if /usr/bin/python3 "$ROOT/tests/tools/validate_openai_schema.py" "$schema" "$file" "$@" \
    >"$WORK/$name.validate" 2>&1; then
    pass "$name: valid $schema"
  else
    sed 's/^/    /' "$WORK/$name.validate"
    fail "$name: valid $schema"
  fi
}

# tool_dialogue: {"user": ..., "tools": [...]} of the first English get_weather dialogue in the
# shipped model's training data (data/tiny_chat), which the model answers with that call.
tool_dialogue() {
  /usr/bin/python3 - "$ROOT/data/tiny_chat/train.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    row = json.loads(line)
    if row.get("kind") != "tool_answer":
        continue
    user, call = row["messages"][:2]
    if call["tool_calls"][0]["function"]["name"] == "get_weather" and user["content"].isascii():
        print(json.dumps({"user": user["content"], "tools": row["tools"]}))
        break
PYEOF
}

MODEL=$(tiny_model)

# lora_adapters DIR: writes the PyTorch-made LoRA adapters of tests/lora/make_lora_adapters.py for
# $MODEL's shape into DIR (with /usr/bin/python3, which sees python3-torch). Returns 1, with the
# script's output shown, when it fails.
lora_adapters() {
  local py=/usr/bin/python3 dims
  dims=$("$py" -c "
import json, sys
c = json.load(open(sys.argv[1]))
hd = c.get('head_dim') or c['hidden_size'] // c['num_attention_heads']
print(c['hidden_size'], c['num_attention_heads'] * hd, c['num_key_value_heads'] * hd,
      c['intermediate_size'], c['num_hidden_layers'], c['vocab_size'])" "$MODEL/config.json")
  # shellcheck disable=SC2086  # the dimensions are separate arguments
  "$py" "$ROOT/tests/lora/make_lora_adapters.py" "$1" $dims >"$WORK/fx.log" 2>&1 || {
    cat "$WORK/fx.log"
    return 1
  }
}
