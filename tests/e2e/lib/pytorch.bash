# What the e2e scripts that check pagedserve against real PyTorch share (source after
# server.bash): PY, Debian's python3 that has python3-torch; TOOL, tests/tools/convert_logits;
# FX, the folder their fixture scripts write to; edit_config, matches_pytorch (a fixture's 300
# rows, every chunking), tensor_names, http_equals_naive, and for a script that sets FIXTURE (the fixture
# checkpoint's folder name under FX) copy_fixture and expect_miss. Ends the script with a FAIL
# line when torch or the tool is missing.
PY=/usr/bin/python3
TOOL="$BUILD/tests/convert_logits"
FX="$WORK/fx"
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "FAIL - $PY cannot import torch (apt-get install python3-torch)"
  exit 1
fi
[[ -x "$TOOL" ]] || { echo "FAIL - $TOOL not built (cmake --build ... --target convert_logits)"; exit 1; }

edit_config() {  # edit_config DIR PYTHON-STATEMENT-ON-c: rewrites DIR/config.json through it
  "$PY" -c 'import json,sys; p=sys.argv[1]+"/config.json"; c=json.load(open(p)); exec(sys.argv[2]); json.dump(c, open(p,"w"))' "$1" "$2"
}

copy_fixture() {  # copy_fixture NAME: a copy of the fixture checkpoint $FX/$FIXTURE in $WORK/NAME
  rm -rf "$WORK/$1"
  cp -r "$FX/$FIXTURE" "$WORK/$1"
}

# expect_miss NAME CONFIG-EDIT: the fixture's weights with an edited config must miss PyTorch's
# logits (convert_logits fails): the comparison can fail.
expect_miss() {
  copy_fixture "$1"
  edit_config "$WORK/$1" "$2"
  if "$TOOL" "$WORK/$1" "$FX/$FIXTURE" >"$WORK/out.log" 2>&1; then
    fail "$1: logits matched PyTorch after $2"
  else
    pass "$1: logits miss PyTorch ($(grep -m1 -o 'runner: .*' "$WORK/out.log"))"
  fi
}

# matches_pytorch NAME: convert_logits checks $FX/NAME's naive oracle on all 300 rows and the
# runner prefilling in chunks of 1, 7, 64 and 300 against PyTorch's logits (1e-4).
matches_pytorch() {
  run "$1 logits match PyTorch" "$TOOL" "$FX/$1" "$FX/$1"
  cat "$WORK/out.log"
  grep -q "naive: 300 rows" "$WORK/out.log" && pass "$1: the naive oracle was compared on all 300 rows" ||
    fail "$1 naive rows: $(cat "$WORK/out.log")"
  for chunk in "chunks of 1: 300 rows" "chunks of 7: 43 rows" "chunks of 64: 5 rows" "chunks of 300: 1 rows"; do
    grep -q "runner $chunk" "$WORK/out.log" && pass "$1: the runner prefilled in $chunk" ||
      fail "$1 runner $chunk missing: $(cat "$WORK/out.log")"
  done
}

tensor_names() {  # tensor_names FILE.safetensors: "name [shape]" per tensor, from its header
  "$PY" - "$1" <<'PYEOF'
import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
for k, v in json.loads(f.read(n)).items():
    if k != "__metadata__": print(k, v["shape"])
PYEOF
}

# http_equals_naive COMPLETION_JSON MAX_TOKENS: "yes" when the completion's text equals the
# PyTorch oracle's greedy text for $MODEL and the prompt "Hello there, tell me a story" (and is
# over 20 characters), else "no: " and both. The oracle prints raw bytes; JSON carries U+FFFD
# where a token ends mid-character. Both are compared without those: a different token anywhere
# still shows.
http_equals_naive() {
  "$(dirname "$BIN")/pagedserve-train" generate --model "$MODEL" --prompt "Hello there, tell me a story" \
    --max-tokens "$2" --ignore-eos --naive >"$WORK/naive.txt"
  "$PY" -c '
import json, sys
http = json.load(open(sys.argv[1]))["choices"][0]["text"].replace("\ufffd", "")
naive = open(sys.argv[2], "rb").read().decode("utf-8", "ignore").removesuffix("\n")
print("yes" if http == naive and len(naive) > 20 else "no: %r vs %r" % (http, naive))' "$1" "$WORK/naive.txt"
}
