#!/usr/bin/env bash
# Compiles every CUDA kernel (cuda/*.cu, sm_90 machine code + compute_90 PTX) and the
# kernel test program with the CUDA Toolkit, warnings as errors, so a kernel that does not
# compile fails CI even on machines without a GPU. Then runs the kernel test program: on a
# GPU machine it must print ALL PASSED; without one it must say plainly that nothing was tested.
# Usage (CTest): bash tests/e2e/cuda_kernels_compile.sh <pagedserve-binary> <build-dir>
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build_dir="${2:?usage: cuda_kernels_compile.sh <pagedserve-binary> <build-dir>}"

nvcc="${CUDACXX:-$(command -v nvcc || true)}"
if [[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]]; then nvcc=/usr/local/cuda/bin/nvcc; fi
if [[ -z "$nvcc" ]]; then
  echo "SKIPPED: nvcc not found (set CUDACXX or put the CUDA Toolkit's bin/ on PATH)"
  exit 0
fi
echo "nvcc: $nvcc ($("$nvcc" --version | tail -1))"

out="$build_dir/cuda-kernels"
mkdir -p "$out"
cmake -S "$root/cuda" -B "$out" -G Ninja -DCMAKE_CUDA_COMPILER="$nvcc" >"$out/configure.log" 2>&1 || {
  cat "$out/configure.log"
  echo "FAIL: configuring cuda (log above)"
  exit 1
}
start=$SECONDS
cmake --build "$out" -j2
echo "built cuda + kernel_test in $((SECONDS - start)) s"

# Every .cu must have become an object: a file the glob missed would go untested.
for cu in "$root"/cuda/*.cu; do
  obj="$(find "$out" -name "$(basename "$cu").o" | head -1)"
  [[ -n "$obj" ]] || { echo "FAIL: no object for $cu"; exit 1; }
done

set +e
log="$("$out/kernel_test" 2>&1)"
rc=$?
set -e
echo "$log"
if grep -q '^NO GPU:' <<<"$log"; then
  [[ $rc -eq 0 ]] || { echo "FAIL: kernel_test without a GPU should exit 0, got $rc"; exit 1; }
  echo "kernels compiled; NOT run (no GPU here): scripts/device-check.sh runs them on a GPU"
  exit 0
fi
[[ $rc -eq 0 ]] && grep -q '^ALL PASSED' <<<"$log" || { echo "FAIL: kernel_test (rc $rc)"; exit 1; }
