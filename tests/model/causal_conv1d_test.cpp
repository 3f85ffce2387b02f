// The short causal convolution of Gated DeltaNet layers (kernels/causal_conv1d.h, issue #35):
// the formula itself, a sequence split anywhere or decoded a token at a time equal to one call
// (the state carries the last K - 1 inputs), in place, and bad shapes refused.
#include "kernels/causal_conv1d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace ps {
namespace {

std::vector<float> randoms(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) e = d(rng);
  return v;
}

CausalConv1dArgs args(int32_t T, int32_t C, int32_t K, const float* x, const float* w, float* state,
                      float* out) {
  CausalConv1dArgs a;
  a.num_tokens = T;
  a.channels = C;
  a.kernel = K;
  a.x = x;
  a.x_stride = C;
  a.weight = w;
  a.state = state;
  a.out = out;
  a.out_stride = C;
  return a;
}

TEST(CausalConv1d, IsTheCausalDepthwiseFormulaThenSilu) {
  const int32_t T = 9, C = 5, K = 4;
  const auto x = randoms(size_t(T) * C, 1), w = randoms(size_t(C) * K, 2);
  std::vector<float> state(size_t(C) * (K - 1), 0.0f), out(size_t(T) * C);
  causal_conv1d_silu(args(T, C, K, x.data(), w.data(), state.data(), out.data()));
  for (int32_t t = 0; t < T; ++t) {
    for (int32_t c = 0; c < C; ++c) {
      double s = 0;
      for (int32_t j = 0; j < K; ++j) {
        const int32_t src = t - (K - 1) + j;
        if (src >= 0) s += double(w[size_t(c) * K + j]) * x[size_t(src) * C + c];
      }
      EXPECT_NEAR(out[size_t(t) * C + c], s / (1 + std::exp(-s)), 1e-5) << t << "," << c;
    }
  }
  // The state is the last K - 1 inputs, oldest first.
  for (int32_t c = 0; c < C; ++c) {
    for (int32_t j = 0; j < K - 1; ++j) {
      EXPECT_EQ(state[size_t(c) * (K - 1) + j], x[size_t(T - (K - 1) + j) * C + c]);
    }
  }
}

TEST(CausalConv1d, SplitsAndSingleTokensContinueFromTheState) {
  const int32_t T = 40, C = 70, K = 4;
  const auto x = randoms(size_t(T) * C, 3), w = randoms(size_t(C) * K, 4);
  std::vector<float> s_all(size_t(C) * (K - 1), 0.0f), all(size_t(T) * C);
  causal_conv1d_silu(args(T, C, K, x.data(), w.data(), s_all.data(), all.data()));
  // Pieces of 1, 2 (shorter than K - 1), 17 and the rest, then one token at a time.
  std::vector<float> s(size_t(C) * (K - 1), 0.0f), out(size_t(T) * C);
  int32_t t = 0;
  for (int32_t len : {1, 2, 17, 10}) {
    causal_conv1d_silu(
        args(len, C, K, x.data() + size_t(t) * C, w.data(), s.data(), out.data() + size_t(t) * C));
    t += len;
  }
  for (; t < T; ++t) {
    causal_conv1d_silu(
        args(1, C, K, x.data() + size_t(t) * C, w.data(), s.data(), out.data() + size_t(t) * C));
  }
  EXPECT_EQ(out, all);
  EXPECT_EQ(s, s_all);
  // In place: out over x.
  std::vector<float> inplace = x, s2(size_t(C) * (K - 1), 0.0f);
  causal_conv1d_silu(args(T, C, K, inplace.data(), w.data(), s2.data(), inplace.data()));
  EXPECT_EQ(inplace, all);
}

TEST(CausalConv1d, RefusesBadShapes) {
  std::vector<float> x(8), w(8), s(8), out(8);
  EXPECT_THROW(causal_conv1d_silu(args(2, 2, 0, x.data(), w.data(), s.data(), out.data())),
               std::invalid_argument);
  EXPECT_THROW(causal_conv1d_silu(args(2, 2, 4, x.data(), w.data(), nullptr, out.data())),
               std::invalid_argument);
  EXPECT_NO_THROW(causal_conv1d_silu(args(2, 2, 1, x.data(), w.data(), nullptr, out.data())));
}

}  // namespace
}  // namespace ps
