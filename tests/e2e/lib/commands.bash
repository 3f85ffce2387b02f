# Checks on a command's outcome, for e2e scripts that source server.bash first (pass, fail, WORK).

# run NAME cmd...: passes when the command exits 0, shows its output otherwise.
run() {
  local name=$1
  shift
  if "$@" >"$WORK/out.log" 2>&1; then
    pass "$name"
  else
    fail "$name: $*"
    cat "$WORK/out.log"
  fi
}

# expect_fail NAME PATTERN cmd...: a non-zero exit with PATTERN in the command's output.
expect_fail() {
  local name=$1 pattern=$2
  shift 2
  if "$@" >"$WORK/out.log" 2>&1; then
    fail "$name: succeeded but should fail"
  elif ! grep -qF -- "$pattern" "$WORK/out.log"; then
    fail "$name: message lacks '$pattern'"
    cat "$WORK/out.log"
  else
    pass "$name ($(grep -m1 -oF -- "$pattern" "$WORK/out.log"))"
  fi
}
