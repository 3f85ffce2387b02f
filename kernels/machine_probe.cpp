#include "kernels/machine_probe.h"

#include "kernels/kernel_isa.h"

#include <cblas.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "kernels/packed_linear.h"
#include "kernels/parallel_for.h"
#include "kernels/runner_simd.h"

namespace ps {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sums [begin, end) (a multiple of 32 floats) with 4 independent 8-float accumulators: 32
// floats in flight, so the loop is bound by the memory system, not by add latency (the scalar
// 4-accumulator loop this replaced measured its own add chain, ~4 bytes per cycle per core).
// Compiled per kernel ISA like the kernels, so the vectors are registers of the ISA in use.
PS_INLINE void sum_floats_body(const float* p, size_t n, float* out) {
  F32x8 a{}, b{}, c{}, d{};
  for (size_t i = 0; i < n; i += 32) {
    a += load8(p + i);
    b += load8(p + i + 8);
    c += load8(p + i + 16);
    d += load8(p + i + 24);
  }
  *out = hsum8((a + b) + (c + d));
}
PS_ISA_DISPATCH(sum_floats, (const float* p, size_t n, float* out), (p, n, out))

double measure_bandwidth(int64_t bytes) {
  bytes = std::max<int64_t>(bytes, int64_t{1} << 20);
  const size_t n = size_t(bytes) / sizeof(float) / 32 * 32;
  std::vector<float> buf(n, 1.0f);
  // The kernels' own OpenMP pool: separate std::threads would compete with its workers, which
  // spin for a while after each parallel region unless OMP_WAIT_POLICY=passive.
  const int64_t threads = std::max(1, parallel_threads());
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<float> partial(size_t(threads), 0.f);
    auto t0 = std::chrono::steady_clock::now();
    parallel_for(0, threads, 1, [&](int64_t t0_, int64_t t1_) {
      for (int64_t t = t0_; t < t1_; ++t) {
        const size_t begin = n * size_t(t) / size_t(threads) / 32 * 32;
        const size_t end = n * size_t(t + 1) / size_t(threads) / 32 * 32;
        sum_floats(buf.data() + begin, end - begin, &partial[size_t(t)]);
      }
    });
    double secs = seconds_since(t0);
    volatile float sink = 0;
    for (float p : partial) sink = sink + p;
    best = std::max(best, static_cast<double>(n * sizeof(float)) / secs / 1e9);
  }
  return best;
}

std::vector<float> random_floats(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

double measure_blas_gemm() {
  const int64_t m = 512, n = 2048, k = 2048;
  const std::vector<float> a = random_floats(m * k), b = random_floats(k * n);
  std::vector<float> c(size_t(m * n));
  auto mm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(m), blasint(n), blasint(k), 1.0f,
                a.data(), blasint(k), b.data(), blasint(n), 0.0f, c.data(), blasint(n));
  };
  mm();  // warm-up
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    mm();
    double secs = seconds_since(t0);
    best = std::max(best, 2.0 * m * n * k / secs / 1e9);
  }
  return best;
}

// Our packed kernel on one 512 x 2048 x 2048 GEMM: fp32 panels, or bf16_pairs / i8_quads (the
// bf16 and int8 dot products of --compute-dtype bfloat16 / int8).
double measure_packed_gemm(PanelFormat format = PanelFormat::f32) {
  const int64_t m = 512, n = 2048, k = 2048;
  const std::vector<float> x = random_floats(m * k), w = random_floats(n * k);
  std::vector<float> y(size_t(m * n));
  const PackedWeight packed = format == PanelFormat::f32
                                  ? PackedWeight(w.data(), n, k)
                                  : PackedWeight(w.data(), PanelFormat::f32, n, k, format);
  PackedLinearArgs a;
  a.x = x.data();
  a.w = &packed;
  a.y = y.data();
  a.m = m;
  packed_linear(a);  // warm-up
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    packed_linear(a);
    best = std::max(best, 2.0 * m * n * k / seconds_since(t0) / 1e9);
  }
  return best;
}

}  // namespace

double measure_read_bandwidth(int64_t bytes) {
  return measure_bandwidth(bytes);
}

MachineLimits probe_machine(int64_t working_set_bytes, ComputeDtype compute) {
  MachineLimits m;
  m.bandwidth_buffer_bytes = working_set_bytes > 0
                                 ? std::max<int64_t>(working_set_bytes, int64_t{32} << 20)
                                 : int64_t{512} << 20;
  m.read_bandwidth_gbs = measure_bandwidth(m.bandwidth_buffer_bytes);
  m.blas_gemm_gflops = measure_blas_gemm();
  m.packed_gemm_gflops = measure_packed_gemm();
  m.packed_isa = packed_linear_isa();
  m.gemm_gflops = std::max(m.blas_gemm_gflops, m.packed_gemm_gflops);
  if (compute == ComputeDtype::bf16 && bf16_dot_products_on(active_kernel_isa())) {
    m.bf16_gemm_gflops = measure_packed_gemm(PanelFormat::bf16_pairs);
  }
  if (compute == ComputeDtype::int8 && int8_dot_products_on(active_kernel_isa())) {
    m.int8_gemm_gops = measure_packed_gemm(PanelFormat::i8_quads);
  }
  return m;
}

int64_t weight_bytes(const ModelConfig& c) {
  const int64_t h = c.hidden_size, hd = c.head_dim;
  const int64_t q = int64_t{c.num_attention_heads} * hd, kv = int64_t{c.num_key_value_heads} * hd;
  int64_t params = int64_t{c.vocab_size} * h + h;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    params += h * (q + 2 * kv) + q * h + mlp_params(c, l, /*active=*/false) + 2 * h;
  }
  if (!c.tie_word_embeddings) params += int64_t{c.vocab_size} * h;
  return params * 4;
}

int64_t matmul_flops_per_token(const ModelConfig& c) {
  const int64_t h = c.hidden_size, hd = c.head_dim;
  const int64_t q = int64_t{c.num_attention_heads} * hd, kv = int64_t{c.num_key_value_heads} * hd;
  int64_t params = int64_t{c.vocab_size} * h;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {  // only the experts a token uses
    params += h * (q + 2 * kv) + q * h + mlp_params(c, l, /*active=*/true);
  }
  return 2 * params;
}

}  // namespace ps
