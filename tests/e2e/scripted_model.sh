#!/usr/bin/env bash
# A scripted checkpoint (tests/tools/make_scripted_model.py) served by the real binary: greedy
# /v1/completions answers exactly the chosen reply, then stops at EOS, streamed and not, for
# prompts ending in either Qwen3 generation prompt; a second checkpoint with another reply
# answers that one instead; replies the script cannot script fail with a clear error.
source "$(dirname "$0")/lib/server.bash" "$@"

MAKE=(/usr/bin/python3 "$ROOT/tests/tools/make_scripted_model.py")
TEMPLATE="$ROOT/tests/chat/templates/qwen--qwen3-0.6b.jinja"
REPLY='<think>Let me think</think>The answer'
OTHER_REPLY='<think>Counting: six sevens</think>Forty-two.'

make_model() {  # make_model DIR REPLY
  "${MAKE[@]}" --out "$1" --template "$TEMPLATE" --reply-text "$2" >"$WORK/make.log" 2>&1
}

# completion PROMPT [STREAM]: "TEXT<TAB>FINISH_REASON<TAB>COMPLETION_TOKENS" of a greedy request;
# with STREAM=true the text is the concatenation of every SSE delta and the finish reason the
# one non-null one (usage comes from include_usage).
completion() {
  local body
  body=$(jq -nc --arg p "$1" --argjson s "${2:-false}" \
    '{prompt: $p, max_tokens: 64, temperature: 0, stream: $s}
     + (if $s then {stream_options: {include_usage: true}} else {} end)')
  curl -s --max-time 60 -N "$URL/v1/completions" -H 'content-type: application/json' -d "$body" |
    if [[ "${2:-false}" == true ]]; then
      sed -n 's/^data: //p' | grep -v '^\[DONE\]$' | jq -rs '
        ([.[] | .choices[] | .text] | join("")) as $t
        | ([.[] | .choices[] | .finish_reason | select(. != null)] | join(",")) as $f
        | ([.[] | .usage | select(. != null) | .completion_tokens] | first) as $n
        | "\($t)\t\($f)\t\($n)"'
    else
      jq -r '"\(.choices[0].text)\t\(.choices[0].finish_reason)\t\(.usage.completion_tokens)"'
    fi
}

PROMPT_THINK=$'<|im_start|>user\nWhat is six times seven?<|im_end|>\n<|im_start|>assistant\n'
PROMPT_NO_THINK=$'<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n'
PROMPT_NO_THINK+=$'<|im_start|>assistant\n<think>\n\n</think>\n\n'

# --- the scripted reply
if make_model "$WORK/scripted" "$REPLY"; then pass "make_scripted_model writes the checkpoint"
else fail "make_scripted_model: $(cat "$WORK/make.log")"; finish; fi
for f in config.json model.safetensors tokenizer.json tokenizer_config.json; do
  check "checkpoint has $f" -s "$WORK/scripted/$f"
done
check "tokenizer_config carries the template" \
  "$(jq -r .chat_template "$WORK/scripted/tokenizer_config.json")" = "$(cat "$TEMPLATE")"
check "tokenizer_config eos_token" "$(jq -r .eos_token "$WORK/scripted/tokenizer_config.json")" \
  = '<|im_end|>'
# The reply's tokens plus EOS: what completion_tokens must count.
chain_len=$(jq '.chain | length' "$WORK/scripted/scripted_chain.json")

# Longest tokens first gives the tokenizer's own encoding for this reply (not guaranteed in
# general: the script only promises a chain that decodes to the reply).
if [[ -x "$BUILD/tests/tokenize_jsonl" ]]; then
  printf '%s\n' "$REPLY" >"$WORK/reply.txt"
  chain=$(jq -c .chain "$WORK/scripted/scripted_chain.json")
  encoded=$("$BUILD/tests/tokenize_jsonl" encode "$WORK/scripted/tokenizer.json" "$WORK/reply.txt" |
    jq -c --argjson eos "$(jq '.[-1]' <<<"$chain")" '.ids + [$eos]')
  check "the chain is the tokenizer's encoding of the reply" "$encoded" = "$chain"
else
  echo "skip - $BUILD/tests/tokenize_jsonl not built: chain not compared with the tokenizer"
fi

MODEL="$WORK/scripted"
start_server scripted
expected=$(printf '%s\tstop\t%s' "$REPLY" "$chain_len")
for variant in think no_think; do
  prompt_var="PROMPT_${variant^^}"
  got=$(completion "${!prompt_var}" false)
  check "$variant prompt, not streamed: reply, stop, $chain_len tokens" "$got" = "$expected"
  got=$(completion "${!prompt_var}" true)
  check "$variant prompt, streamed: reply, stop, $chain_len tokens" "$got" = "$expected"
done
# Any prompt whose last token is not one of the reply's: the output depends on nothing else.
got=$(completion $'<|im_start|>user\nA much longer question, with many words in it.<|im_end|>\n<|im_start|>user\nAnd a second turn<|im_end|>\n<|im_start|>assistant\n' false)
check "a longer two-turn prompt: same reply" "$got" = "$expected"
# A prompt ending inside the reply continues the chain from there: the model is what we say.
got=$(completion 'anything</think>' false)
check "a prompt ending in </think> continues with the answer" \
  "$got" = "$(printf 'The answer\tstop\t%s' 3)"
# max_tokens cuts the script short with finish_reason length.
got=$(curl -s --max-time 30 "$URL/v1/completions" -H 'content-type: application/json' \
  -d "$(jq -nc --arg p "$PROMPT_THINK" '{prompt: $p, max_tokens: 1, temperature: 0}')" |
  jq -r '"\(.choices[0].text)\t\(.choices[0].finish_reason)"')
check "max_tokens 1: the first reply token, length" "$got" = $'<think>\tlength'

# The chat endpoint renders its own prompt, and the Qwen3 reasoning parser (chosen from the
# template) splits the reply exactly at </think>.
chat=$(curl -s --max-time 60 "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":64,"temperature":0}')
check "chat: reasoning and content split at </think>" \
  "$(jq -r '"\(.choices[0].message.reasoning_content)|\(.choices[0].message.content)"' <<<"$chat")" = \
  "Let me think|The answer"
check "chat: finish_reason stop" "$(jq -r '.choices[0].finish_reason' <<<"$chat")" = stop
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0

# --- negative: another reply gives another output (so the checks above can fail)
if make_model "$WORK/other" "$OTHER_REPLY"; then pass "make_scripted_model: other reply"
else fail "make_scripted_model other: $(cat "$WORK/make.log")"; finish; fi
MODEL="$WORK/other"
start_server other
got=$(completion "$PROMPT_THINK" false)
check "other checkpoint answers its own reply" "${got%%$'\t'*}" = "$OTHER_REPLY"
check "other checkpoint does not answer the first reply" "${got%%$'\t'*}" != "$REPLY"
got=$(completion "$PROMPT_NO_THINK" true)
check "other checkpoint, streamed" "${got%%$'\t'*}" = "$OTHER_REPLY"
stop_server "$SERVER_PID" TERM 30

# --- replies a memoryless model cannot script: a clear error, no checkpoint claimed
expect_refused() {  # expect_refused NAME REPLY PATTERN
  if make_model "$WORK/refused" "$2"; then
    fail "$1: accepted"
  elif grep -q "make_scripted_model: error: .*$3" "$WORK/make.log"; then
    pass "$1: refused ($(head -c 100 "$WORK/make.log"))"
  else
    fail "$1: unexpected output $(cat "$WORK/make.log")"
  fi
}
# "\n" may be the prompt's last token (…assistant\n), so the reply cannot use it.
expect_refused "reply with a newline" $'Line one\nLine two' 'cannot spell'
expect_refused "reply with <think> twice" '<think>a</think><think>b</think>' 'appears twice'
expect_refused "reply with EOS in it" 'a<|im_end|>b' 'special'
expect_refused "empty reply" '' 'empty'
if "${MAKE[@]}" --out "$WORK/refused" --template "$WORK/missing.jinja" --reply-text x \
  >"$WORK/make.log" 2>&1; then
  fail "missing template: accepted"
else
  check "missing template: an error naming the file" \
    "$(grep -c 'missing.jinja' "$WORK/make.log")" -ge 1
fi
finish
