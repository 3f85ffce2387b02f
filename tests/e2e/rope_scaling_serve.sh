#!/usr/bin/env bash
# RoPE-scaled checkpoints served by the real binary (issue #17): the tiny model's config.json
# given Llama 3.1's llama3 block (shrunk: original context 64) serves greedy completions of
# prompts past the original context, streamed and not alike; a linear-scaled one is allowed
# max_position_embeddings * factor tokens (vLLM's rule) and refuses more with a 400 naming the
# limit; an unknown rope type or a missing field stops the server with the file and the field.
# (Logits against PyTorch: tests/model/rope_reference_test.cpp.)
source "$(dirname "$0")/lib/server.bash" "$@"

# with_config DIR JQ_FILTER: a copy of the tiny model whose config.json went through the filter.
with_config() {
  rm -rf "$1"
  cp -r "$MODEL" "$1"
  jq "$2" "$MODEL/config.json" >"$1/config.json"
}

completion() {  # completion PROMPT MAX_TOKENS STREAM: "TEXT<TAB>COMPLETION_TOKENS" or the error
  local body
  body=$(jq -nc --arg p "$1" --argjson n "$2" --argjson s "$3" \
    '{prompt: $p, max_tokens: $n, temperature: 0, ignore_eos: true, stream: $s}
     + (if $s then {stream_options: {include_usage: true}} else {} end)')
  curl -s --max-time 120 -N "$URL/v1/completions" -H 'content-type: application/json' -d "$body" |
    if [[ "$3" == true ]]; then
      sed -n 's/^data: //p' | grep -v '^\[DONE\]$' | jq -rs '
        ([.[] | .choices[]? | .text] | join("")) as $t
        | ([.[] | .usage | select(. != null) | .completion_tokens] | first) as $n
        | "\($t)\t\($n)"'
    else
      jq -r 'if .error then "error: \(.error.message)" else
             "\(.choices[0].text)\t\(.usage.completion_tokens)" end'
    fi
}

prompt_tokens() {  # prompt_tokens TEXT: how many tokens the server's tokenizer makes of it
  curl -s --max-time 30 "$URL/tokenize" -H 'content-type: application/json' \
    -d "$(jq -nc --arg p "$1" '{prompt: $p}')" | jq .count
}

LONG="Once upon a time there was a little robot who lived in a quiet town by the sea."
LONG="$LONG $LONG $LONG $LONG $LONG $LONG $LONG"

# --- llama3 (Llama 3.1's block, original context 64, stated context 512)
with_config "$WORK/llama3" '.max_position_embeddings = 512 | .rope_scaling = {"factor": 8.0,
  "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64,
  "rope_type": "llama3"}'
MODEL="$WORK/llama3" start_server llama3
check "llama3: max_model_len stays max_position_embeddings (512)" \
  "$(curl -s "$URL/v1/models" | jq '.data[0].max_model_len')" = 512
n=$(prompt_tokens "$LONG")
check "the prompt reaches past the original context of 64 ($n tokens)" "$n" -gt 64
plain=$(completion "$LONG" 24 false)
streamed=$(completion "$LONG" 24 true)
check "llama3: a greedy completion of 24 tokens comes back" "${plain##*$'\t'}" = 24
check "llama3: streamed text equals non-streamed text" "$streamed" = "$plain"
stop_server "$SERVER_PID" TERM 20

# --- linear, factor 4 on 64 positions: 256 allowed
with_config "$WORK/linear" '.max_position_embeddings = 64 | .rope_scaling = {"type": "linear", "factor": 4.0}'
MODEL="$WORK/linear" start_server linear
check "linear: max_model_len is 64 * 4" "$(curl -s "$URL/v1/models" | jq '.data[0].max_model_len')" = 256
ok=$(completion "$LONG" 16 false)
check "linear: a prompt past 64 positions is served" "${ok##*$'\t'}" = 16
too_long=$(completion "$LONG $LONG" 16 false)
[[ "$too_long" == error:*256* ]] && pass "linear: prompt + max_tokens over 256 is refused naming 256" ||
  fail "over-long request: $too_long"
stop_server "$SERVER_PID" TERM 20

# --- bad rope_scaling blocks stop the server at load, naming the file and the type or field
bad_load() {  # bad_load NAME JQ_FILTER EXPECTED_TEXT
  with_config "$WORK/$1" "$2"
  local rc=0
  timeout 120 "$BIN" serve --model "$WORK/$1" --port 0 >"$WORK/$1.log" 2>&1 || rc=$?
  check "$1: the server exits non-zero" "$rc" -ne 0
  if grep -qF "$WORK/$1/config.json" "$WORK/$1.log" && grep -qF "$3" "$WORK/$1.log"; then
    pass "$1: the error names config.json and '$3'"
  else
    fail "$1: $(tail -3 "$WORK/$1.log")"
  fi
}
bad_load unknown_type '.rope_scaling = {"rope_type": "su", "factor": 4.0}' \
  'rope_scaling type "su" is not supported'
bad_load missing_field '.rope_scaling = {"rope_type": "llama3", "factor": 8.0,
  "low_freq_factor": 1.0, "high_freq_factor": 4.0}' \
  'missing required field "original_max_position_embeddings"'
bad_load longrope_lists '.rope_scaling = {"rope_type": "longrope", "short_factor": [1.0],
  "long_factor": [1.0, 2.0]}' 'short_factor and long_factor need rotary_dim / 2'
finish
