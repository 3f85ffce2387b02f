#!/usr/bin/env bash
# A Qwen3-MoE-shaped model against a dense model with the same active parameters (issue #17),
# measured in one run with `pagedserve bench offline` on the same seeded workload:
#   MoE:   qwen3_moe, hidden 512, 8 layers, 8/2 heads x 64, vocab 6400; every layer sparse with
#          8 experts of width 704, top 2 (renormalised): 2 x 704 = 1408 active MLP width.
#   dense: qwen3, the same shape with intermediate_size 1408 (the router's 8 x 512 weights per
#          layer are the only active parameters the dense model lacks, ~0.1%).
# Prints continuous-batching output tok/s and mean step time (seconds / steps), single-request
# TPOT (batch-1 decode step), and the MoE / dense ratios. Order: dense, MoE, dense again; the
# ratio uses the mean of the two dense runs, so drift during the run moves both sides.
#
#   bash bench/moe_vs_dense.sh
#
# BENCH_PROMPTS (32), BENCH_INPUT_LEN (64), BENCH_OUTPUT_LEN (32) size the workload;
# BENCH_ENGINE_FLAGS (e.g. "--kernel-isa avx2") go to every run. Needs build/app/pagedserve (or
# PAGEDSERVE=path) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PAGEDSERVE:-build/app/pagedserve}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SHAPE=(--hidden-size 512 --num-layers 8 --num-heads 8 --num-kv-heads 2 --head-dim 64 --vocab-size 6400)
"$BIN" make-tiny-model "$WORK/dense" --model-type qwen3 --intermediate-size 1408 "${SHAPE[@]}" >/dev/null
"$BIN" make-tiny-model "$WORK/moe" --model-type qwen3_moe --num-experts 8 --num-experts-per-tok 2 \
  --moe-intermediate-size 704 "${SHAPE[@]}" >/dev/null
WORKLOAD=(--num-prompts "${BENCH_PROMPTS:-32}" --input-len "${BENCH_INPUT_LEN:-64}"
  --output-len "${BENCH_OUTPUT_LEN:-32}" --no-probe)
for run in dense1:dense moe:moe dense2:dense; do
  name=${run%%:*}
  # shellcheck disable=SC2086
  "$BIN" bench offline --model "$WORK/${run##*:}" "${WORKLOAD[@]}" --json "$WORK/$name.json" \
    ${BENCH_ENGINE_FLAGS:-} >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; exit 1; }
  grep -m1 "^kernels:" "$WORK/$name.log" | cut -c1-160
done
grep -m1 "model name" /proc/cpuinfo | sed 's/^.*: /cpu: /'
python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
r = {n: json.load(open(f"{w}/{n}.json")) for n in ("dense1", "moe", "dense2")}
def stats(j):
    c, s = j["continuous"], j["single"]
    return {"tok_s": c["output_tokens"] / c["seconds"], "step_ms": 1e3 * c["seconds"] / c["steps"],
            "tpot_ms": s["mean_tpot_ms"], "single_tok_s": s["output_tokens"] / s["seconds"]}
d1, m, d2 = (stats(r[n]) for n in ("dense1", "moe", "dense2"))
dense = {k: (d1[k] + d2[k]) / 2 for k in d1}
print(f"{'model':8} {'cont out tok/s':>15} {'cont step ms':>13} {'single TPOT ms':>15} {'single tok/s':>13}")
for name, s in (("dense", dense), ("moe", m)):
    print(f"{name:8} {s['tok_s']:15.1f} {s['step_ms']:13.2f} {s['tpot_ms']:15.2f} {s['single_tok_s']:13.1f}")
print(f"MoE / dense: continuous tok/s {m['tok_s'] / dense['tok_s']:.2f}x, step time "
      f"{m['step_ms'] / dense['step_ms']:.2f}x, single TPOT {m['tpot_ms'] / dense['tpot_ms']:.2f}x "
      f"(dense runs before/after: {d1['tok_s']:.1f} / {d2['tok_s']:.1f} tok/s)")
EOF
