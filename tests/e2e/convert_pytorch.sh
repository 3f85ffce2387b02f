# Checkpoint conversion and LoRA against real PyTorch (issue #7). make_fixtures.py saves
# state_dicts and adapters with torch.save and computes reference logits with a plain-torch
# decoder; pagedserve converts / merges them, and tests/tools/convert_logits compares its logits
# (naive oracle and paged runner) with PyTorch's. Malformed inputs must fail by name and write
# nothing. Needs Debian's python3-torch at /usr/bin/python3 (scripts/setup.sh installs it).
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/commands.bash"

source "$(dirname "$0")/lib/pytorch.bash"
HERE="$ROOT/tests/convert"

expect_refused() {  # expect_refused NAME PATTERN OUT_DIR cmd...: non-zero exit, PATTERN in stderr, no OUT_DIR
  local name=$1 pattern=$2 out=$3
  shift 3
  if "$@" >"$WORK/out.log" 2>&1; then
    fail "$name: succeeded but should fail"
  elif ! grep -q -- "$pattern" "$WORK/out.log"; then
    fail "$name: message lacks '$pattern'"
    cat "$WORK/out.log"
  elif [[ -e "$out" ]]; then
    fail "$name: wrote $out despite failing"
  else
    pass "$name ($(grep -m1 -o -- "$pattern.\{0,60\}" "$WORK/out.log"))"
  fi
}

VOCAB=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$MODEL/config.json")
run "fixtures from PyTorch" "$PY" "$HERE/make_fixtures.py" "$FX" "$VOCAB"
cp "$MODEL/tokenizer.json" "$MODEL/tokenizer_config.json" "$FX/qwen3/"

# Qwen3, MiniMind names, tied, shape read off the tensors; theta / eps by flag.
run "convert MiniMind-named qwen3 .pth" \
  "$BIN" convert --from "$FX/qwen3/model.pth" --to "$WORK/q3" --rope-theta 10000 --rms-norm-eps 1e-5
grep -q '"tie_word_embeddings": true' "$WORK/q3/config.json" && pass "tied head detected" || fail "tied head detected"
check "tokenizer copied" -f "$WORK/q3/tokenizer.json"
run "qwen3 logits match PyTorch" "$TOOL" "$WORK/q3" "$FX/qwen3_base"
cat "$WORK/out.log"

# Llama, HF names in a {"model": ...} wrapper, bf16, untied; config.json beside, --tokenizer.
run "convert wrapped llama bf16 .pth" \
  "$BIN" convert --from "$FX/llama/ckpt.pth" --to "$WORK/llama" --tokenizer "$MODEL"
grep -q '"torch_dtype": "bfloat16"' "$WORK/llama/config.json" && pass "dtype kept (bf16)" || fail "dtype kept (bf16)"
run "llama logits match PyTorch" "$TOOL" "$WORK/llama" "$FX/llama_base"
cat "$WORK/out.log"

# LoRA: merged checkpoint (PEFT dir) and merge at load time (MiniMind .pth) vs unmerged PyTorch.
run "merge-lora PEFT adapter" \
  "$BIN" merge-lora --base "$WORK/q3" --adapter "$FX/lora_peft" --out "$WORK/q3-peft"
run "merged PEFT logits match PyTorch base+adapter" "$TOOL" "$WORK/q3-peft" "$FX/qwen3_lora_peft"
cat "$WORK/out.log"
run "load-time .pth LoRA matches PyTorch" "$TOOL" "$WORK/q3" "$FX/qwen3_lora_pth" "$FX/lora_pth/lora.pth"
cat "$WORK/out.log"
if "$TOOL" "$WORK/q3-peft" "$FX/qwen3_base" >/dev/null 2>&1; then
  fail "merged adapter changes the logits"
else
  pass "merged adapter changes the logits (base reference no longer matches)"
fi
run "generate --lora" "$BIN" generate --model "$WORK/q3" --lora "$FX/lora_peft" --prompt hello --max-tokens 4
grep -q "merged LoRA" "$WORK/out.log" && pass "generate says it merged" || fail "generate says it merged"

# Round trip through torch.load.
run "export minimind names" "$(dirname "$BIN")/pagedserve-train" export --model "$WORK/q3" --to "$WORK/rt.pth" --names minimind
run "torch.load reads the export" "$PY" "$HERE/check_export.py" "$WORK/rt.pth" "$FX/qwen3/model.pth" minimind
run "export hf names" "$(dirname "$BIN")/pagedserve-train" export --model "$WORK/q3" --to "$WORK/rt-hf.pth"
run "torch.load reads the hf export" "$PY" "$HERE/check_export.py" "$WORK/rt-hf.pth" "$FX/qwen3/model.pth" hf
run "convert the export back" "$BIN" convert --from "$WORK/rt-hf.pth" --to "$WORK/q3-rt" \
  --tokenizer "$MODEL" --rope-theta 10000 --rms-norm-eps 1e-5
run "round trip logits match PyTorch" "$TOOL" "$WORK/q3-rt" "$FX/qwen3_base"

# Malformed inputs: clear errors naming the tensor / file, nothing written.
Q="$FX/qwen3"
expect_refused "wrong shape" "layers.1.attention.wk.weight" "$WORK/bad1" \
  "$BIN" convert --from "$Q/bad_shape.pth" --to "$WORK/bad1"
expect_refused "missing tensor" "missing tensor model.layers.1.mlp.down_proj.weight" "$WORK/bad2" \
  "$BIN" convert --from "$Q/missing.pth" --to "$WORK/bad2"
expect_refused "unknown tensor" "unknown tensor 'layers.0.moe.gate.weight'" "$WORK/bad3" \
  "$BIN" convert --from "$Q/unknown.pth" --to "$WORK/bad3"
expect_refused "list pickle" "not a state_dict" "$WORK/bad4" \
  "$BIN" convert --from "$Q/list.pth" --to "$WORK/bad4"
expect_refused "pickled module" "torch.nn.modules.linear.Linear object, not a state_dict" "$WORK/bad5" \
  "$BIN" convert --from "$Q/module.pth" --to "$WORK/bad5"
expect_refused "text file" "not a torch.save file" "$WORK/bad6" \
  "$BIN" convert --from "$Q/text.pth" --to "$WORK/bad6"
expect_refused "no tokenizer" "tokenizer.json not found" "$WORK/bad7" \
  "$BIN" convert --from "$FX/llama/ckpt.pth" --to "$WORK/bad7"
expect_refused "lora bad rank" "bad rank" "$WORK/bad8" \
  "$BIN" merge-lora --base "$WORK/q3" --adapter "$FX/lora_bad_rank" --out "$WORK/bad8"
expect_refused "lora on the wrong model" "do not fit" "$WORK/bad9" \
  "$BIN" merge-lora --base "$WORK/llama" --adapter "$FX/lora_peft" --out "$WORK/bad9"

finish
