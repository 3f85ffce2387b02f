#!/usr/bin/env bash
# Several LoRA adapters served by one server (issue #22), driven by the official openai npm
# client: `model` picks the adapter (streaming and not, chat and completions) and each answer
# equals a server of the base merged with that adapter by `pagedserve merge-lora`; /v1/models
# lists the adapters with their parent; unknown names are 404; runtime load/unload, and unload
# of an adapter a running stream uses. Adapters are written by PyTorch in PEFT layout.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules
PY=/usr/bin/python3
if ! "$PY" -c "import torch" 2>/dev/null; then
  fail "$PY cannot import torch (apt-get install python3-torch)"
  finish
fi

FX="$WORK/adapters"
if lora_adapters "$FX"; then
  pass "adapters written by PyTorch"
else
  fail "make_lora_adapters.py"
  finish
fi

for name in alpha beta; do
  if "$BIN" merge-lora --base "$MODEL" --adapter "$FX/$name" --out "$WORK/merged-$name" \
    >"$WORK/merge-$name.log" 2>&1; then
    pass "merge-lora $name"
  else
    fail "merge-lora $name"
    cat "$WORK/merge-$name.log"
  fi
done

# Refused at start: a rank over --max-lora-rank names the tensor and the flag.
if "$BIN" serve --model "$MODEL" --port 0 --lora-modules big="$FX/rank32" --max-lora-rank 16 \
  >"$WORK/rank.log" 2>&1; then
  fail "--max-lora-rank 16 accepted a rank-32 adapter"
else
  check "rank over --max-lora-rank refused, naming the tensor" \
    "$(grep -c 'q_proj.lora_A.weight.*--max-lora-rank 16' "$WORK/rank.log")" -ge 1
fi

start_server multi --served-model-name base --max-loras 4 --enable-lora-runtime-updates \
  --lora-modules alpha="$FX/alpha" beta="$FX/beta" gamma="$FX/gamma/gamma.pth"
MULTI=$URL
start_server merged-alpha --served-model-name merged-alpha --model "$WORK/merged-alpha"
ALPHA=$URL
start_server merged-beta --served-model-name merged-beta --model "$WORK/merged-beta"
BETA=$URL
start_server plain --served-model-name base
PLAIN=$URL

if node "$ROOT/tests/js/lora_serving.mjs" "$MULTI" "$PLAIN" "$ALPHA" "$BETA" "$FX"; then
  pass "openai client LoRA checks"
else
  fail "openai client LoRA checks"
fi
# Terminal chat: /set model NAME picks an adapter; its answer equals the merged model's.
chat_lines() {  # chat_lines URL [LINE...]: the chat's stdout for these input lines
  local url=$1
  shift
  printf '%s\n' "/set temperature 0" "$@" "Tell me a story." "/quit" |
    timeout 120 "$BIN" chat --url "$url" --max-tokens 12 2>&1
}
chat_lines "$MULTI" "/set model alpha" >"$WORK/chat-alpha.out" || true
chat_lines "$ALPHA" >"$WORK/chat-merged.out" || true
chat_lines "$MULTI" "/set model nope" >"$WORK/chat-nope.out" || true
# The answer lines, without the "NAME> " label (the adapter's name here, merged-alpha there).
answer() { grep -v -e '^chatting with' -e '= ' -e '^\s*$' "$1" | sed 's/^you> [^ ]*> //' | head -n 1; }
if [[ -n "$(answer "$WORK/chat-alpha.out")" && "$(answer "$WORK/chat-alpha.out")" == "$(answer "$WORK/chat-merged.out")" ]]; then
  pass "chat /set model alpha answers as the merged model"
else
  fail "chat /set model alpha: '$(answer "$WORK/chat-alpha.out")' vs '$(answer "$WORK/chat-merged.out")'"
fi
check "chat labels the answer with the adapter" "$(grep -c 'you> alpha> ' "$WORK/chat-alpha.out")" -ge 1
check "chat /set model nope shows the server's 404" "$(grep -c "does not exist" "$WORK/chat-nope.out")" -ge 1

# bench serve spreads its requests over the base and the adapters.
if "$BIN" bench serve --url "$MULTI" --lora-mix base,alpha,beta --num-prompts 6 --input-len 8 \
  --output-len 4 --max-concurrency 6 --no-progress >"$WORK/bench.log" 2>&1; then
  check "bench serve --lora-mix: exit 0 (no request failed), the mix named" "$(grep -c 'models: base,alpha,beta' "$WORK/bench.log")" = 1
else
  fail "bench serve --lora-mix"
  cat "$WORK/bench.log"
fi
if [[ -x /usr/bin/chromium && -d "$ROOT/tests/js/node_modules/playwright-core" ]]; then
  if timeout 300 node "$ROOT/tests/js/web_lora.mjs" "$MULTI"; then
    pass "web page LoRA drop-down"
  else
    fail "web page LoRA drop-down"
  fi
else
  fail "/usr/bin/chromium or playwright-core missing (scripts/setup.sh, npm ci --prefix tests/js)"
fi
URL=$MULTI
check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
finish
