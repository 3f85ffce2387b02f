#!/usr/bin/env bash
# What each narrower path costs in results (issue #38): `bench accuracy` against the fp32
# reference (fp32 weights and cache, our packed kernel) on two models:
#   - the shipped tiny model's trained weights, prompts of real text (the held-out questions of
#     data/tiny_chat in its chat template), and
#   - a Qwen3-0.6B-shaped checkpoint with random bf16 weights (bench/real_size.sh writes the
#     same one), random-token prompts.
# Random weights exaggerate some errors (no outlier channels to protect, flat logits that make
# argmax ties likely) and hide others; the trained model is the other half of the picture.
# 64 prompts x 128 greedy tokens each, the candidate fed the reference's tokens.
#
#   bash bench/accuracy.sh [OUT_DIR]      # ~15 min here; CANDIDATES / SHAPES pick subsets
#
# Prints the CPU and flags first, then per model and candidate the max and mean |dlogit|, top-1
# agreement and identical continuations. Needs a built build/app/pagedserve.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PAGEDSERVE:-build/app/pagedserve}
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
export PAGEDSERVE_TUNING_CACHE="$OUT/linear-tuning.json"

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "threads: $(nproc); $(date -u)"

# The held-out questions rendered with the tiny model's chat template, as the server renders a
# chat request (python3-jinja2: Debian's interpreter).
/usr/bin/python3 - models/tiny/tokenizer_config.json data/tiny_chat/heldout.jsonl \
  "$OUT/heldout-prompts.jsonl" <<'PY'
import json, sys
import jinja2
template = jinja2.Environment().from_string(json.load(open(sys.argv[1]))["chat_template"])
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[2], encoding="utf-8"):
        row = json.loads(line)
        if "question" not in row:  # the tool dialogues: their prompts need the tools rendered
            continue
        messages = [{"role": "user", "content": row["question"]}]
        text = template.render(messages=messages, add_generation_prompt=True)
        out.write(json.dumps({"prompt": text, "output_len": 128}, ensure_ascii=False) + "\n")
PY

model06="$OUT/qwen3-0.6b"
if [[ ! -f "$model06/config.json" ]]; then
  "$BIN" make-tiny-model "$model06" --dtype bf16 --hidden-size 1024 --num-layers 28 \
    --num-heads 16 --num-kv-heads 8 --head-dim 128 --intermediate-size 3072 \
    --vocab-size 151936 --max-position-embeddings 40960 >/dev/null
fi

candidates=${CANDIDATES:-"f16 int8 int8-g128 kv-bf16"}
# The bf16 and int8 dot products where this CPU has them.
if grep -qw avx512_bf16 /proc/cpuinfo && [[ -z "${CANDIDATES:-}" ]]; then
  candidates="$candidates bf16-compute"
fi
if grep -qw avx512_vnni /proc/cpuinfo && [[ -z "${CANDIDATES:-}" ]]; then
  candidates="$candidates w8a8"
fi
flags_of() {
  case "$1" in
    f16) echo "--dtype float16" ;;
    int8) echo "--quantization int8" ;;
    int8-g128) echo "--quantization int8 --quantization-group 128" ;;
    kv-bf16) echo "--kv-cache-dtype bfloat16" ;;
    bf16-compute) echo "--compute-dtype bfloat16" ;;
    w8a8) echo "--quantization int8 --compute-dtype int8" ;;
    *) echo "unknown candidate $1" >&2; exit 2 ;;
  esac
}

for shape in ${SHAPES:-tiny 0.6b}; do
  if [[ "$shape" == tiny ]]; then
    model=models/tiny
    data=(--dataset "$OUT/heldout-prompts.jsonl")
  else
    model=$model06
    data=(--input-len 32)
  fi
  for c in $candidates; do
    echo "== $shape, $c"
    # shellcheck disable=SC2046
    "$BIN" bench accuracy --model "$model" --num-prompts 64 --output-len 128 "${data[@]}" \
      $(flags_of "$c") --json "$OUT/$shape-$c.json" | grep -E '^(candidate|logits|greedy)'
  done
done
