#!/usr/bin/env bash
# Shows that tests/tools/check_layout.sh can fail: on a scratch copy of this tree's sources it
# first passes, then each rule is broken in its own copy (one bad #include, or one long file)
# and the checker must exit 1 naming that rule. A rule that cannot fail protects nothing.
#
#   bash tests/tools/check_layout_selftest.sh [SOURCE_DIR (default: this checkout)]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
CHECK="$ROOT/tests/tools/check_layout.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The source folders only (no build dirs, models or node_modules): what the checker reads.
mkdir -p "$WORK/clean"
(cd "$ROOT" && find . \( -path './build*' -o -path ./.git -o -name node_modules -o -path ./models \
  -o -path ./data -o -path ./Testing \) -prune -o -type f \( -name '*.h' -o -name '*.cpp' -o \
  -name '*.cu' -o -name '*.cuh' \) -print0 | tar --null -T - -cf -) | tar -xf - -C "$WORK/clean"

failures=0
pass=0
if ! out=$(bash "$CHECK" "$WORK/clean" 2>&1); then
  echo "FAIL: the unmodified tree does not pass:"
  echo "$out"
  exit 1
fi

# breaks NAME FILE LINE EXPECT: appends LINE to FILE in a fresh copy; the checker must fail with
# a message containing EXPECT.
breaks() {
  local name=$1 file=$2 line=$3 expect=$4 dir="$WORK/$1" out rc=0
  # Hard links: cheap copies; the one file changed is replaced, never written through a link.
  cp -al "$WORK/clean" "$dir"
  mkdir -p "$(dirname "$dir/$file")"
  if [[ -f "$dir/$file" ]]; then
    cp "$dir/$file" "$dir/$file.new"
    mv "$dir/$file.new" "$dir/$file"
  fi
  printf '%s\n' "$line" >>"$dir/$file"
  out=$(bash "$CHECK" "$dir" 2>&1) || rc=$?
  if ((rc == 0)); then
    echo "FAIL $name: the checker passed a tree with '$line' in $file"
    failures=$((failures + 1))
  elif ! grep -qF "$expect" <<<"$out"; then
    echo "FAIL $name: the checker failed, but without '$expect':"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(grep -F "$expect" <<<"$out" | head -1)"
    pass=$((pass + 1))
  fi
  rm -rf "$dir"
}

breaks model_up model/tensor.cpp '#include "cpu/model_runner.h"' "model/ includes a layer above it"
breaks model_scheduler model/tensor.cpp '#include "scheduler/scheduler.h"' \
  "model/ includes a layer above it"
breaks kernels_up kernels/kernel_isa.cpp '#include "checkpoint/loader.h"' \
  "kernels/ includes a layer above it"
breaks checkpoint_up checkpoint/loader.cpp '#include "cpu/projection.h"' \
  "checkpoint/ includes a layer above it"
breaks cpu_up cpu/projection.cpp '#include "executor/executor_factory.h"' \
  "cpu/ includes a layer above it"
breaks cuda_cpu cuda/plan_upload.cpp '#include "cpu/model_runner.h"' "cuda/ includes a layer above it"
breaks executor_up executor/device_select.cpp '#include "engine/engine.h"' \
  "executor/ includes a layer above it"
breaks api_model api/lora_admin.cpp '#include "cpu/model_runner.h"' "api/ includes the model stack"
breaks http_model http/sse.cpp '#include "cpu/model_runner.h"' "api/ includes the model stack"
breaks openai_model openai/json_fields.cpp '#include "model/model_config.h"' "api/ includes the model stack"
breaks http_up http/sse.cpp '#include "openai/api_error.h"' "http/ includes a layer above it"
breaks openai_http openai/json_fields.cpp '#include "http/sse.h"' "openai/ includes HTTP or the server"
breaks anthropic_engine anthropic/messages_request.cpp '#include "engine/engine.h"' \
  "anthropic/ includes HTTP, the engine or the server"
breaks responses_http responses/response_store.cpp '#include "http/sse.h"' \
  "responses/ includes HTTP, the engine or the server"
breaks metrics_up metrics/metrics_text.cpp '#include "api/http_server.h"' \
  "metrics/ includes a layer above it"
breaks api_other api/lora_admin.cpp '#include "kvcache/block_manager.h"' \
  "api/ includes a folder outside the HTTP side"
breaks torch_header cpu/projection.cpp '#include <ATen/ATen.h>' \
  "a serve-path folder includes libtorch"
breaks torch_header_app app/serve_command.cpp '#include <torch/torch.h>' \
  "a serve-path folder includes libtorch"
breaks torch_folder engine/engine.cpp '#include "reference/naive_forward.h"' \
  "a serve-path folder includes a libtorch folder"
breaks tokenizer_model tokenizer/tokenizer.cpp '#include "model/model_config.h"' \
  "tokenizer/ or chat/ includes model code"
breaks tokenizer_chat tokenizer/tokenizer.cpp '#include "chat/chat_template.h"' \
  "tokenizer/ includes chat/"
breaks structured_other structured/gbnf_parser.cpp '#include "tokenizer/tokenizer.h"' \
  "structured/ includes another folder"
breaks long_file kernels/too_long.cpp "$(printf '// line\n%.0s' $(seq 1 401))" \
  "a source file passes 400 lines"

echo "$pass passed, $failures failed"
((failures == 0))
