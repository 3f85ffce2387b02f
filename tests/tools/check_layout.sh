#!/usr/bin/env bash
# The folder rules of docs/architecture.md that the source tree can break, checked on it:
#   1. the model stack is layered, each folder including only the ones below it:
#        model/      -> model/ and scheduler/step_plan.h (the data-only step contract)
#        kernels/    -> model/
#        checkpoint/ -> model/, kernels/, tokenizer/ (the tiny-model writer trains a tokenizer)
#        cpu/        -> model/, kernels/, checkpoint/, scheduler/step_plan.h
#        cuda/       -> model/, scheduler/step_plan.h
#        executor/   -> model/, cpu/, cuda/
#   2. the HTTP side never sees the model stack (it reaches the model only through engine/'s
#      public API), and is layered too:
#        http/    -> http/, web/ (the transport knows no route and no schema)
#        openai/  -> openai/, engine/, chat/, sampling/, structured/, tokenizer/ (no HTTP)
#        anthropic/ -> anthropic/, openai/, chat/ (Messages translated to and from the OpenAI
#                    form; no HTTP, no engine)
#        responses/ -> responses/, openai/, chat/ (Responses likewise, and the store of
#                    responses; no HTTP, no engine)
#        metrics/ -> metrics/, http/, engine/
#        api/     -> api/, http/, openai/, anthropic/, responses/, metrics/, engine/, chat/, sampling/,
#                    structured/, tokenizer/ (the routes, joining them);
#   3. the serve path is torch-free: no torch header (<ATen/...>, <torch/...>, <c10/...>) and no
#      libtorch folder (torch_bridge/, reference/, pth_export/, train/) in any folder `pagedserve`
#      is built from; app/'s pagedserve-train sources (app/CMakeLists.txt) are the exception;
#   4. tokenizer/ and chat/ include no model code; tokenizer/ includes nothing of chat/;
#   5. structured/ (grammars, token masks) includes no other folder: it takes the vocabulary as
#      token byte strings, so it is tokenizer- and engine-free;
#   6. no source file (outside tests/ and fuzz/) passes 400 lines: one concept per file.
# Prints every offending line (file:line: include) and exits 1 if there is any.
# tests/tools/check_layout_selftest.sh shows each rule failing on a scratch copy of the tree.
#
#   bash tests/tools/check_layout.sh [SOURCE_DIR (default: this checkout)]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
status=0
MAX_LINES=400

# includes FOLDERS: every project #include line ("folder/...") in FOLDERS, as file:line: text.
includes() {
  # shellcheck disable=SC2086
  grep -rnE --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' $1 2>/dev/null || true
}

report() {  # report WHY HITS
  if [[ -n "$2" ]]; then
    echo "layout: $1:"
    sed 's/^/  /' <<<"$2"
    status=1
  fi
}

# only FOLDER ALLOWED_REGEX WHY: FOLDER's project includes must match ALLOWED_REGEX.
only() {
  local folder=$1 allowed=$2 why=$3 hits
  [[ -d "$folder" ]] || return 0
  hits=$(includes "$folder" | grep -E '#[[:space:]]*include[[:space:]]*"[a-z_]+/' |
    grep -vE "#[[:space:]]*include[[:space:]]*\"($allowed)" || true)
  report "$why" "$hits"
}

# forbid FOLDERS PATTERN WHY [ALLOWED]: fails on any #include in FOLDERS matching PATTERN, except
# lines that match ALLOWED.
forbid() {
  local folders=$1 pattern=$2 why=$3 allowed=${4:-} hits
  hits=$(includes "$folders" | grep -E "#[[:space:]]*include[[:space:]]*$pattern" || true)
  if [[ -n "$allowed" && -n "$hits" ]]; then
    hits=$(grep -vE "$allowed" <<<"$hits" || true)
  fi
  report "$why" "$hits"
}

# 1. The model stack, bottom to top.
only model 'model/|scheduler/step_plan\.h' "model/ includes a layer above it (model/ only, and scheduler/step_plan.h)"
only kernels 'kernels/|model/' "kernels/ includes a layer above it (model/ only)"
only checkpoint 'checkpoint/|kernels/|model/|tokenizer/' \
  "checkpoint/ includes a layer above it (model/, kernels/, tokenizer/ only)"
only cpu 'cpu/|checkpoint/|kernels/|model/|scheduler/step_plan\.h' \
  "cpu/ includes a layer above it (model/, kernels/, checkpoint/ only)"
only cuda 'cuda/|model/|scheduler/step_plan\.h' "cuda/ includes a layer above it (model/ only)"
only executor 'executor/|cpu/|cuda/|model/' "executor/ includes a layer above it (model/, cpu/, cuda/ only)"

# 2. The HTTP side sees the engine, not the model.
forbid "api http openai anthropic responses metrics" '"(model|kernels|checkpoint|cpu|cuda|executor|convert)/' \
  "api/ includes the model stack (use engine/, tokenizer/ or chat/)"
only http 'http/|web/' "http/ includes a layer above it (the transport: http/ and web/ only)"
only openai 'openai/|engine/|chat/|sampling/|structured/|tokenizer/' \
  "openai/ includes HTTP or the server (schemas only: engine/, chat/, sampling/, structured/, tokenizer/)"
only anthropic 'anthropic/|openai/|chat/' \
  "anthropic/ includes HTTP, the engine or the server (translations only: openai/, chat/)"
only responses 'responses/|openai/|chat/' \
  "responses/ includes HTTP, the engine or the server (translations only: openai/, chat/)"
only metrics 'metrics/|http/|engine/' "metrics/ includes a layer above it (http/ and engine/ only)"
only api 'api/|http/|openai/|anthropic/|responses/|metrics/|engine/|chat/|sampling/|structured/|tokenizer/' \
  "api/ includes a folder outside the HTTP side and the engine's public API"

# 3. No libtorch on the serve path. app/'s pagedserve-train sources may; generate_command.cpp
# includes the oracle only under PAGEDSERVE_WITH_REFERENCE, which only pagedserve-train defines.
serve_folders="kvcache scheduler tokenizer chat structured sampling model kernels checkpoint cpu cuda executor engine http openai anthropic responses metrics api convert app web"
serve_files=$(for f in $serve_folders; do [[ -d $f ]] && echo "$f"; done)
bench_lib=$(ls bench/*.cpp bench/*.h 2>/dev/null || true)
train_only='^app/(train_main|train_tiny_command|eval_command|export_command)\.cpp:'
forbid "$serve_files $bench_lib" '<(ATen|torch|c10|caffe2)/' \
  "a serve-path folder includes libtorch (the pagedserve binary links none)" "$train_only"
forbid "$serve_files $bench_lib" '"(torch_bridge|reference|pth_export|train)/' \
  "a serve-path folder includes a libtorch folder" \
  "$train_only|^app/generate_command\\.cpp:[0-9]+:#include \"reference/naive_generate\\.h\""

# 4. Tokenizer and chat.
forbid "tokenizer chat" '"(model|kernels|checkpoint|cpu|cuda|executor|convert|engine|api)/' \
  "tokenizer/ or chat/ includes model code"
forbid "tokenizer" '"chat/' "tokenizer/ includes chat/ (chat/ depends on tokenizer/)"

# 5. structured/ stands alone.
only structured 'structured/' "structured/ includes another folder (it is tokenizer- and engine-free)"

# 6. File length.
long=$(find . \( -path './build*' -o -path ./tests -o -path ./fuzz -o -path ./.git -o \
  -name node_modules \) -prune -o -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o \
  -name '*.cuh' \) -print0 | xargs -0 -r wc -l |
  awk -v max="$MAX_LINES" '$2 != "total" && $1 > max { sub(/^\.\//, "", $2); print $2 ": " $1 " lines" }' |
  sort)
report "a source file passes $MAX_LINES lines (split it by concept)" "$long"

if ((status == 0)); then
  echo "layout: ok (every rule above holds)"
fi
exit $status
