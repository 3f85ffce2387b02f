#include "model/machine_probe.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <thread>
#include <vector>

namespace ps {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double measure_bandwidth() {
  const size_t n = size_t{256} << 20 >> 2;  // 256 MiB of floats
  std::vector<float> buf(n, 1.0f);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<double> partial(threads, 0.0);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        size_t begin = n * t / threads, end = n * (t + 1) / threads;
        float a = 0, b = 0, c = 0, d = 0;
        for (size_t i = begin; i + 4 <= end; i += 4) {
          a += buf[i];
          b += buf[i + 1];
          c += buf[i + 2];
          d += buf[i + 3];
        }
        partial[t] = a + b + c + d;
      });
    }
    for (auto& th : pool) th.join();
    double secs = seconds_since(t0);
    volatile double sink = 0;
    for (double p : partial) sink = sink + p;
    best = std::max(best, static_cast<double>(n * sizeof(float)) / secs / 1e9);
  }
  return best;
}

double measure_gemm() {
  const int64_t m = 512, n = 2048, k = 2048;
  at::Tensor a = at::randn({m, k}), b = at::randn({k, n});
  at::Tensor c = at::mm(a, b);  // warm-up
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    c = at::mm(a, b);
    double secs = seconds_since(t0);
    best = std::max(best, 2.0 * m * n * k / secs / 1e9);
  }
  return best;
}

}  // namespace

MachineLimits probe_machine() {
  return MachineLimits{measure_bandwidth(), measure_gemm()};
}

int64_t weight_bytes(const ModelConfig& c) {
  const int64_t h = c.hidden_size, hd = c.head_dim;
  const int64_t q = int64_t{c.num_attention_heads} * hd, kv = int64_t{c.num_key_value_heads} * hd;
  int64_t per_layer = h * (q + 2 * kv) + q * h + 3 * h * c.intermediate_size + 2 * h;
  int64_t params = per_layer * c.num_hidden_layers + int64_t{c.vocab_size} * h + h;
  if (!c.tie_word_embeddings) params += int64_t{c.vocab_size} * h;
  return params * 4;
}

int64_t matmul_flops_per_token(const ModelConfig& c) {
  const int64_t h = c.hidden_size, hd = c.head_dim;
  const int64_t q = int64_t{c.num_attention_heads} * hd, kv = int64_t{c.num_key_value_heads} * hd;
  int64_t per_layer = h * (q + 2 * kv) + q * h + 3 * h * c.intermediate_size;
  return 2 * (per_layer * c.num_hidden_layers + int64_t{c.vocab_size} * h);
}

}  // namespace ps
