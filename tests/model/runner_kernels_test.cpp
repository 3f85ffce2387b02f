// The runner's raw kernels against double-precision loops: the fused RMSNorm / SiLU-and-mul /
// qk-norm + RoPE passes, and exp8 (the projections' kernel: packed_linear_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cpu/runner_ops.h"
#include "kernels/runner_simd.h"

namespace ps {
namespace {

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(RunnerSimd, Exp8IsAccurateOverTheSoftmaxRange) {
  double worst = 0;
  for (float x = -87.f; x <= 88.f; x += 0.0137f) {
    const F32x8 in = {x, x * 0.5f, -x * 0.25f, x / 3, 0.f, -0.5f, x * 0.01f, -x};
    const F32x8 out = exp8(in);
    for (int l = 0; l < 8; ++l) {
      const double ref = std::exp(double(in[l]));
      if (in[l] > -80) worst = std::max(worst, std::abs(out[l] - ref) / ref);
    }
  }
  EXPECT_LT(worst, 5e-7);
  const F32x8 big = exp8(splat8(-1e30f));
  EXPECT_GE(big[0], 0.f);
  EXPECT_LT(big[0], 1e-37f);
}

TEST(RunnerOps, RmsNormWithRowGather) {
  const int64_t width = 45, rows = 5;
  const auto x = randn(size_t(rows * width), 5, 3.f);
  const auto w = randn(size_t(width), 6);
  const std::vector<int32_t> pick{4, 0, 2};
  std::vector<float> y(pick.size() * width);
  rms_norm_rows(x.data(), width, pick.data(), int64_t(pick.size()), width, w.data(), 1e-5f,
                y.data(), width);
  for (size_t r = 0; r < pick.size(); ++r) {
    const float* xr = &x[pick[r] * width];
    double ss = 0;
    for (int64_t i = 0; i < width; ++i) ss += double(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt(ss / width + 1e-5);
    for (int64_t i = 0; i < width; ++i) EXPECT_NEAR(y[r * width + i], xr[i] * inv * w[i], 1e-5);
  }
}

TEST(RunnerOps, SiluMul) {
  const int64_t inter = 19, rows = 3;
  const auto gu = randn(size_t(rows * 2 * inter), 7, 4.f);
  std::vector<float> out(rows * inter);
  silu_mul_rows(gu.data(), rows, inter, out.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < inter; ++j) {
      const double g = gu[r * 2 * inter + j], u = gu[r * 2 * inter + inter + j];
      EXPECT_NEAR(out[r * inter + j], g / (1 + std::exp(-g)) * u, 1e-5);
    }
  }
}

// gpt-oss's expert activation: values well past the limit on both sides (std 12 around 0), so
// the gate's upper clamp, both of up's clamps and the unclamped middle all occur.
TEST(RunnerOps, ClampedSwigluClampsGateAboveAndUpBothWays) {
  const int64_t inter = 37, rows = 4;
  const float limit = 7.0f, alpha = 1.702f;
  const auto gu = randn(size_t(rows * 2 * inter), 11, 12.f);
  std::vector<float> out(rows * inter);
  clamped_swiglu_rows(gu.data(), rows, inter, limit, alpha, out.data());
  int gate_clamped = 0, up_low = 0, up_high = 0, gate_negative = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < inter; ++j) {
      double g = gu[r * 2 * inter + j], u = gu[r * 2 * inter + inter + j];
      gate_clamped += g > limit;
      gate_negative += g < -limit;  // not clamped below: the sigmoid takes it towards 0
      up_low += u < -limit;
      up_high += u > limit;
      g = std::min<double>(g, limit);
      u = std::clamp<double>(u, -limit, limit);
      EXPECT_NEAR(out[r * inter + j], (u + 1) * g / (1 + std::exp(-alpha * g)), 1e-4);
    }
  }
  EXPECT_GT(gate_clamped, 0);
  EXPECT_GT(gate_negative, 0);
  EXPECT_GT(up_low, 0);
  EXPECT_GT(up_high, 0);
}

TEST(RunnerOps, QkNormThenNeoxRope) {
  const int32_t H = 2, KV = 1, D = 20, half = D / 2;
  const int64_t ld = (H + 2 * KV) * D + 3;
  auto qkv = randn(size_t(2 * ld), 8, 2.f);
  const auto before = qkv;
  const auto qn = randn(D, 9), kn = randn(D, 10);
  std::vector<float> cos(2 * half), sin(2 * half);
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < half; ++i) {
      const double angle = (r + 3) * std::pow(10000.0, -2.0 * i / D);
      cos[r * half + i] = float(std::cos(angle));
      sin[r * half + i] = float(std::sin(angle));
    }
  }
  QkRopeArgs a;
  a.qkv = qkv.data();
  a.ld = ld;
  a.rows = 2;
  a.num_heads = H;
  a.num_kv_heads = KV;
  a.head_dim = D;
  a.q_norm = qn.data();
  a.k_norm = kn.data();
  a.eps = 1e-6f;
  a.cos = cos.data();
  a.sin = sin.data();
  qk_norm_rope(a);
  for (int r = 0; r < 2; ++r) {
    for (int h = 0; h < H + 2 * KV; ++h) {
      const float* in = &before[r * ld + h * D];
      const float* out = &qkv[r * ld + h * D];
      if (h == H + KV) {  // v: untouched
        for (int i = 0; i < D; ++i) EXPECT_EQ(out[i], in[i]);
        continue;
      }
      const float* nw = h < H ? qn.data() : kn.data();
      double ss = 0;
      for (int i = 0; i < D; ++i) ss += double(in[i]) * in[i];
      const double inv = 1.0 / std::sqrt(ss / D + 1e-6);
      std::vector<double> n(D);
      for (int i = 0; i < D; ++i) n[i] = in[i] * inv * nw[i];
      for (int i = 0; i < half; ++i) {
        const double c = cos[r * half + i], s = sin[r * half + i];
        EXPECT_NEAR(out[i], n[i] * c - n[i + half] * s, 1e-5);
        EXPECT_NEAR(out[i + half], n[i + half] * c + n[i] * s, 1e-5);
      }
    }
    for (int64_t i = (H + 2 * KV) * D; i < ld; ++i) EXPECT_EQ(qkv[r * ld + i], before[r * ld + i]);
  }
}

}  // namespace
}  // namespace ps
