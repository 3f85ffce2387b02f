// MXFP4 weights (gpt-oss's experts) in the packed linear: the E2M1 table and E8M0 scales against
// values written out by hand, the quantizer's rounding, and the kernel on every ISA this CPU can
// run against the fp32 kernel on the dequantized matrix (bit for bit: the widened weights are
// exact) and a double-precision loop.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/mxfp4.h"
#include "kernels/packed_linear.h"

#include "tests/model/packed_case.h"
#include "tests/model/randn.h"

namespace ps {
namespace {

// A random MXFP4 matrix: every code, and exponents around the ones trained weights use (2^-10 ..
// 2^2), with a few far out that the kernels must form exactly too (2^-126 and 2^33).
struct RandomMxfp4 {
  std::vector<uint8_t> blocks, scales;
  Mxfp4Matrix m;
  RandomMxfp4(int64_t rows, int64_t k, uint32_t seed)
      : blocks(size_t(rows * k / 2)), scales(size_t(rows * k / 32)) {
    std::mt19937 rng(seed);
    for (uint8_t& b : blocks) b = uint8_t(rng());
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = uint8_t(117 + rng() % 13);
      if (i % 37 == 5) scales[i] = 160;
      if (i % 41 == 7) scales[i] = 1;
    }
    m = {blocks.data(), scales.data(), rows, k};
  }
};

TEST(Mxfp4, TableScalesAndNibbleOrderAreHfs) {
  // bytes 0x21, 0xF7: weights 1 (code 1: 0.5) then 2 (code 2: 1.0), then 7 (6.0) then 15 (-6.0).
  const uint8_t blocks[16] = {0x21, 0xF7, 0x8A};
  const uint8_t scales[1] = {128};  // 2^1
  const Mxfp4Matrix m{blocks, scales, 1, 32};
  EXPECT_EQ(mxfp4_weight(m, 0, 0), 1.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 1), 2.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 2), 12.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 3), -12.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 4), -2.0f);           // code 10: -1.0
  EXPECT_TRUE(std::signbit(mxfp4_weight(m, 0, 5)));  // code 8: -0.0
  EXPECT_EQ(mxfp4_scale(127), 1.0f);
  EXPECT_EQ(mxfp4_scale(1), std::ldexp(1.0f, -126));
  EXPECT_EQ(mxfp4_scale(254), std::ldexp(1.0f, 127));
  EXPECT_EQ(mxfp4_scale(0), 0.0f);
}

TEST(Mxfp4, QuantizeRoundsToTheNearestValueUnderTheSmallestFittingScale) {
  std::vector<float> w(64, 0.f);
  w[0] = 6.0f;    // amax 6: scale 1
  w[1] = 0.74f;   // nearest 0.5
  w[2] = -2.6f;   // nearest -3
  w[3] = 0.25f;   // tie between 0 and 0.5: the smaller
  w[32] = 13.0f;  // second block: amax 13 needs scale 4 (6 * 2 = 12 < 13)
  w[33] = 5.0f;   // 5 / 4 = 1.25: tie between 1 and 1.5, the smaller
  std::vector<uint8_t> blocks(32), scales(2);
  mxfp4_quantize(w.data(), 1, 64, blocks.data(), scales.data());
  const Mxfp4Matrix m{blocks.data(), scales.data(), 1, 64};
  EXPECT_EQ(scales[0], 127);
  EXPECT_EQ(scales[1], 129);
  EXPECT_EQ(mxfp4_weight(m, 0, 0), 6.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 1), 0.5f);
  EXPECT_EQ(mxfp4_weight(m, 0, 2), -3.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 3), 0.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 32), 12.0f);
  EXPECT_EQ(mxfp4_weight(m, 0, 33), 4.0f);
  EXPECT_THROW(mxfp4_quantize(w.data(), 1, 48, blocks.data(), scales.data()),
               std::invalid_argument);
  // Random weights: within half a step of the largest value's scale.
  const auto r = testing_util::randn(size_t(4 * 96), 3);
  std::vector<uint8_t> rb(4 * 48), rs(4 * 3);
  mxfp4_quantize(r.data(), 4, 96, rb.data(), rs.data());
  const Mxfp4Matrix rm{rb.data(), rs.data(), 4, 96};
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t c = 0; c < 96; ++c) {
      const float scale = mxfp4_scale(rs[i * 3 + c / 32]);
      EXPECT_LE(std::fabs(mxfp4_weight(rm, i, c) - r[i * 96 + c]), scale + 1e-7f) << i << " " << c;
    }
  }
}

TEST(Mxfp4, PanelsKeepFourBitsAndRowsWidenExactly) {
  const RandomMxfp4 r(40, 96, 5);
  const PackedWeight p(r.m);
  EXPECT_EQ(p.format(), PanelFormat::mxfp4);
  EXPECT_STREQ(panel_format_name(p.format()), "mxfp4");
  // Two panels of 32 columns: 16 bytes a k-step and one exponent per 32 weights.
  EXPECT_EQ(p.bytes(), 2 * (96 * 16 + 3 * 32));
  std::vector<float> row(96), dense(40 * 96);
  mxfp4_dequantize(r.m, dense.data());
  for (int64_t i : {0, 15, 16, 31, 32, 39}) {
    ASSERT_TRUE(p.row(i, row.data()));
    EXPECT_EQ(0, std::memcmp(row.data(), &dense[size_t(i * 96)], 96 * sizeof(float))) << i;
  }
  const uint8_t bad[16] = {};
  EXPECT_THROW(PackedWeight(Mxfp4Matrix{bad, bad, 1, 16}), std::invalid_argument);
  EXPECT_THROW(PackedWeight(Mxfp4Matrix{nullptr, bad, 1, 32}), std::invalid_argument);
  std::vector<float> f(64);
  EXPECT_THROW(PackedWeight(f.data(), PanelFormat::f32, 2, 32, PanelFormat::mxfp4),
               std::invalid_argument);
}

// Every tile height (AVX-512 12, AVX2 6 and its 1-3 row single pass, generic 4), n around the
// panel and its halves, k of one to several blocks, bias/accumulate/padded strides.
TEST(Mxfp4, KernelEqualsTheFp32KernelOnDequantizedWeightsOnEveryIsa) {
  int ran_count = 0;
  for (KernelIsa isa : {KernelIsa::avx512, KernelIsa::avx2, KernelIsa::generic}) {
    for (int64_t m : {1, 2, 3, 5, 6, 7, 12, 13, 25}) {
      for (int64_t n : {1, 17, 33, 70}) {
        for (int64_t k : {32, 64, 160}) {
          for (int variant = 0; variant < 4; ++variant) {
            const testing_util::PackedCaseData d({m, n, k, variant});
            const RandomMxfp4 r(n, k, uint32_t(7 + n + k));
            std::vector<float> dense(size_t(n * k));
            mxfp4_dequantize(r.m, dense.data());
            // Under a 2^33 scale an absolute bound means nothing: the double check skips those.
            bool huge = false;
            for (uint8_t e : r.scales) huge = huge || e > 140;
            const PackedWeight narrow(r.m), full(dense.data(), n, k);
            std::vector<float> y = d.y0, y_full = d.y0;
            if (!packed_linear_on(d.args(&narrow, y.data()), isa)) continue;
            packed_linear_on(d.args(&full, y_full.data()), isa);
            ++ran_count;
            const std::string where = std::string(kernel_isa_name(isa)) + " m " +
                                      std::to_string(m) + " n " + std::to_string(n) + " k " +
                                      std::to_string(k) + " variant " + std::to_string(variant);
            ASSERT_EQ(0, std::memcmp(y.data(), y_full.data(), y.size() * sizeof(float))) << where;
            if (!huge) {
              ASSERT_LT(d.worst_error(dense, y), 1e-3) << where;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(ran_count, 9 * 4 * 3 * 4);  // the generic kernel runs everywhere
}

// A realistic scale range across threads and row chunks (M past 128), against double.
TEST(Mxfp4, LargeProblemMatchesDouble) {
  const testing_util::PackedCaseData d({300, 200, 288, 1});
  RandomMxfp4 r(200, 288, 9);
  for (uint8_t& e : r.scales) e = uint8_t(118 + e % 8);
  std::vector<float> dense(size_t(200 * 288));
  mxfp4_dequantize(r.m, dense.data());
  const PackedWeight p(r.m);
  std::vector<float> y = d.y0;
  packed_linear(d.args(&p, y.data()));
  EXPECT_LT(d.worst_error(dense, y), 1e-3);
  // The check can fail: one weight's code flipped in the reference shows.
  dense[5 * 288 + 7] += 1.0f;
  EXPECT_GT(d.worst_error(dense, y), 1e-2);
}

}  // namespace
}  // namespace ps
