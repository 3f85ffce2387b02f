#!/usr/bin/env bash
# Renders every (real chat template x conversation) pair of tests/chat/ with pagedserve's Jinja
# engine, with Python's Jinja2 set up as transformers sets it up (the reference), and with
# @huggingface/jinja (npm, an independent implementation), and fails on any byte difference
# between ours and Jinja2, or where one raises and the other does not. @huggingface/jinja's own
# disagreements with Jinja2 are printed and counted as known reference differences.
#
#   bash tests/e2e/chat_template_corpus.sh <pagedserve-binary> <build-dir>
#
# (The binary is not used: CTest passes it to every e2e script.)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${2:?usage: chat_template_corpus.sh <pagedserve-binary> <build-dir>}"
tool="$build/tests/render_template"
python=/usr/bin/python3
check="$root/tests/js/chat_template_check.mjs"

if [[ ! -x "$tool" ]]; then
  echo "chat_template_corpus: $tool not found; build it with: cmake --build $build --target render_template" >&2
  exit 1
fi
if ! "$python" -c "import jinja2" 2>/dev/null; then
  echo "chat_template_corpus: $python cannot import jinja2; install python3-jinja2" >&2
  exit 1
fi
if ! command -v node >/dev/null; then
  echo "chat_template_corpus: node is not installed; it runs the reference @huggingface/jinja" >&2
  exit 1
fi
if [[ ! -d "$root/tests/js/node_modules/@huggingface/jinja" ]]; then
  npm ci --prefix "$root/tests/js" --no-audit --no-fund >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ours" "$work/jinja2" "$work/hf"

node "$check" prepare "$root/tests/chat/templates" "$root/tests/chat/conversations.json" "$work"
"$tool" --batch "$work/pairs.tsv" "$work/ours"
"$python" "$root/tests/tools/render_template_jinja2.py" --batch "$work/pairs.tsv" "$work/jinja2"
node "$check" render "$work/pairs.tsv" "$work/hf"
node "$check" compare "$work"
