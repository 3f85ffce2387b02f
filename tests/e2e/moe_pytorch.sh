# Mixture-of-experts and MiniMind's own format against real PyTorch (issue #17).
# make_moe_fixtures.py writes random-weight fp32 checkpoints (qwen3_moe; MiniMind 3 dense and MoE;
# MiniMind 2 MoE with a shared expert) and MiniMind MoE state_dicts with torch.save, plus the
# logits a plain-torch forward (following HF's modeling_qwen3_moe.py and MiniMind's
# model_minimind.py) gives; tests/tools/convert_logits checks the naive oracle and the paged
# runner against them (max |diff| <= 1e-4). Then a converted MiniMind MoE .pth serves over HTTP,
# and bad MoE configs / state_dicts fail by name. Needs /usr/bin/python3 with python3-torch.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/commands.bash"

source "$(dirname "$0")/lib/pytorch.bash"

VOCAB=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$MODEL/config.json")
run "fixtures from PyTorch" "$PY" "$ROOT/tests/convert/make_moe_fixtures.py" "$FX" "$VOCAB"

# 1. Hugging Face-layout checkpoints written by the fixture script, served as they are.
for name in qwen3_moe minimind3_dense minimind3_moe minimind2_moe; do
  cp "$MODEL/tokenizer.json" "$MODEL/tokenizer_config.json" "$FX/$name/"
  run "$name logits match PyTorch" "$TOOL" "$FX/$name" "$FX/$name"
  cat "$WORK/out.log"
done

# 2. MiniMind MoE state_dicts (torch.save) through `pagedserve convert`.
for name in minimind2_moe_pth minimind3_moe_pth; do
  cp "$MODEL/tokenizer.json" "$MODEL/tokenizer_config.json" "$FX/$name/"
done
# MiniMind 2 has no q/k norms, so the head count comes from flags; k = 2 is its default.
run "convert MiniMind 2 MoE fp16 .pth" "$BIN" convert --from "$FX/minimind2_moe_pth/model.pth" \
  --to "$WORK/mm2" --num-heads 4 --num-kv-heads 2 --rms-norm-eps 1e-5
cp "$WORK/out.log" "$WORK/convert-mm2.log"
grep -q "experts: 4 routed (top 2, width 192), 1 shared" "$WORK/convert-mm2.log" &&
  pass "convert reports routed + shared experts" || fail "convert report: $(cat "$WORK/convert-mm2.log")"
grep -q "default: num_experts_per_tok 2" "$WORK/convert-mm2.log" &&
  pass "convert says which MiniMind default it took" || fail "no default note: $(cat "$WORK/convert-mm2.log")"
grep -q '"model_type": "minimind"' "$WORK/mm2/config.json" && grep -q '"n_shared_experts": 1' "$WORK/mm2/config.json" &&
  pass "config.json in MiniMind's own format" || fail "config.json: $(cat "$WORK/mm2/config.json")"
run "converted MiniMind 2 MoE logits match PyTorch" "$TOOL" "$WORK/mm2" "$FX/minimind2_moe_pth"
cat "$WORK/out.log"

# MiniMind 3's default is k = 1; this model was made with k = 2, so the flag is needed, and
# converting without it must give different logits (the check can fail).
run "convert MiniMind 3 MoE .pth with --num-experts-per-tok 2" "$BIN" convert \
  --from "$FX/minimind3_moe_pth/model.pth" --to "$WORK/mm3" --num-experts-per-tok 2
run "converted MiniMind 3 MoE logits match PyTorch" "$TOOL" "$WORK/mm3" "$FX/minimind3_moe_pth"
cat "$WORK/out.log"
run "convert MiniMind 3 MoE .pth with the default k" "$BIN" convert \
  --from "$FX/minimind3_moe_pth/model.pth" --to "$WORK/mm3-k1"
if "$TOOL" "$WORK/mm3-k1" "$FX/minimind3_moe_pth" >"$WORK/out.log" 2>&1; then
  fail "top-1 routing matched a top-2 reference"
else
  pass "top-1 routing does not match the top-2 reference ($(grep -m1 -o 'runner: .*' "$WORK/out.log"))"
fi

# 3. The converted MiniMind 2 MoE checkpoint over HTTP: greedy completions equal the naive
# oracle's tokens, streaming equals non-streaming, /v1/models names it.
MODEL="$WORK/mm2"
start_server mm2
body='{"model":"mm2","prompt":"Hello there","max_tokens":12,"temperature":0,"ignore_eos":true}'
code=$(curl -s -o "$WORK/comp.json" -w '%{http_code}' --max-time 120 -H 'Content-Type: application/json' \
  -d "$body" "$URL/v1/completions")
check "completion on the MoE checkpoint answers 200" "$code" = 200
http_text=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["choices"][0]["text"], end="")' "$WORK/comp.json")
tokens=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["usage"]["completion_tokens"])' "$WORK/comp.json")
check "12 completion tokens" "$tokens" = 12
check "completion text is not empty" -n "$http_text"
naive_text=$("$(dirname "$BIN")/pagedserve-train" generate --model "$WORK/mm2" --prompt "Hello there" --max-tokens 12 --ignore-eos --naive)
check "HTTP greedy text equals the naive oracle's" "$http_text" = "$naive_text"
stream_text=$(streamed_completion_text "$body")
check "streamed text equals the non-streamed text" "$stream_text" = "$http_text"
stop_server "$SERVER_PID" TERM 20

# 4. Bad input fails at load or conversion, naming what is wrong.
mkdir -p "$WORK/no-k"
cp "$FX/qwen3_moe"/* "$WORK/no-k/"
"$PY" -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); del c["num_experts_per_tok"]; json.dump(c, open(p,"w"))' "$WORK/no-k/config.json"
expect_fail "qwen3_moe config without num_experts_per_tok" 'missing required field "num_experts_per_tok"' \
  "$BIN" generate --model "$WORK/no-k" --prompt hi --max-tokens 1
mkdir -p "$WORK/mm-no-shared"
cp "$FX/minimind2_moe"/* "$WORK/mm-no-shared/"
"$PY" -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); del c["n_shared_experts"]; json.dump(c, open(p,"w"))' "$WORK/mm-no-shared/config.json"
expect_fail "MiniMind 2 config without n_shared_experts" 'missing required field "n_shared_experts"' \
  "$BIN" generate --model "$WORK/mm-no-shared" --prompt hi --max-tokens 1
"$PY" - "$FX/minimind3_moe_pth/model.pth" "$WORK/broken.pth" <<'EOF'
import sys, torch
sd = torch.load(sys.argv[1])
del sd["model.layers.1.mlp.experts.3.up_proj.weight"]
torch.save(sd, sys.argv[2])
EOF
cp "$MODEL/tokenizer.json" "$WORK/"
expect_fail "a .pth missing an expert tensor" "missing tensor model.layers.1.mlp.experts.3.up_proj.weight" \
  "$BIN" convert --from "$WORK/broken.pth" --to "$WORK/broken-out" --num-experts-per-tok 2
check "nothing written for the broken .pth" ! -e "$WORK/broken-out"
expect_fail "experts with a dense --arch" "hold MoE experts" \
  "$BIN" convert --from "$FX/minimind3_moe_pth/model.pth" --to "$WORK/dense-out" --arch qwen3

finish
