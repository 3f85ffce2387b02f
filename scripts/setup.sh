#!/usr/bin/env bash
# The README's first command: installs what building and serving need on Debian 12 (no GPU),
# builds only the `pagedserve` binary into build/ (Release), writes the default tiny model if it
# is not there yet, and says how long it took. The test programs and the packages only tests use
# are scripts/test.sh's, so a user who only wants to serve does not wait for the test suite.
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths: relative to the checkout, a fresh clone in any folder (CI's) reuses
# what another checkout of the same code compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
source scripts/lib/install_packages.sh
t0=$(date +%s)

# No libtorch: the serving binary links none (docs/architecture.md); scripts/test.sh installs it
# for the tests' PyTorch reference and pagedserve-train. OpenBLAS's OpenMP flavour is the linear
# tuner's BLAS candidate (through cblas) and shares the kernels' one OpenMP pool. ccache makes
# rebuilds in fresh build dirs cheap (CMake uses it when found). libzmq + cppzmq + msgpack-cxx
# publish KV-cache events in vLLM's wire format (--kv-events-config; the routers that place
# requests by prefix read ZMQ and msgpack).
install_packages \
  build-essential cmake ninja-build pkg-config ccache \
  libopenblas-openmp-dev \
  libcpp-httplib-dev libconcurrentqueue-dev nlohmann-json3-dev libpcre2-dev libicu-dev \
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev
echo "setup: packages in $(elapsed_since "$t0")"
t_build=$(date +%s)

# Configured without tests and benchmarks, so neither GoogleTest nor Google Benchmark is needed.
# scripts/test.sh turns both on in this same directory: the objects built here are reused.
# An existing build dir keeps its options (after test.sh, running this again builds the binary
# only, without turning the tests off).
# The CUDA executor only where a GPU can run it: on a machine without one, compiling its kernels
# with nvcc would make the first command minutes longer for a path that cannot run there
# (scripts/test.sh builds them wherever nvcc is, so CI still compiles and links them).
cuda=OFF
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then cuda=ON; fi
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAGEDSERVE_TESTS=OFF \
    -DPAGEDSERVE_BENCH=OFF -DPAGEDSERVE_CUDA=$cuda
fi
cmake --build build -j"$(nproc)" --target pagedserve
echo "setup: configured and built in $(elapsed_since "$t_build")"

# The default model a newcomer's first command serves.
if [ ! -f models/tiny-random/config.json ]; then
  ./build/app/pagedserve make-tiny-model models/tiny-random
fi
echo "setup: done in $(elapsed_since "$t0") (build/app/pagedserve, models/tiny-random)"
