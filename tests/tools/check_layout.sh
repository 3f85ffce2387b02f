#!/usr/bin/env bash
# The folder rules of DESIGN.md §2 that an include line can break, checked on the source tree:
#   - api/ includes nothing of model/ (it reaches the model only through engine/'s public API;
#     the tokenizer and chat templates are tokenizer/ and chat/);
#   - model/ includes nothing of scheduler/ but step_plan.h (the data-only contract), and nothing
#     of convert/, chat/, engine/ or api/;
#   - tokenizer/ and chat/ include no torch header and nothing of model/, convert/, engine/, api/;
#     tokenizer/ includes nothing of chat/ (chat/ depends on tokenizer/, not the reverse);
#   - kvcache/, scheduler/, sampling/ and api/ include no torch header, nor does model/cuda/
#     (the CUDA executor has no torch on its path, issue #19);
#   - structured/ (grammars, token masks) includes no torch header and no other folder: it takes
#     the vocabulary as token byte strings, so it is tokenizer-free too.
# Prints every offending line (file:line: include) and exits 1 if there is any.
#
#   bash tests/tools/check_layout.sh [SOURCE_DIR (default: this checkout)]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
status=0

# forbid FOLDERS PATTERN WHY [ALLOWED]: fails on any #include in FOLDERS (space-separated) that
# matches the extended regex PATTERN, except lines that match ALLOWED.
forbid() {
  local folders=$1 pattern=$2 why=$3 allowed=${4:-}
  local hits
  # shellcheck disable=SC2086
  hits=$(grep -rnE --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' \
    "^[[:space:]]*#[[:space:]]*include[[:space:]]*$pattern" $folders 2>/dev/null || true)
  if [[ -n "$allowed" && -n "$hits" ]]; then
    hits=$(grep -vE "$allowed" <<<"$hits" || true)
  fi
  if [[ -n "$hits" ]]; then
    echo "layout: $why:"
    sed 's/^/  /' <<<"$hits"
    status=1
  fi
}

torch='<(ATen|torch|c10)/'
forbid "api" '"model/' "api/ includes model/ (use engine/, tokenizer/ or chat/)"
forbid "model" '"scheduler/' "model/ includes scheduler/ beyond step_plan.h" \
  '"scheduler/step_plan\.h"'
forbid "model" '"(convert|chat|engine|api)/' "model/ includes a folder that depends on it"
forbid "tokenizer chat" "$torch" "tokenizer/ or chat/ includes torch (they are torch-free)"
forbid "tokenizer chat" '"(model|convert|engine|api)/' "tokenizer/ or chat/ includes model code"
forbid "tokenizer" '"chat/' "tokenizer/ includes chat/ (chat/ depends on tokenizer/)"
forbid "kvcache scheduler sampling api structured" "$torch" "a plain C++ folder includes torch"
forbid "model/cuda" "$torch" "model/cuda/ (the device path) includes torch"
forbid "structured" '"(model|convert|engine|api|tokenizer|scheduler|sampling|chat|kvcache)/' \
  "structured/ includes another folder (it is tokenizer- and engine-free)"

if ((status == 0)); then
  echo "layout: ok (every rule above holds)"
fi
exit $status
