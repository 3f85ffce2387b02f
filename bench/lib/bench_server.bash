# Shared by the bench scripts that measure over HTTP: a random model of the ANCHORS.md shape
# when none is given, and a `pagedserve serve` on a free loopback port, stopped at exit.
# Source after `cd` to the repository root; sets BIN, WORK, MODEL; start_bench_server sets URL.
BIN=${PAGEDSERVE:-build/app/pagedserve}
WORK=$(mktemp -d)
SERVER=""
cleanup() {
  [[ -n "$SERVER" ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# bench_model [DIR]: MODEL=DIR, or a fresh random default-shape model in $WORK.
bench_model() {
  MODEL=${1:-}
  if [[ -z "$MODEL" ]]; then
    MODEL="$WORK/model"
    "$BIN" make-tiny-model "$MODEL" >/dev/null
  fi
}

# start_bench_server [serve flags...]: serves $MODEL; returns once /health answers 200.
start_bench_server() {
  : >"$WORK/server.log"  # exists before the first read (set -e, pipefail)
  "$BIN" serve --model "$MODEL" --host 127.0.0.1 --port 0 "$@" >"$WORK/server.log" 2>&1 &
  SERVER=$!
  URL=""
  for _ in $(seq 1 600); do
    URL=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$WORK/server.log" | head -n 1)
    [[ -n "$URL" ]] && break
    sleep 0.1
  done
  [[ -n "$URL" ]] || { cat "$WORK/server.log"; exit 1; }
  until curl -sf "$URL/health" >/dev/null; do sleep 0.1; done
}
