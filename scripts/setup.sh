#!/usr/bin/env bash
# Installs everything pagedserve needs on Debian 12 (no GPU), builds it into build/, and writes
# the default tiny model if it is not there yet. Safe to run again: each step is skipped when
# already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages. libopenblas0-openmp matters: without it Debian's libtorch runs its GEMMs on
# the reference BLAS, ~25x slower. python3-jinja2 checks our chat templates against Jinja;
# nodejs/npm run the reference clients (openai, @huggingface/tokenizers) in tests.
packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl
  libtorch-dev libopenblas0-openmp
  libcpp-httplib-dev libconcurrentqueue-dev nlohmann-json3-dev libpcre2-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jinja2
  # Test tools: Chromium drives the web chat page (through playwright-core; the WenQuanYi font
  # draws its Chinese text), tmux the terminal
  # chat, python3-torch writes real torch.save fixtures for `convert`, gnuplot draws bench
  # plots, clang brings libFuzzer and the sanitizer runtimes, ccache makes rebuilds cheap.
  chromium fonts-wqy-microhei tmux python3-torch gnuplot-nox clang libclang-rt-14-dev ccache
  nginx python3-yaml  # issue #20: scripts/serve-cluster.sh + replica tests; yaml reads deploy/k8s in a test
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere than Debian (e.g. a nodejs build that bundles npm, which then
# conflicts with Debian's npm package): install Debian's only when the commands are missing.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Test clients from npm, pinned by tests/js/package-lock.json.
if [ -f tests/js/package.json ] && [ ! -d tests/js/node_modules ]; then
  echo "setup: installing test clients from npm"
  npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi

# Build (Release).
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j"$(nproc)"

# The default model a newcomer's first command serves.
if [ ! -f models/tiny-random/config.json ]; then
  ./build/app/pagedserve make-tiny-model models/tiny-random
fi
echo "setup: done"
