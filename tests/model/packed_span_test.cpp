// Jobs that cover several panels at once (PanelJob::span: one or two rows on the AVX-512 kernel,
// one row of fp32 on AVX2) give every output the bits of the one-panel tile that a taller call
// runs: spans of 4, 3 and 2 panels, a partial last panel, a span broken by the thread split, bias,
// accumulate and padded strides, for every format the span path takes (f32, bf16, f16, int8 per
// channel) and those it leaves to the single-panel path (int8 per group; the bf16 and int8 dot
// products' pairs and quads, where the CPU has their units), on every kernel this CPU can run.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/packed_linear.h"

#include "tests/model/packed_case.h"
#include "tests/model/randn.h"

namespace ps {
namespace {

using testing_util::randn;

struct SpanFormat {
  PanelFormat format;
  int64_t group;
  const char* name;
};

const SpanFormat kSpanFormats[] = {{PanelFormat::f32, 0, "f32"},
                                   {PanelFormat::bf16, 0, "bf16"},
                                   {PanelFormat::f16, 0, "f16"},
                                   {PanelFormat::i8, 0, "i8/channel"},
                                   {PanelFormat::i8, 32, "i8/g32"},
                                   {PanelFormat::bf16_pairs, 0, "bf16 pairs (dot products)"},
                                   {PanelFormat::i8_quads, 0, "i8 quads (dot products)"}};

TEST(PackedSpan, FewRowsEqualTheirRowsInATallCall) {
  // n 70: one thread's span of 3 with a partial last panel. n 293 at k 1024: 10 panels split
  // over the threads (a span of 4 then a shorter one on each) with a 5-column last panel.
  const int64_t shapes[][2] = {{70, 129}, {293, 1024}, {32, 64}, {17, 33}};
  for (const auto& shape : shapes) {
    const int64_t n = shape[0], k = shape[1];
    // Variants: plain; bias; accumulate with padded y rows; bias, accumulate, padded x rows.
    for (int variant : {0, 1, 2, 3}) {
      const testing_util::PackedCaseData d({13, n, k, variant});
      for (const SpanFormat& f : kSpanFormats) {
        const PackedWeight packed(d.w.data(), PanelFormat::f32, n, k, f.format, f.group);
        for (KernelIsa isa : runnable_kernel_isas()) {
          // The dot-product formats run where their unit is (packed_linear_on refuses the rest,
          // which packed_bf16_dot_test and packed_int8_dot_test check).
          if (f.format == PanelFormat::bf16_pairs &&
              (isa != KernelIsa::avx512 || !cpu_has_avx512_bf16())) {
            continue;
          }
          if (f.format == PanelFormat::i8_quads && !int8_dot_products_on(isa)) continue;
          for (int64_t rows : {1, 2}) {
            SCOPED_TRACE(std::string(f.name) + " " + kernel_isa_name(isa) + " n " +
                         std::to_string(n) + " k " + std::to_string(k) + " variant " +
                         std::to_string(variant) + " rows " + std::to_string(rows));
            testing_util::expect_rows_batch_invariant(d, packed, rows, isa);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// The span path's values against a double-precision product over the widened weights: the
// same check as the single-panel kernels, at the row counts the span path runs.
TEST(PackedSpan, OneRowMatchesDoubleReference) {
  const int64_t n = 293, k = 1024;
  const auto x = randn(size_t(k), 31);
  const auto w = randn(size_t(n * k), 32);
  const PackedWeight packed(w.data(), n, k);
  for (KernelIsa isa : runnable_kernel_isas()) {
    std::vector<float> y(static_cast<size_t>(n));
    PackedLinearArgs a;
    a.x = x.data();
    a.w = &packed;
    a.y = y.data();
    a.m = 1;
    ASSERT_TRUE(packed_linear_on(a, isa));
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        ref += double(x[size_t(p)]) * double(w[size_t(j * k + p)]);
        mag += std::fabs(double(x[size_t(p)]) * double(w[size_t(j * k + p)]));
      }
      // fp32 chain of k FMAs: each rounding at most 2^-24 of the running magnitude.
      EXPECT_NEAR(y[size_t(j)], ref, mag * double(k) * 6e-8 + 1e-6)
          << kernel_isa_name(isa) << " col " << j;
    }
  }
}

}  // namespace
}  // namespace ps
