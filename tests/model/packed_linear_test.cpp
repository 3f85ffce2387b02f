// The packed-panel linear (the many-row projection kernel) against a double-precision loop, on
// every kernel this CPU can run (AVX-512, AVX2, generic), so a machine that picks one still
// checks the others.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/packed_linear.h"

namespace ps {
namespace {

std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Case {
  int64_t m, n, k;
  int variant;  // bit 0: bias; bit 1: accumulate; 2: padded y rows; 3: padded x rows
};

// Worst |ref - y| over the output; padding between rows must stay untouched.
double run_case(const Case& c, const char* isa, bool* ran) {
  const bool with_bias = c.variant & 1, accumulate = c.variant & 2;
  const int64_t ldx = c.k + (c.variant == 3 ? 5 : 0), ldy = c.n + (c.variant == 2 ? 3 : 0);
  const auto x = randn(size_t(c.m * ldx), 1);
  const auto w = randn(size_t(c.n * c.k), 2);
  const auto bias = randn(size_t(c.n), 3);
  const auto y0 = randn(size_t(c.m * ldy), 4);
  std::vector<float> y = y0;
  const PackedWeight packed(w.data(), c.n, c.k);
  PackedLinearArgs a;
  a.x = x.data();
  a.w = &packed;
  a.bias = with_bias ? bias.data() : nullptr;
  a.y = y.data();
  a.m = c.m;
  a.ldx = ldx;
  a.ldy = ldy;
  a.accumulate = accumulate;
  *ran = packed_linear_on(a, isa);
  if (!*ran) return 0;
  double worst = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = accumulate ? y0[i * ldy + j] : 0.0;
      if (with_bias) ref += bias[j];
      for (int64_t p = 0; p < c.k; ++p) ref += double(x[i * ldx + p]) * w[j * c.k + p];
      worst = std::max(worst, std::abs(ref - y[i * ldy + j]));
    }
    for (int64_t j = c.n; j < ldy; ++j) {
      if (y[i * ldy + j] != y0[i * ldy + j]) return 1e9;  // wrote into the padding
    }
  }
  return worst;
}

// Row counts around every tile height (2, 6, 12) and the 128-row chunk; n around the 32-column
// panel and its 16-column halves; k from 1 up.
TEST(PackedLinear, MatchesDoubleReferenceOnEveryKernel) {
  int ran_count = 0;
  for (const char* isa : {"avx512", "avx2", "generic"}) {
    for (int64_t m : {1, 2, 3, 5, 6, 7, 11, 12, 13, 17, 25, 64, 129}) {
      for (int64_t n : {1, 15, 16, 17, 32, 33, 70}) {
        for (int64_t k : {1, 9, 64}) {
          for (int variant = 0; variant < 4; ++variant) {
            bool ran = false;
            const double worst = run_case({m, n, k, variant}, isa, &ran);
            if (!ran) continue;
            ++ran_count;
            ASSERT_LT(worst, 1e-4)
                << isa << " m " << m << " n " << n << " k " << k << " variant " << variant;
          }
        }
      }
    }
  }
  // The generic kernel runs everywhere, so the loop above cannot have checked nothing.
  EXPECT_GE(ran_count, 13 * 7 * 3 * 4);
}

TEST(PackedLinear, LargeProblemAcrossThreadsAndChunks) {
  bool ran = false;
  const double worst = run_case({300, 200, 300, 1}, packed_linear_isa(), &ran);
  ASSERT_TRUE(ran);
  EXPECT_LT(worst, 1e-3);
}

TEST(PackedLinear, PackingKeepsShapeAndZeroPadsTheLastPanel) {
  const auto w = randn(40 * 3, 7);
  const PackedWeight p(w.data(), 40, 3);
  EXPECT_EQ(p.n(), 40);
  EXPECT_EQ(p.k(), 3);
  EXPECT_EQ(p.panels(), 2);
  // Panel 1 holds columns 32..39 then zeros; element (p = 2, j = 5) is w[37][2].
  EXPECT_EQ(p.panel(1)[2 * kPanelCols + 5], w[37 * 3 + 2]);
  EXPECT_EQ(p.panel(1)[2 * kPanelCols + 8], 0.f);
}

TEST(PackedLinear, RejectsBadShapes) {
  std::vector<float> buf(64);
  EXPECT_THROW(PackedWeight(buf.data(), 0, 4), std::invalid_argument);
  EXPECT_THROW(PackedWeight(nullptr, 4, 4), std::invalid_argument);
  const PackedWeight w(buf.data(), 4, 4);
  PackedLinearArgs a;
  a.x = buf.data();
  a.y = buf.data();
  a.m = 2;
  EXPECT_THROW(packed_linear(a), std::invalid_argument);  // no weight
  a.w = &w;
  a.ldx = 3;  // shorter than k
  EXPECT_THROW(packed_linear(a), std::invalid_argument);
  a.ldx = 0;
  a.y = nullptr;
  EXPECT_THROW(packed_linear(a), std::invalid_argument);
  EXPECT_FALSE(packed_linear_on(a, "no-such-isa"));
}

}  // namespace
}  // namespace ps
