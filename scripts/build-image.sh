#!/usr/bin/env bash
# Builds the runtime image of deploy/container/Containerfile without pulling from any registry,
# runs it, and probes /health and one completion (issue #39):
#   1. scripts/setup.sh builds `pagedserve` on this Debian 12 host (the Containerfile's build
#      stage does the same inside a container);
#   2. mmdebstrap writes a minimal Debian 12 root from the package mirror with only the runtime
#      packages below (the Containerfile's runtime stage), and the binary and models/tiny go in;
#   3. with podman or buildah, the root is imported as pagedserve:latest and run; without them
#      (no container runtime on this machine), the same root runs under chroot in new mount and
#      PID namespaces (unshare), which needs root. The script says which one ran.
# Prints the root's size and the image tarball's.
#
#   sudo bash scripts/build-image.sh [OUT_DIR (default: build/image)]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/image}
# What `pagedserve` links (ldd), by Debian package; keep in step with the Containerfile.
RUNTIME_PACKAGES=libcpp-httplib0.11,libopenblas0-openmp,libgomp1,libpcre2-8-0,libicu72,libzmq5
PORT=${PAGEDSERVE_IMAGE_PORT:-18080}
t0=$(date +%s)

bash scripts/setup.sh >/dev/null
command -v mmdebstrap >/dev/null || {
  echo "build-image: mmdebstrap is missing (apt-get install mmdebstrap)" >&2
  exit 1
}

ROOT="$OUT/rootfs"
rm -rf "$ROOT" "$OUT/pagedserve-image.tar"
mkdir -p "$OUT"
mmdebstrap --quiet --variant=minbase --include="$RUNTIME_PACKAGES" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$ROOT"
install -D -m 755 build/app/pagedserve "$ROOT/usr/local/bin/pagedserve"
mkdir -p "$ROOT/models"
cp -r models/tiny "$ROOT/models/tiny"
tar -C "$ROOT" -cf "$OUT/pagedserve-image.tar" .
echo "build-image: runtime root $(du -sh "$ROOT" | cut -f1), tarball $(du -h "$OUT/pagedserve-image.tar" | cut -f1)"

LOG="$OUT/serve.log"
run_with=""
if command -v podman >/dev/null 2>&1 || command -v buildah >/dev/null 2>&1; then
  tool=$(command -v podman || command -v buildah)
  "$tool" import --change 'ENTRYPOINT ["/usr/local/bin/pagedserve","serve","--host","0.0.0.0","--port","8000"]' \
    --change 'CMD ["--model","/models/tiny"]' "$OUT/pagedserve-image.tar" pagedserve:latest
  run_with="$(basename "$tool")"
  podman run --rm -d --name pagedserve-image-check -p "$PORT:8000" pagedserve:latest >"$LOG"
  stop() { podman stop pagedserve-image-check >/dev/null 2>&1 || true; }
else
  run_with="chroot (unshare --mount --pid --fork): no podman or buildah here"
  unshare --mount --pid --fork --kill-child=SIGTERM chroot "$ROOT" /usr/local/bin/pagedserve serve \
    --model /models/tiny --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
  pid=$!
  # unshare blocks SIGTERM while it waits: the server (its child) gets it, and unshare ends with it.
  stop() { pkill -TERM -P "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
fi
trap stop EXIT
ok=""
for _ in $(seq 1 600); do
  if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$PORT/health") == 200 ]]; then
    ok=1
    break
  fi
  sleep 0.2
done
[[ -n "$ok" ]] || {
  echo "build-image: the image never became healthy ($run_with):" >&2
  cat "$LOG" >&2
  exit 1
}
reply=$(curl -s --max-time 60 -H 'Content-Type: application/json' \
  -d '{"prompt":"Once upon a time","max_tokens":8,"temperature":0}' "http://127.0.0.1:$PORT/v1/completions")
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["usage"]["completion_tokens"] > 0, r' \
  "$reply" || {
  echo "build-image: the completion failed: $reply" >&2
  exit 1
}
echo "build-image: served /health and a completion with $run_with"
echo "build-image: done in $(($(date +%s) - t0)) s"
