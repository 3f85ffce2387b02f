#!/usr/bin/env bash
# Many clients on one server (issue #14's contention goals), measured in one sitting: one
# `pagedserve serve --max-num-seqs 256`, streamed to by `bench serve` at 64 and then 256
# concurrent clients (256 prompts x 64 in, 128 out each level), then 1000 concurrent clients
# with short outputs (1000 prompts, 16 out), which must all complete with no error.
# Prints output tok/s per level, the 256 / 64 ratio, and the failures.
#
#   bash bench/client_scaling.sh [MODEL_DIR]   # BENCH_ENGINE_FLAGS="--kernel-isa avx2" to force
#
# MODEL_DIR defaults to a random model of the docs/anchors.md shape made in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/bench_server.bash
bench_model "${1:-}"
read -r -a ENGINE_FLAGS <<<"${BENCH_ENGINE_FLAGS:-}"
start_bench_server --max-num-seqs 256 ${ENGINE_FLAGS[@]+"${ENGINE_FLAGS[@]}"}
grep -m1 '^kernels:' "$WORK/server.log" || true
# Unmeasured warm-up at full concurrency (first connections, page faults).
"$BIN" bench serve --url "$URL" --num-prompts 256 --input-len 64 --output-len 16 \
  --concurrency 256 --no-progress >/dev/null
"$BIN" bench serve --url "$URL" --num-prompts 256 --input-len 64 --output-len 128 --seed 0 \
  --concurrency 64,256 --no-progress --json "$WORK/levels.json" >/dev/null
"$BIN" bench serve --url "$URL" --num-prompts 1000 --input-len 32 --output-len 16 --seed 1 \
  --concurrency 1000 --no-progress --json "$WORK/thousand.json" >/dev/null
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
levels = json.load(open(f"{work}/levels.json"))["levels"]
by = {l["concurrency"]: l for l in levels}
for c, l in sorted(by.items()):
    print(f"{c:5d} clients: {l['output_token_throughput']:8.1f} output tok/s, "
          f"{l['requests_completed']} completed, {l['requests_failed']} failed")
print(f"256 / 64 clients output tok/s: {by[256]['output_token_throughput'] / by[64]['output_token_throughput']:.3f}")
t = json.load(open(f"{work}/thousand.json"))["levels"][0]
print(f" 1000 clients (16 out): {t['output_token_throughput']:8.1f} output tok/s, "
      f"{t['requests_completed']} completed, {t['requests_failed']} failed")
PY
