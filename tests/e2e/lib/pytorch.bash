# What the e2e scripts that check pagedserve against real PyTorch share (source after
# server.bash): PY, Debian's python3 that has python3-torch; TOOL, tests/tools/convert_logits;
# FX, the folder their fixture scripts write to; edit_config. Ends the script with a FAIL line
# when torch or the tool is missing.
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
