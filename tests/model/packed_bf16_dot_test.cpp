// The bf16 dot products (--compute-dtype bfloat16: bf16_pairs panels, panel_avx512_bf16) against
// a double-precision loop over the bf16-rounded activations and weights, within what fp32
// accumulation of exact bf16 products allows; against the unrounded fp32 product within what
// rounding the activations and weights to bf16 allows; each row's result the same at any batch
// size; the panels' weight rows read back exactly. Skipped where the CPU has no AVX512_BF16.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_isa.h"
#include "kernels/packed_linear.h"
#include "model/half_bits.h"

#include "tests/model/packed_case.h"

namespace ps {
namespace {

using testing_util::PackedCase;
using testing_util::PackedCaseData;

float to_bf16(float v) {
  return bf16_to_float(float_to_bf16(v));
}

class PackedBf16Dot : public ::testing::TestWithParam<PackedCase> {
 protected:
  void SetUp() override {
    if (!cpu_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  }
};

// Every row and column against the two references; `sums` collects sum |x w| per output.
TEST_P(PackedBf16Dot, MatchesDoubleReferenceWithinBf16Bounds) {
  const PackedCaseData d(GetParam());
  const int64_t m = d.c.m, n = d.c.n, k = d.c.k;
  const PackedWeight packed(d.w.data(), PanelFormat::f32, n, k, PanelFormat::bf16_pairs);
  ASSERT_EQ(packed.format(), PanelFormat::bf16_pairs);
  std::vector<float> y = d.y0;
  ASSERT_TRUE(packed_linear_on(d.args(&packed, y.data()), KernelIsa::avx512));
  // Narrower ISAs have no bf16 dot products: they refuse, computing nothing.
  std::vector<float> untouched = d.y0;
  EXPECT_FALSE(packed_linear_on(d.args(&packed, untouched.data()), KernelIsa::avx2));
  EXPECT_EQ(untouched, d.y0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double rounded = 0, exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double xr = to_bf16(d.x[i * d.ldx + p]), wr = to_bf16(d.w[j * k + p]);
        rounded += xr * wr;
        exact += double(d.x[i * d.ldx + p]) * d.w[j * k + p];
        magnitude += std::fabs(xr * wr);
      }
      double base = d.accumulate ? d.y0[i * d.ldy + j] : 0.0;
      if (d.with_bias) base += d.bias[j];
      const double got = y[i * d.ldy + j];
      // fp32 accumulation over k/2 steps of two exact products: at most k roundings of 2^-24
      // relative to the running magnitude; then bias and y, two more.
      const double fp32_bound = (k + 3) * std::ldexp(1.0, -24) * (magnitude + std::fabs(base));
      EXPECT_LE(std::fabs(got - (rounded + base)), fp32_bound + 1e-30)
          << "row " << i << " col " << j << " k " << k;
      // Against the fp32 product: x and w each off by at most 2^-9 relative.
      const double bf16_bound = 2 * std::ldexp(1.0, -8) * magnitude + fp32_bound;
      EXPECT_LE(std::fabs(got - (exact + base)), bf16_bound + 1e-30) << "row " << i << " col " << j;
    }
    for (int64_t j = n; j < d.ldy; ++j) {
      EXPECT_EQ(y[i * d.ldy + j], d.y0[i * d.ldy + j]) << "wrote into row padding";
    }
  }
}

// Each row alone gives the bits it gets among the batch (packed_case.h).
TEST_P(PackedBf16Dot, ARowsResultDoesNotDependOnTheBatch) {
  const PackedCaseData d(GetParam());
  testing_util::expect_rows_batch_invariant(
      d, PackedWeight(d.w.data(), PanelFormat::f32, d.c.n, d.c.k, PanelFormat::bf16_pairs));
}

INSTANTIATE_TEST_SUITE_P(Shapes, PackedBf16Dot, testing_util::dot_product_cases(),
                         testing_util::packed_case_name);

// The panels hold each weight rounded to bf16 (nearest even) wherever its k-step falls in a
// pair, for fp32, bf16 and f16 sources alike; row() reads them back.
TEST(PackedBf16Pairs, RowsReadBackRoundedWeights) {
  const int64_t n = 45, k = 9;
  const std::vector<float> w = testing_util::randn(size_t(n * k), 5);
  std::vector<uint16_t> as_bf16(w.size()), as_f16(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    as_bf16[i] = float_to_bf16(w[i]);
    as_f16[i] = float_to_f16(w[i]);
  }
  const PackedWeight from_f32(w.data(), PanelFormat::f32, n, k, PanelFormat::bf16_pairs);
  const PackedWeight from_bf16(as_bf16.data(), PanelFormat::bf16, n, k, PanelFormat::bf16_pairs);
  const PackedWeight from_f16(as_f16.data(), PanelFormat::f16, n, k, PanelFormat::bf16_pairs);
  EXPECT_EQ(from_f32.panel_bytes(), 32 * 10 * 2);  // k padded to 10
  EXPECT_STREQ(panel_format_name(from_f32.format()), "bf16-pairs");
  std::vector<float> row(k), row_b(k), row_h(k);
  for (int64_t r = 0; r < n; ++r) {
    ASSERT_TRUE(from_f32.row(r, row.data()));
    ASSERT_TRUE(from_bf16.row(r, row_b.data()));
    ASSERT_TRUE(from_f16.row(r, row_h.data()));
    for (int64_t p = 0; p < k; ++p) {
      EXPECT_EQ(row[p], to_bf16(w[r * k + p])) << r << "," << p;
      EXPECT_EQ(row_b[p], row[p]);
      EXPECT_EQ(row_h[p], to_bf16(f16_to_float(as_f16[r * k + p])));
    }
  }
  EXPECT_FALSE(from_f32.row(n, row.data()));
}

}  // namespace
}  // namespace ps
