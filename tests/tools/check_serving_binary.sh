#!/usr/bin/env bash
# The serving binary carries no training stack: `ldd` of pagedserve lists no libtorch, libc10,
# caffe2 or OpenCV library (issue #32: with them every process paid ~1.4 s and ~165 MB before
# reading a weight), and its --help answers. Timings are benchmarks, not asserted here; the note
# and docs/performance.md give them.
#
#   bash tests/tools/check_serving_binary.sh BUILD/app/pagedserve
set -euo pipefail
BIN=${1:?usage: check_serving_binary.sh PATH/TO/pagedserve}
[[ -x "$BIN" ]] || { echo "FAIL: $BIN is not an executable"; exit 1; }
libs=$(ldd "$BIN")
bad=$(grep -iE 'libtorch|libc10|caffe2|opencv|libgomp-[0-9a-f]{8}' <<<"$libs" || true)
if [[ -n "$bad" ]]; then
  echo "FAIL: $BIN links libraries the serve path must not carry:"
  echo "$bad"
  exit 1
fi
echo "ok: $(wc -l <<<"$libs") shared libraries, none of libtorch/c10/caffe2/OpenCV"
# The commands that need libtorch name the binary that has them.
out=$("$BIN" train-tiny 2>&1 || true)
grep -q "pagedserve-train" <<<"$out" || { echo "FAIL: train-tiny did not point at pagedserve-train: $out"; exit 1; }
"$BIN" --help >/dev/null 2>&1 || { echo "FAIL: $BIN --help exited non-zero"; exit 1; }
echo "ok: --help answers; train-tiny points at pagedserve-train"
echo "2 passed, 0 failed"
