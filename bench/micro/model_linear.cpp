// The runner's packed-panel linear vs at::linear (OpenBLAS sgemm) on the projection shapes of
// the default tiny model (qkv 512 -> 768, gate/up 512 -> 2816, down 1408 -> 512, lm_head
// 512 -> 6400), hot (weight in cache) and cold (cycling through weights larger than L3, as a
// real decode step streams them from DRAM), M = 1 (batch-1 decode) to 512 (a prefill chunk).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "model/packed_linear.h"

namespace {

struct Shapes {
  at::Tensor x, w, y;
  Shapes(int64_t m, int64_t k, int64_t n)
      : x(at::randn({m, k})), w(at::randn({n, k})), y(at::empty({m, n})) {}
};

void report(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * k * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["GB/s(w)"] = benchmark::Counter(
      4.0 * k * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_AtLinear(benchmark::State& state, int64_t k, int64_t n) {
  const int64_t m = state.range(0);
  Shapes s(m, k, n);
  for (auto _ : state) {
    at::Tensor y = at::linear(s.x, s.w);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  report(state, m, k, n);
}

// The weights of a real decode step do not fit in L3 (the tiny model is 103 MB): cycle through
// 24 weight matrices (138 MB) so every call streams its weight from DRAM.
struct ColdWeights {
  static constexpr int kCopies = 24;
  std::vector<at::Tensor> w;
  at::Tensor x, y;
  ColdWeights(int64_t m, int64_t k, int64_t n) : x(at::randn({m, k})), y(at::empty({m, n})) {
    for (int i = 0; i < kCopies; ++i) w.push_back(at::randn({n, k}));
  }
};

void BM_AtLinearCold(benchmark::State& state, int64_t k, int64_t n) {
  const int64_t m = state.range(0);
  ColdWeights c(m, k, n);
  int i = 0;
  for (auto _ : state) {
    at::Tensor y = at::linear(c.x, c.w[i++ % ColdWeights::kCopies]);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  report(state, m, k, n);
}

// The weight packed once (as the model runner does at load), then the product per iteration.
void BM_Packed(benchmark::State& state, int64_t k, int64_t n) {
  const int64_t m = state.range(0);
  Shapes s(m, k, n);
  const ps::PackedWeight w(s.w.data_ptr<float>(), n, k);
  ps::PackedLinearArgs a;
  a.x = s.x.data_ptr<float>();
  a.w = &w;
  a.y = s.y.data_ptr<float>();
  a.m = m;
  for (auto _ : state) {
    ps::packed_linear(a);
    benchmark::ClobberMemory();
  }
  state.SetLabel(ps::packed_linear_isa());
  report(state, m, k, n);
}

void BM_PackedCold(benchmark::State& state, int64_t k, int64_t n) {
  const int64_t m = state.range(0);
  ColdWeights c(m, k, n);
  std::vector<ps::PackedWeight> w;
  for (const at::Tensor& t : c.w) w.emplace_back(t.data_ptr<float>(), n, k);
  ps::PackedLinearArgs a;
  a.x = c.x.data_ptr<float>();
  a.y = c.y.data_ptr<float>();
  a.m = m;
  int i = 0;
  for (auto _ : state) {
    a.w = &w[i++ % ColdWeights::kCopies];
    ps::packed_linear(a);
    benchmark::ClobberMemory();
  }
  report(state, m, k, n);
}

void Ms(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 2, 4, 8, 12, 16, 24, 32, 64, 128, 512}) b->Arg(m);
  b->Unit(benchmark::kMicrosecond)->UseRealTime();  // wall time: the work is on all cores
}

BENCHMARK_CAPTURE(BM_AtLinear, up_512x2816, 512, 2816)->Apply(Ms);
BENCHMARK_CAPTURE(BM_AtLinearCold, up_512x2816, 512, 2816)->Apply(Ms);
BENCHMARK_CAPTURE(BM_AtLinear, lm_head_512x6400, 512, 6400)->Apply(Ms);
BENCHMARK_CAPTURE(BM_Packed, up_512x2816, 512, 2816)->Apply(Ms);
BENCHMARK_CAPTURE(BM_PackedCold, up_512x2816, 512, 2816)->Apply(Ms);
BENCHMARK_CAPTURE(BM_Packed, lm_head_512x6400, 512, 6400)->Apply(Ms);
BENCHMARK_CAPTURE(BM_AtLinear, qkv_512x768, 512, 768)->Apply(Ms);
BENCHMARK_CAPTURE(BM_Packed, qkv_512x768, 512, 768)->Apply(Ms);
BENCHMARK_CAPTURE(BM_AtLinear, down_1408x512, 1408, 512)->Apply(Ms);
BENCHMARK_CAPTURE(BM_Packed, down_1408x512, 1408, 512)->Apply(Ms);

}  // namespace

int main(int argc, char** argv) {
  // The machine's cores, as the engine runs; OMP_NUM_THREADS=1 measures one core.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
