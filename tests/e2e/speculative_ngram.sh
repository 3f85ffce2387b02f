#!/usr/bin/env bash
# Speculative decoding by n-gram prompt lookup (issue #21) through the real binary: its flags
# are checked up front (exit 2 naming the flag); a server with --speculative ngram answers an
# input-grounded prompt with the same greedy text as one without, and /metrics counts the
# accepted draft tokens; bench offline reports acceptance and the on/off ratios.
source "$(dirname "$0")/lib/server.bash" "$@"

SHIPPED="$ROOT/models/tiny"
bad_flag() {  # bad_flag NAME EXPECTED_MESSAGE FLAGS...
  local name=$1 message=$2 rc=0
  shift 2
  "$BIN" serve --model "$MODEL" "$@" >"$WORK/bad.log" 2>&1 || rc=$?
  check "$name exits 2" "$rc" = 2
  check "$name: the message names the flag" "$(grep -c -- "$message" "$WORK/bad.log")" -ge 1
}
bad_flag "unknown method" "--speculative: unknown method 'eagle'" --speculative eagle
bad_flag "--ngram-min above --ngram-max" "--ngram-min (3) must not exceed --ngram-max (2)" \
  --speculative ngram --ngram-max 2 --ngram-min 3
bad_flag "K out of range" "--num-speculative-tokens must be between 1 and 64" \
  --speculative ngram --num-speculative-tokens 0
bad_flag "a tuning flag without --speculative" "--num-speculative-tokens needs --speculative ngram" \
  --num-speculative-tokens 4

# The shipped chat model, asked a question whose answer is already in the conversation.
PROMPT=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["conversations"][0]["value"], end="")' \
  "$ROOT/data/spec_grounded/grounded_chat.jsonl")
body=$(python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "max_tokens": 48, "temperature": 0}))' "$PROMPT")
complete() { curl -s -H 'Content-Type: application/json' -d "$body" "$URL/v1/completions"; }
text_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["choices"][0]["text"])'; }

MODEL="$SHIPPED"
start_server plain
plain=$(complete | text_of)
stop_server "$SERVER_PID" TERM 30
start_server spec --speculative ngram --num-speculative-tokens 4 --ngram-max 3
spec=$(complete | text_of)
check "the answer is not empty" -n "$plain"
check "greedy text with speculation equals the text without" "$spec" = "$plain"
metrics=$(curl -s "$URL/metrics")
value() { echo "$metrics" | grep -E "^$1(\{| )" | awk '{print $NF}' | head -1; }
accepted=$(value 'vllm:spec_decode_num_accepted_tokens_total')
drafted=$(value 'vllm:spec_decode_num_draft_tokens_total')
check "/metrics counts accepted draft tokens" "${accepted%.*}" -gt 0
check "accepted <= drafted" "${accepted%.*}" -le "${drafted%.*}"
check "/metrics has the acceptance rate" "$(echo "$metrics" | grep -c '^pagedserve_spec_decode_acceptance_rate 0\.[0-9]')" = 1
stop_server "$SERVER_PID" TERM 30

# bench offline on the grounded set: the JSON has the acceptance and both ratios.
"$BIN" bench offline --model "$SHIPPED" --dataset "$ROOT/data/spec_grounded/grounded_chat.jsonl" \
  --num-prompts 4 --max-num-seqs 4 --no-probe --speculative ngram --num-speculative-tokens 4 \
  --json "$WORK/spec.json" >"$WORK/spec.out" 2>&1
check "bench offline prints the on/off line" "$(grep -c '^single       speculative on/off' "$WORK/spec.out")" = 1
check "bench offline JSON: single-request acceptance > 0" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["speculative"]["single"]["acceptance_rate"] > 0)' "$WORK/spec.json")" = True
check "bench offline JSON: fewer steps with speculation" \
  "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["speculative"]["single"]; print(s["on_steps"] < s["off_steps"])' "$WORK/spec.json")" = True

finish
