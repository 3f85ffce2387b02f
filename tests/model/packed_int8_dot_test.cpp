// The int8 dot products (--quantization int8 --compute-dtype int8: i8_quads panels,
// panel_avx512_vnni) against a double-precision loop over activations and weights quantized here,
// independently of the kernel (per row and per output channel: s = max|v| / 127, q = round(v /
// s)): the integer sums are exact, so only the final scaling rounds; against the unquantized fp32
// product within what quantizing both sides allows; each row's result the same at any batch
// size. Skipped where the CPU has no AVX512_VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernel_isa.h"
#include "kernels/packed_linear.h"

#include "tests/model/packed_case.h"

namespace ps {
namespace {

using testing_util::PackedCase;
using testing_util::PackedCaseData;

// Row `v` of length k quantized as the kernel and the packer do; returns the scale.
float quantize(const float* v, int64_t k, std::vector<int>* q) {
  float amax = 0.f;
  for (int64_t p = 0; p < k; ++p) amax = std::max(amax, std::fabs(v[p]));
  const float s = amax / 127.f;
  const float inv = s > 0.f ? 1.f / s : 0.f;
  q->resize(size_t(k));
  for (int64_t p = 0; p < k; ++p) {
    (*q)[size_t(p)] = int(std::clamp(std::nearbyint(v[p] * inv), -127.f, 127.f));
  }
  return s;
}

// The ISAs whose int8 dot products this CPU runs: avx512 with AVX512_VNNI, avx2 with AVX-VNNI.
std::vector<KernelIsa> int8_isas() {
  std::vector<KernelIsa> out;
  for (KernelIsa isa : runnable_kernel_isas()) {
    if (int8_dot_products_on(isa)) out.push_back(isa);
  }
  return out;
}

class PackedInt8Dot : public ::testing::TestWithParam<PackedCase> {
 protected:
  void SetUp() override {
    if (int8_isas().empty()) GTEST_SKIP() << "this CPU has neither AVX512_VNNI nor AVX-VNNI";
  }
};

// Every ISA with the unit gives the same bits (exact integer sums, the same scaling), within the
// bound of the quantized values against double; one without it (generic) refuses, writing nothing.
TEST_P(PackedInt8Dot, MatchesDoubleReferenceOverTheQuantizedValues) {
  const PackedCaseData d(GetParam());
  const int64_t m = d.c.m, n = d.c.n, k = d.c.k;
  const PackedWeight packed(d.w.data(), PanelFormat::f32, n, k, PanelFormat::i8_quads);
  ASSERT_EQ(packed.format(), PanelFormat::i8_quads);
  std::vector<float> y;
  for (KernelIsa isa : runnable_kernel_isas()) {
    std::vector<float> out = d.y0;
    if (!int8_dot_products_on(isa)) {
      EXPECT_FALSE(packed_linear_on(d.args(&packed, out.data()), isa)) << kernel_isa_name(isa);
      EXPECT_EQ(out, d.y0) << kernel_isa_name(isa);
      continue;
    }
    ASSERT_TRUE(packed_linear_on(d.args(&packed, out.data()), isa)) << kernel_isa_name(isa);
    if (y.empty()) {
      y = out;
    } else {
      ASSERT_EQ(std::memcmp(out.data(), y.data(), y.size() * sizeof(float)), 0)
          << kernel_isa_name(isa) << " differs from " << kernel_isa_name(int8_isas()[0]);
    }
  }
  std::vector<std::vector<int>> qw(static_cast<size_t>(n));
  std::vector<float> sw(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) sw[size_t(j)] = quantize(d.w.data() + j * k, k, &qw[size_t(j)]);
  std::vector<int> qx;
  for (int64_t i = 0; i < m; ++i) {
    const float sx = quantize(d.x.data() + i * d.ldx, k, &qx);
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      double exact = 0, error_bound = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += int64_t(qx[size_t(p)]) * qw[size_t(j)][size_t(p)];
        const double x = d.x[i * d.ldx + p], w = d.w[j * k + p];
        exact += x * w;
        // Each side is off by at most half its step.
        error_bound += std::fabs(x) * sw[size_t(j)] / 2 + std::fabs(w) * sx / 2 +
                       double(sx) * sw[size_t(j)] / 4;
      }
      double base = d.accumulate ? d.y0[i * d.ldy + j] : 0.0;
      if (d.with_bias) base += d.bias[j];
      const double quantized = double(sx) * sw[size_t(j)] * double(sum);
      const double got = y[i * d.ldy + j];
      // The exact int32 sum, converted, times two scales, plus bias and y: a few roundings.
      const double fp32_bound = 4 * std::ldexp(1.0, -24) * (std::fabs(quantized) + std::fabs(base));
      EXPECT_LE(std::fabs(got - (quantized + base)), fp32_bound + 1e-30)
          << "row " << i << " col " << j << " k " << k;
      EXPECT_LE(std::fabs(got - (exact + base)), error_bound + fp32_bound + 1e-30)
          << "row " << i << " col " << j;
    }
    for (int64_t j = n; j < d.ldy; ++j) {
      EXPECT_EQ(y[i * d.ldy + j], d.y0[i * d.ldy + j]) << "wrote into row padding";
    }
  }
}

// Each row alone gives the bits it gets among the batch (packed_case.h).
TEST_P(PackedInt8Dot, ARowsResultDoesNotDependOnTheBatch) {
  const PackedCaseData d(GetParam());
  const PackedWeight packed(d.w.data(), PanelFormat::f32, d.c.n, d.c.k, PanelFormat::i8_quads);
  for (KernelIsa isa : int8_isas()) testing_util::expect_rows_batch_invariant(d, packed, 1, isa);
}

INSTANTIATE_TEST_SUITE_P(Shapes, PackedInt8Dot, testing_util::dot_product_cases(),
                         testing_util::packed_case_name);

// A zero row of activations (scale 0) gives bias (+ y) exactly; rows are not gathered from
// int8 panels; grouped scales are refused.
TEST(PackedInt8Quads, ZeroRowsNoRowReadsAndNoGroups) {
  if (!int8_dot_products_on(active_kernel_isa())) GTEST_SKIP() << "no int8 dot products here";
  const int64_t n = 40, k = 12;
  const std::vector<float> w = testing_util::randn(size_t(n * k), 6);
  const PackedWeight packed(w.data(), PanelFormat::f32, n, k, PanelFormat::i8_quads);
  const std::vector<float> x(size_t(k), 0.f), bias = testing_util::randn(size_t(n), 7);
  std::vector<float> y(size_t(n), 99.f);
  PackedLinearArgs a;
  a.x = x.data();
  a.w = &packed;
  a.bias = bias.data();
  a.y = y.data();
  a.m = 1;
  packed_linear(a);
  EXPECT_EQ(y, bias);
  std::vector<float> row(static_cast<size_t>(k));
  EXPECT_FALSE(packed.row(0, row.data()));
  EXPECT_STREQ(panel_format_name(packed.format()), "i8-quads");
  EXPECT_THROW(PackedWeight(w.data(), PanelFormat::f32, n, k, PanelFormat::i8_quads, 4),
               std::invalid_argument);
}

}  // namespace
}  // namespace ps
