// The runner's packed-panel linear on every kernel ISA this CPU can run (forced: an AVX-512
// machine still measures its AVX2 path) next to OpenBLAS through ATen (sgemv at M = 1, as the
// autotuner's BLAS candidate runs it, sgemm above), on the projection shapes of the default tiny
// model (qkv 512 -> 768, o 512 -> 512, gate/up 512 -> 2816, down 1408 -> 512, lm_head
// 512 -> 6400), M = 1 (batch-1 decode) to 512 (a prefill chunk). Weights cycle through copies
// larger than the whole tiny model, as a decode step streams them.
//
// After the Google Benchmark table it prints one summary per shape, measured in this run:
// GFLOP/s of each candidate, packed/BLAS ratios, and at M = 1 the weight-read GB/s as a fraction
// of this machine's read bandwidth (probe_machine, same run).
//
//   build/bench/bench_model_linear [--shapes=NxK,...] [--benchmark_min_time=0.2]
//       [--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/blas_core.h"
#include "kernels/kernel_isa.h"
#include "kernels/machine_probe.h"
#include "kernels/packed_linear.h"

namespace {

struct Shape {
  std::string name;
  int64_t n, k;
};

// (shape, m, candidate) -> (iterations, seconds per call) of every run, filled by the
// benchmarks. Google Benchmark also calls a benchmark with fewer iterations while it sizes the
// run; the measured runs are those with the most. The summary reads their median, so one
// repetition a noisy neighbour hit does not decide a ratio (with --benchmark_repetitions=3
// --benchmark_enable_random_interleaving=true, as bench/isa_report.sh runs it, a burst lands
// on one repetition of a cell, not on all three).
std::map<std::tuple<std::string, int64_t, std::string>,
         std::vector<std::pair<benchmark::IterationCount, double>>>
    g_seconds;

double median_of_measured(const std::vector<std::pair<benchmark::IterationCount, double>>& runs) {
  benchmark::IterationCount most = 0;
  for (const auto& r : runs) most = std::max(most, r.first);
  std::vector<double> v;
  for (const auto& r : runs) {
    if (r.first == most) v.push_back(r.second);
  }
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

constexpr int kCopies = 24;

struct ColdWeights {
  std::vector<at::Tensor> w;
  at::Tensor x, y;
  ColdWeights(int64_t m, int64_t k, int64_t n) : x(at::randn({m, k})), y(at::empty({m, n})) {
    for (int i = 0; i < kCopies; ++i) w.push_back(at::randn({n, k}));
  }
};

void report(benchmark::State& state, int64_t m, int64_t k, int64_t n, const Shape& s,
            const std::string& who, double seconds) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * m * k * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["GB/s(w)"] = benchmark::Counter(
      4.0 * k * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.SetLabel(who);
  if (state.iterations() > 0) {
    g_seconds[{s.name, m, who}].emplace_back(state.iterations(),
                                             seconds / double(state.iterations()));
  }
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void BM_Blas(benchmark::State& state, Shape s) {
  const int64_t m = state.range(0);
  ColdWeights c(m, s.k, s.n);
  int i = 0;
  const double t0 = now();
  for (auto _ : state) {
    const at::Tensor& w = c.w[i++ % kCopies];
    if (m == 1) {
      at::Tensor y = at::mv(w, c.x[0]);
      benchmark::DoNotOptimize(y.data_ptr<float>());
    } else {
      at::Tensor y = at::linear(c.x, w);
      benchmark::DoNotOptimize(y.data_ptr<float>());
    }
  }
  report(state, m, s.k, s.n, s, "blas", now() - t0);
}

void BM_Packed(benchmark::State& state, Shape s, ps::KernelIsa isa) {
  const int64_t m = state.range(0);
  ColdWeights c(m, s.k, s.n);
  std::vector<ps::PackedWeight> w;
  for (const at::Tensor& t : c.w) w.emplace_back(t.data_ptr<float>(), s.n, s.k);
  c.w.clear();
  ps::PackedLinearArgs a;
  a.x = c.x.data_ptr<float>();
  a.y = c.y.data_ptr<float>();
  a.m = m;
  int i = 0;
  const double t0 = now();
  for (auto _ : state) {
    a.w = &w[i++ % kCopies];
    ps::packed_linear_on(a, isa);
    benchmark::ClobberMemory();
  }
  report(state, m, s.k, s.n, s, std::string("packed-") + ps::kernel_isa_name(isa), now() - t0);
}

const std::vector<int64_t> kMs = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

std::vector<Shape> parse_shapes(int* argc, char** argv) {
  std::vector<Shape> shapes = {{"qkv_512x768", 768, 512},
                               {"o_512x512", 512, 512},
                               {"up_512x2816", 2816, 512},
                               {"down_1408x512", 512, 1408},
                               {"lm_head_512x6400", 6400, 512}};
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--shapes=", 9) != 0) continue;
    shapes.clear();
    std::string list = argv[i] + 9;
    size_t pos = 0;
    while (pos < list.size()) {
      const size_t comma = list.find(',', pos);
      const std::string item = list.substr(pos, comma == std::string::npos ? comma : comma - pos);
      long n = 0, k = 0;
      if (std::sscanf(item.c_str(), "%ldx%ld", &n, &k) != 2 || n <= 0 || k <= 0) {
        std::fprintf(stderr, "bench_model_linear: --shapes wants NxK,... (out x in), got '%s'\n",
                     item.c_str());
        std::exit(2);
      }
      shapes.push_back({"custom_" + std::to_string(k) + "x" + std::to_string(n), n, k});
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    for (int j = i; j + 1 < *argc; ++j) argv[j] = argv[j + 1];
    --*argc;
    break;
  }
  return shapes;
}

void print_summary(const std::vector<Shape>& shapes) {
  // The candidates this run measured (a --benchmark_filter may leave some out).
  auto measured = [](const std::string& w) {
    for (const auto& entry : g_seconds) {
      if (std::get<2>(entry.first) == w) return true;
    }
    return false;
  };
  std::vector<std::string> who;
  for (ps::KernelIsa isa : ps::runnable_kernel_isas()) {
    const std::string w = std::string("packed-") + ps::kernel_isa_name(isa);
    if (measured(w)) who.push_back(w);
  }
  who.push_back("blas");
  std::printf(
      "\nSummary (this run, %d threads, kernel ISA %s by default, OpenBLAS core %s). GFLOP/s "
      "per candidate (the median of its repetitions); <isa>/blas = blas time / packed time (>1: "
      "packed faster). At M = 1 also "
      "the weight bytes read per second, as a %% of the read bandwidth over a buffer as large "
      "as that shape's %d cycled copies (the same memory level), measured in this run.\n",
      at::get_num_threads(), ps::kernel_isa_name(ps::active_kernel_isa()),
      ps::blas_core_name().c_str(), kCopies);
  for (const Shape& s : shapes) {
    const double bandwidth_gbs = ps::measure_read_bandwidth(kCopies * 4 * s.n * s.k);
    std::printf("%s (n %ld, k %ld; read bandwidth %.1f GB/s over %.0f MB)\n  %5s", s.name.c_str(),
                long(s.n), long(s.k), bandwidth_gbs, kCopies * 4.0 * s.n * s.k / 1e6, "M");
    for (const std::string& w : who) std::printf(" %14s", w.c_str());
    for (size_t i = 0; i + 1 < who.size(); ++i)
      std::printf(" %12s", (who[i].substr(7) + "/blas").c_str());
    std::printf("\n");
    for (int64_t m : kMs) {
      auto get = [&](const std::string& w) {
        auto it = g_seconds.find({s.name, m, w});
        return it == g_seconds.end() ? 0.0 : median_of_measured(it->second);
      };
      if (get("blas") == 0.0) continue;
      std::printf("  %5ld", long(m));
      for (const std::string& w : who) {
        const double t = get(w);
        std::printf(" %14.1f", t > 0 ? 2.0 * m * s.k * s.n / t / 1e9 : 0.0);
      }
      for (size_t i = 0; i + 1 < who.size(); ++i) {
        const double t = get(who[i]);
        std::printf(" %12.2f", t > 0 ? get("blas") / t : 0.0);
      }
      std::printf("\n");
      if (m == 1) {
        std::printf("  %5s", "GB/s");
        for (const std::string& w : who) {
          const double t = get(w);
          std::printf(
              " %14s",
              t > 0 ? (std::to_string(int(4.0 * s.k * s.n / t / 1e9 + 0.5)) + " (" +
                       std::to_string(int(100 * 4.0 * s.k * s.n / t / 1e9 / bandwidth_gbs)) + "%)")
                          .c_str()
                    : "-");
        }
        std::printf("   (%% of read bandwidth)\n");
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The machine's cores, as the engine runs; OMP_NUM_THREADS=1 measures one core.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  const std::vector<Shape> shapes = parse_shapes(&argc, argv);
  // Candidates of one (shape, M) run back to back, so a noisy neighbour hits them alike.
  for (const Shape& s : shapes) {
    for (int64_t m : kMs) {
      for (ps::KernelIsa isa : ps::runnable_kernel_isas()) {
        benchmark::RegisterBenchmark(
            ("BM_Packed_" + std::string(ps::kernel_isa_name(isa)) + "/" + s.name).c_str(),
            [s, isa](benchmark::State& st) { BM_Packed(st, s, isa); })
            ->Arg(m)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();  // wall time: the work is on all cores
      }
      benchmark::RegisterBenchmark(("BM_Blas/" + s.name).c_str(),
                                   [s](benchmark::State& st) { BM_Blas(st, s); })
          ->Arg(m)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary(shapes);
  return 0;
}
