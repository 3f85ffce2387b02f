#!/usr/bin/env bash
# What --scheduling-policy priority buys (issue #39): the time to first token of short
# priority-0 requests on an idle server, and on a server whose every seat (--max-num-seqs) and
# queue is taken by long priority-10 requests; the same loaded run under fcfs for contrast.
# Prints p50 / p99 per case and the loaded/idle p50 ratio, measured in this one run.
#
#   bash bench/priority_ttft.sh [MODEL (models/tiny)]
# Environment: SEATS (4) LONG (8 requests) TOKENS (400 each) SHORT (16 probes) BASE_PORT (18200)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/models/tiny}
bin=$root/build/app/pagedserve
seats=${SEATS:-4}
long=${LONG:-8}
tokens=${TOKENS:-400}  # each long request's max_tokens (models/tiny's context is 512)
short=${SHORT:-16}
port=${BASE_PORT:-18200}
work=$(mktemp -d)
server=""
bg=()
cleanup() {
  for p in "${bg[@]}" $server; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start() {  # start POLICY
  "$bin" serve --model "$model" --host 127.0.0.1 --port "$port" --max-num-seqs "$seats" \
    --scheduling-policy "$1" >"$work/server-$1.log" 2>&1 &
  server=$!
  for _ in $(seq 1 1200); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/health")" == 200 ]] && return 0
    sleep 0.1
  done
  echo "priority_ttft: the server did not start" >&2
  exit 1
}
stop() { kill -TERM "$server"; wait "$server" 2>/dev/null || true; server=""; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
probe() {  # probe PRIORITY_FIELD: SHORT streamed requests one after another -> JSON of TTFTs
  python3 - "http://127.0.0.1:$port" "$short" "$1" <<'PY'
import http.client, json, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1]); n = int(sys.argv[2]); extra = sys.argv[3]
ttfts = []
for i in range(n):
    body = json.loads('{"prompt": "Question %d: what is the answer?", "max_tokens": 4, "stream": true, "logprobs": 0%s}' % (i, extra))
    t0 = time.monotonic()
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    first = None
    for line in r:
        # The first chunk carrying a token (logprobs: one per token even where its text is empty).
        if first is None and line.startswith(b"data: {") and json.loads(line[6:])["choices"][0].get("logprobs"):
            first = time.monotonic() - t0
    c.close()
    ttfts.append(first)
ttfts.sort()
print(json.dumps({"p50": ttfts[len(ttfts) // 2], "p99": ttfts[min(len(ttfts) - 1, int(0.99 * len(ttfts)))]}))
PY
}
load() {  # load PRIORITY_FIELD: LONG long requests in the background, until seats and queue fill
  for i in $(seq 1 "$long"); do
    curl -s -o /dev/null --max-time 900 -H 'Content-Type: application/json' \
      -d "{\"prompt\":\"Story $i:\",\"max_tokens\":$tokens,\"ignore_eos\":true$1}" \
      "http://127.0.0.1:$port/v1/completions" &
    bg+=($!)
  done
  for _ in $(seq 1 600); do
    [[ "$(metric pagedserve_num_requests_running)" == "$seats" ]] && return 0
    sleep 0.1
  done
  echo "priority_ttft: the long requests never filled the $seats seats" >&2
  exit 1
}
unload() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  bg=()
}
row() { python3 -c "
import json, sys
r = json.loads(sys.argv[2]); base = json.loads(sys.argv[3])
print(f'| {sys.argv[1]:<34} | {r[\"p50\"] * 1000:7.0f} ms | {r[\"p99\"] * 1000:7.0f} ms | {r[\"p50\"] / base[\"p50\"]:5.2f}x |')
" "$@"; }

echo "priority_ttft: $model, --max-num-seqs $seats, $long long requests ($tokens tokens) against $short probes"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "| case                               | TTFT p50   | TTFT p99   | p50 vs idle |"
echo "|------------------------------------|------------|------------|-------------|"
start priority
idle=$(probe ',"priority":0')
row "idle, priority 0" "$idle" "$idle"
load ',"priority":10'
busy=$(probe ',"priority":0')
low_waiting=$(metric pagedserve_num_requests_waiting)
row "busy, priority 0 vs priority-10 load" "$busy" "$idle"
unload
stop
start fcfs
load ''
fcfs=$(probe '')
row "busy, fcfs (no priorities)" "$fcfs" "$idle"
unload
stop
echo "priority-10 requests still waiting after the priority-0 probes: $low_waiting"
