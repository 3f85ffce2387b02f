#!/usr/bin/env bash
# The whole test suite, the README's second command and what CI runs (.ci/run): the packages only
# tests use, scripts/setup.sh (serving packages, the binary, the default model), the npm test
# clients, every target (unit tests, benchmarks, tools) in the same build/; the sanitizer
# stage (scripts/sanitize.sh: unit tests and the HTTP tests under ASan+UBSan, the engine tests
# under TSan; it reuses the main build's torch objects through ccache); then every test through
# CTest — unit tests, the tokenizer cross-check against @huggingface/tokenizers, and the
# process-level tests that start the real binary on loopback. CTest runs last so its summary
# closes the output. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths: relative to the checkout, a fresh clone in any folder (CI's) reuses
# what another checkout of the same code compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
source scripts/lib/install_packages.sh
t0=$(date +%s)

# Test-only packages. GoogleTest and Google Benchmark build the test and micro-benchmark
# programs; python3-jinja2 checks our chat templates against Jinja; Chromium drives the web chat
# page (through playwright-core; the WenQuanYi font draws its Chinese text); tmux the terminal
# chat; python3-torch writes real torch.save fixtures for `convert`; gnuplot draws bench plots;
# clang brings libFuzzer and the sanitizer runtimes; curl and python3 are clients of the e2e
# tests; nodejs/npm run the reference clients (openai, @huggingface/tokenizers), fetched from
# npm over https (ca-certificates).
packages=(
  libtorch-dev  # the tests' PyTorch reference (reference/), pagedserve-train, .pth fixtures
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jinja2 python3-torch curl ca-certificates
  chromium fonts-wqy-microhei tmux gnuplot-nox clang libclang-rt-14-dev
  nginx python3-yaml  # the replica tests (scripts/serve-cluster.sh); yaml reads deploy/k8s
  jq  # e2e scripts read JSON with it
  # validates the structured-output corpus (e2e/structured_schema_corpus.sh) and our replies
  # against OpenAI's OpenAPI schemas (e2e/openai_schemas.sh)
  python3-jsonschema
  # the KV-cache event subscriber (e2e/kv_events.sh) decodes vLLM's format with them
  python3-zmq python3-msgpack
)
# Node.js may come from elsewhere than Debian (e.g. a nodejs build that bundles npm, which then
# conflicts with Debian's npm package): install Debian's only when the commands are missing.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
install_packages "${packages[@]}"

# Serving packages, the binary and the default model (the README's first command).
bash scripts/setup.sh

# Test clients from npm, pinned by tests/js/package-lock.json.
if [ -f tests/js/package.json ] && [ ! -d tests/js/node_modules ]; then
  echo "test: installing test clients from npm"
  npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi

# The tests and benchmarks in setup.sh's build dir: what it compiled is not compiled again.
# The CUDA executor is compiled and its host side tested wherever nvcc is, GPU or not (setup.sh
# leaves it out on a machine without a GPU).
cuda=OFF
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then cuda=ON; fi
if ! grep -q '^PAGEDSERVE_TESTS:BOOL=ON$' build/CMakeCache.txt ||
  ! grep -q '^PAGEDSERVE_BENCH:BOOL=ON$' build/CMakeCache.txt ||
  ! grep -q "^PAGEDSERVE_CUDA:BOOL=$cuda\$" build/CMakeCache.txt; then
  cmake -S . -B build -DPAGEDSERVE_TESTS=ON -DPAGEDSERVE_BENCH=ON -DPAGEDSERVE_CUDA=$cuda
fi
cmake --build build -j"$(nproc)"
echo "test: installed and built in $(elapsed_since "$t0")"

# Tests compare outputs exactly across batches (seeded sampling alone vs batched, streamed vs
# not); only our packed kernel gives a row the same bits whatever the batch, while the
# autotuner (--kernel auto, the default) may pick OpenBLAS for some batch sizes on a loaded
# machine. So every process the tests start defaults to the packed kernel; the tuner has its
# own tests, which ask for --kernel auto explicitly. Its cache stays in the build dir.
export PAGEDSERVE_KERNEL=packed
export PAGEDSERVE_TUNING_CACHE="$PWD/build/linear-tuning.json"

bash scripts/sanitize.sh
cd build
ctest --output-on-failure --timeout 900 -j2 "$@"
