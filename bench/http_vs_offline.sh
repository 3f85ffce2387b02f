#!/usr/bin/env bash
# What the HTTP layer costs (issue #9's goal: bench serve at 64 clients >= 90% of bench offline
# on the same workload), measured in one run: offline, then the same seeded workload over
# loopback HTTP against `pagedserve serve` with the same engine settings, then offline again.
# The ratio is serve / mean(offline before, offline after), so a machine that speeds up or slows
# down during the run moves both sides.
#
#   bash bench/http_vs_offline.sh [MODEL_DIR] [ROUNDS]
#
# MODEL_DIR defaults to a random default-shape model made in a temp dir (the docs/anchors.md shape).
# ROUNDS (1) repeats the serve/offline pair and prints every ratio. Needs a built
# build/app/pagedserve (or PAGEDSERVE=path) and python3 for the JSON. BENCH_PROMPTS (64),
# BENCH_OUTPUT_LEN (128) shrink the workload (the CI smoke test in tests/e2e/bench_serve.sh);
# the concurrency is the number of prompts, all sent at once. BENCH_ENGINE_FLAGS (e.g.
# "--kernel-isa avx2") go to both the offline engine and the server, so an ISA path can be
# measured over HTTP too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${2:-1}
source bench/lib/bench_server.bash
bench_model "${1:-}"
PROMPTS=${BENCH_PROMPTS:-64}
WORKLOAD=(--num-prompts "$PROMPTS" --input-len 64 --output-len "${BENCH_OUTPUT_LEN:-128}" --seed 0)
read -r -a ENGINE_FLAGS <<<"${BENCH_ENGINE_FLAGS:-}"

offline() {  # offline OUT.json
  "$BIN" bench offline --model "$MODEL" "${WORKLOAD[@]}" --max-num-seqs "$PROMPTS" --skip-single \
    ${ENGINE_FLAGS[@]+"${ENGINE_FLAGS[@]}"} \
    --json "$1" >/dev/null
}

start_bench_server --max-num-seqs "$PROMPTS" ${ENGINE_FLAGS[@]+"${ENGINE_FLAGS[@]}"}
# One unmeasured round at full concurrency (short outputs): the server's first steps and its
# first connections pay one-time costs (page faults, thread stacks) that are not the HTTP
# layer's steady cost. Offline pays its own warm-up inside each run (a fresh engine per run),
# which only lowers the offline side, so this does not flatter the ratio.
"$BIN" bench serve --url "$URL" --num-prompts "$PROMPTS" --input-len 64 --output-len 16 \
  --concurrency "$PROMPTS" --no-progress >/dev/null

offline "$WORK/offline-0.json"
for r in $(seq 1 "$ROUNDS"); do
  "$BIN" bench serve --url "$URL" "${WORKLOAD[@]}" --concurrency "$PROMPTS" --no-progress \
    --json "$WORK/serve-$r.json" >/dev/null
  offline "$WORK/offline-$r.json"
  python3 - "$WORK" "$r" <<'EOF'
import json, sys
work, r = sys.argv[1], int(sys.argv[2])
before = json.load(open(f"{work}/offline-{r - 1}.json"))["continuous"]["output_tok_s"]
after = json.load(open(f"{work}/offline-{r}.json"))["continuous"]["output_tok_s"]
level = json.load(open(f"{work}/serve-{r}.json"))["levels"][0]
serve = level["output_token_throughput"]
print(f"round {r}: offline {before:.1f} / {after:.1f} output tok/s, serve "
      f"({level['concurrency']} clients) {serve:.1f} output tok/s, "
      f"{level['requests_failed']} failed: "
      f"serve / offline = {serve / ((before + after) / 2):.3f}")
with open(f"{work}/ratios", "a") as f:
    f.write(f"{serve / ((before + after) / 2)}\n")
EOF
done
if ((ROUNDS > 1)); then
  python3 - "$WORK/ratios" <<'EOF'
import statistics, sys
r = [float(x) for x in open(sys.argv[1])]
print(f"median serve / offline over {len(r)} rounds = {statistics.median(r):.3f} "
      f"(min {min(r):.3f}, max {max(r):.3f})")
EOF
fi
