#!/usr/bin/env bash
# `pagedserve serve --model ORG/NAME` finds the model in a Hugging Face cache tree laid out as
# huggingface_hub writes it (refs/main -> snapshots/<commit>/ of symlinks into blobs/), serves it
# under the name typed, honours --revision, and never downloads: a model missing from the cache
# is a start-up error that lists every place looked.
source "$(dirname "$0")/lib/server.bash" "$@"

MAIN=0123456789abcdef0123456789abcdef01234567
DEV=fedcba9876543210fedcba9876543210fedcba98

# add_snapshot CACHE REPO_FOLDER COMMIT [REF]: the tiny model's files as blobs + snapshot links.
add_snapshot() {
  local cache=$1 repo=$2 commit=$3 ref=${4:-}
  mkdir -p "$cache/$repo/blobs" "$cache/$repo/snapshots/$commit"
  local f blob
  for f in "$MODEL"/*; do
    blob="$commit-$(basename "$f")"
    cp "$f" "$cache/$repo/blobs/$blob"
    ln -s "../../blobs/$blob" "$cache/$repo/snapshots/$commit/$(basename "$f")"
  done
  if [[ -n "$ref" ]]; then
    mkdir -p "$cache/$repo/refs"
    printf '%s' "$commit" >"$cache/$repo/refs/$ref"
  fi
}

CACHE="$WORK/hf-cache"
add_snapshot "$CACHE" models--test-org--tiny-chat "$MAIN" main
add_snapshot "$CACHE" models--test-org--tiny-chat "$DEV" dev
check "snapshot files are symlinks, as the Hub cache makes them" -L "$CACHE/models--test-org--tiny-chat/snapshots/$MAIN/config.json"

# Served from the cache (HOME points elsewhere, so only HF_HUB_CACHE can have found it).
export HF_HUB_CACHE="$CACHE" HOME="$WORK/home"
unset HF_HOME XDG_CACHE_HOME HUGGINGFACE_HUB_CACHE
MODEL_DIR="$MODEL"
MODEL=test-org/tiny-chat
start_server hub
grep -q "from $CACHE/models--test-org--tiny-chat/snapshots/$MAIN" "$WORK/server-hub.log" &&
  pass "start-up line names the refs/main snapshot" || fail "snapshot not named: $(cat "$WORK/server-hub.log")"
models=$(curl -s --max-time 10 "$URL/v1/models")
python3 -c 'import json,sys; ids=[m["id"] for m in json.loads(sys.argv[1])["data"]]; sys.exit(0 if ids == ["test-org/tiny-chat"] else 1)' "$models" &&
  pass "/v1/models lists the name typed" || fail "/v1/models: $models"
code=$(curl -s -o "$WORK/comp.json" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
  -d '{"model":"test-org/tiny-chat","prompt":"Hello","max_tokens":4,"temperature":0}' "$URL/v1/completions")
check "a completion under the Hub name answers 200" "$code" = 200
stop_server "$SERVER_PID" TERM 20

# --revision: a branch name read from refs/dev, and a commit hash.
start_server hub-dev --revision dev
grep -q "snapshots/$DEV" "$WORK/server-hub-dev.log" && pass "--revision dev serves refs/dev's snapshot" ||
  fail "--revision dev: $(cat "$WORK/server-hub-dev.log")"
stop_server "$SERVER_PID" TERM 20

# Not in any cache: the error lists each root looked in, and the server never starts.
export HF_HUB_CACHE="$WORK/empty-cache" HF_HOME="$WORK/hf-home" HOME="$WORK/home2"
rc=0
timeout 60 "$BIN" serve --model test-org/not-downloaded --port 0 >"$WORK/missing.log" 2>&1 || rc=$?
check "a model missing from the cache fails to start" "$rc" -ne 0
for place in "$WORK/empty-cache/models--test-org--not-downloaded" \
  "$WORK/hf-home/hub/models--test-org--not-downloaded" \
  "$WORK/home2/.cache/huggingface/hub/models--test-org--not-downloaded"; do
  grep -qF "$place" "$WORK/missing.log" && pass "error lists $place" ||
    fail "error does not list $place: $(cat "$WORK/missing.log")"
done
grep -q "never downloads" "$WORK/missing.log" && pass "error says it never downloads" || fail "$(cat "$WORK/missing.log")"
check "no 'listening' line: nothing was served" "$(grep -c '^listening' "$WORK/missing.log" || true)" = 0

# A directory keeps working as before, and --revision with it is refused.
rc=0
timeout 60 "$BIN" serve --model "$MODEL_DIR" --revision dev --port 0 >"$WORK/dir-rev.log" 2>&1 || rc=$?
check "--revision with a directory is refused" "$rc" -ne 0
finish
