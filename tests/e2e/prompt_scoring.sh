#!/usr/bin/env bash
# Prompt scoring over HTTP (issue #36): /v1/completions with echo (the prompt before the text,
# its tokens' logprobs first with null for the first token, as OpenAI did), vLLM's
# prompt_logprobs on /v1/completions and /v1/chat/completions, and max_tokens 0 scoring a prompt
# without generating. The logprobs a prompt's tokens get are the ones the same tokens got when
# generated greedily one by one; the bodies (but echo's, whose null first logprob OpenAI's
# schema does not allow) validate against OpenAI's schemas.
source "$(dirname "$0")/lib/server.bash" "$@"
PY=/usr/bin/python3
MODEL="$ROOT/models/tiny"
start_server scoring --max-model-len 512

post() {  # post NAME PATH BODY: the reply in $WORK/NAME.json, the status in STATUS
  STATUS=$(curl -s -N -o "$WORK/$1.json" -w '%{http_code}' --max-time 120 "$URL$2" \
    -H 'Content-Type: application/json' --data-binary "$3")
}
valid() {  # valid NAME SCHEMA: $WORK/NAME.json against SCHEMA
  schema_valid "$1" "$2" "$WORK/$1.json"
}

# 1. Greedy generation, with each generated token's logprob and its 2 best alternatives.
PROMPT='pagedserve is'
post generated /v1/completions "$(jq -nc --arg p "$PROMPT" \
  '{model: "tiny", prompt: $p, max_tokens: 10, temperature: 0, logprobs: 2, ignore_eos: true}')"
check "greedy generation: HTTP 200" "$STATUS" = 200
GENERATED=$(jq -r '.choices[0].text' "$WORK/generated.json")

# 2. The prompt and that text, scored without generating: echo with logprobs, and
# prompt_logprobs. Both must give the generated tokens the logprobs generation gave them.
post scored /v1/completions "$(jq -nc --arg p "$PROMPT$GENERATED" \
  '{model: "tiny", prompt: $p, max_tokens: 0, echo: true, logprobs: 2, prompt_logprobs: 2}')"
check "scoring (max_tokens 0, echo, logprobs 2, prompt_logprobs 2): HTTP 200" "$STATUS" = 200
if "$PY" - "$WORK/generated.json" "$WORK/scored.json" "$PROMPT$GENERATED" <<'PYEOF'; then
import json, sys
gen = json.load(open(sys.argv[1]))["choices"][0]["logprobs"]
body = json.load(open(sys.argv[2]))
choice = body["choices"][0]
got, plp = choice["logprobs"], choice["prompt_logprobs"]
errors = []
def need(ok, what):
    if not ok:
        errors.append(what)
n = len(gen["tokens"])
need(n == 10, f"10 generated tokens, got {n}")
need(choice["text"] == sys.argv[3], "echo: the text is the prompt (nothing generated)")
need(choice["finish_reason"] == "length", "finish_reason length")
need(body["usage"]["completion_tokens"] == 0, "no completion tokens")
need(body["usage"]["prompt_tokens"] == len(got["tokens"]), "one echoed token per prompt token")
need(got["token_logprobs"][0] is None and got["top_logprobs"][0] is None,
     "the first prompt token has no logprob (null)")
need(got["tokens"][-n:] == gen["tokens"], "the scored prompt ends with the generated tokens")
for i in range(n):
    a, b = got["token_logprobs"][-n + i], gen["token_logprobs"][i]
    need(abs(a - b) < 1e-3, f"token {i}: scored logprob {a} vs generated {b}")
    ta, tb = got["top_logprobs"][-n + i], gen["top_logprobs"][i]
    need(set(ta) == set(tb), f"token {i}: the same alternatives {sorted(ta)} vs {sorted(tb)}")
    for k in tb:
        need(abs(ta.get(k, 0) - tb[k]) < 1e-3, f"token {i}: alternative {k!r}")
need(plp[0] is None and len(plp) == len(got["tokens"]),
     "prompt_logprobs: null, then one entry per later prompt token")
for i in range(1, len(plp)):
    # The prompt token's own entry carries the same logprob echo gave it; greedy ones rank 1.
    own = [v for v in plp[i].values() if v["decoded_token"] == got["tokens"][i]]
    need(own and abs(own[0]["logprob"] - got["token_logprobs"][i]) < 1e-6,
         f"prompt_logprobs[{i}] holds the token echo scored")
    need(len(plp[i]) >= 2, f"prompt_logprobs[{i}]: the token and its 2 best alternatives")
for i in range(n):
    own = [v for v in plp[-n + i].values() if v["decoded_token"] == gen["tokens"][i]]
    need(own and own[0]["rank"] == 1, f"generated token {i} ranks first as a prompt token")
for e in errors:
    print("    " + e)
sys.exit(1 if errors else 0)
PYEOF
  pass "prompt logprobs equal greedy generation's, token by token"
else
  fail "prompt logprobs equal greedy generation's, token by token"
fi

# 3. Streamed echo: the first chunk carries the prompt (and its logprobs), later ones the text.
post streamed /v1/completions "$(jq -nc --arg p "$PROMPT" \
  '{model: "tiny", prompt: $p, max_tokens: 4, temperature: 0, echo: true, logprobs: 1, stream: true}')"
FIRST=$(sed -n 's/^data: //p' "$WORK/streamed.json" | head -n 1)
check "stream: the first chunk starts with the prompt" \
  "$(jq -r '.choices[0].text | startswith("pagedserve is")' <<<"$FIRST")" = true
check "stream: its logprobs start with the prompt's null" \
  "$(jq -c '.choices[0].logprobs.token_logprobs[0]' <<<"$FIRST")" = null
post whole_echo /v1/completions "$(jq -nc --arg p "$PROMPT" \
  '{model: "tiny", prompt: $p, max_tokens: 4, temperature: 0, echo: true, logprobs: 1}')"
check "stream: the texts add up to the whole echoed response's" \
  "$(sed -n 's/^data: //p' "$WORK/streamed.json" | grep -v '^\[DONE\]$' | jq -rs 'map(.choices[0].text) | join("")')" \
  = "$(jq -r '.choices[0].text' "$WORK/whole_echo.json")"
check "stream: and its tokens to the whole response's" \
  "$(sed -n 's/^data: //p' "$WORK/streamed.json" | grep -v '^\[DONE\]$' | jq -cs 'map(.choices[0].logprobs.tokens) | add')" \
  = "$(jq -c '.choices[0].logprobs.tokens' "$WORK/whole_echo.json")"

# 4. prompt_logprobs on both routes validate against OpenAI's schemas (an extra field is
# allowed there); generating with them changes nothing of the reply.
post plp_completion /v1/completions "$(jq -nc --arg p "$PROMPT" \
  '{model: "tiny", prompt: $p, max_tokens: 10, temperature: 0, logprobs: 2, ignore_eos: true, prompt_logprobs: 1}')"
valid plp_completion CreateCompletionResponse
check "prompt_logprobs: the same text as without" \
  "$(jq -r '.choices[0].text' "$WORK/plp_completion.json")" = "$GENERATED"
check "prompt_logprobs: one entry per prompt token" \
  "$(jq '.choices[0].prompt_logprobs | length' "$WORK/plp_completion.json")" \
  = "$(jq '.usage.prompt_tokens' "$WORK/plp_completion.json")"
post plp_chat /v1/chat/completions \
  '{"model": "tiny", "messages": [{"role": "user", "content": "Who are you?"}], "max_tokens": 4, "prompt_logprobs": 0}'
valid plp_chat CreateChatCompletionResponse
check "chat prompt_logprobs: null first, one entry per prompt token" \
  "$(jq -c '[.choices[0].prompt_logprobs[0], (.choices[0].prompt_logprobs | length) == .usage.prompt_tokens]' "$WORK/plp_chat.json")" \
  = '[null,true]'

# 5. Refusals.
post bad_plp /v1/completions '{"model": "tiny", "prompt": "x", "prompt_logprobs": 21}'
check "prompt_logprobs 21: HTTP 400 naming it" \
  "$STATUS $(jq -r .error.param "$WORK/bad_plp.json")" = "400 prompt_logprobs"
post chat_zero /v1/chat/completions '{"model": "tiny", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}'
check "chat max_tokens 0: HTTP 400 naming it" \
  "$STATUS $(jq -r .error.param "$WORK/chat_zero.json")" = "400 max_tokens"

check "no 500 answered" "$(metric 'pagedserve_http_responses_total{code="500"}')" = 0
stop_server "$SERVER_PID" TERM 20
check "the server stopped cleanly" "$STOP_RC" = 0
finish
