// The packed-panel linear (the many-row projection kernel) against a double-precision loop, on
// every kernel this CPU can run (AVX-512, AVX2, generic), so a machine that picks one still
// checks the others.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/packed_linear.h"

#include "tests/model/packed_case.h"
#include "tests/model/randn.h"

namespace ps {
namespace {

using testing_util::PackedCaseData;
using testing_util::randn;
using Case = testing_util::PackedCase;

// Worst |ref - y| over the output; padding between rows must stay untouched.
double run_case(const Case& c, KernelIsa isa, bool* ran) {
  const PackedCaseData d(c);
  const PackedWeight packed(d.w.data(), c.n, c.k);
  std::vector<float> y = d.y0;
  *ran = packed_linear_on(d.args(&packed, y.data()), isa);
  if (!*ran) return 0;
  return d.worst_error(d.w, y);
}

// Row counts around every tile height (2, 6, 12) and the 128-row chunk; n around the 32-column
// panel and its 16-column halves; k from 1 up.
TEST(PackedLinear, MatchesDoubleReferenceOnEveryKernel) {
  int ran_count = 0;
  for (KernelIsa isa : {KernelIsa::avx512, KernelIsa::avx2, KernelIsa::generic}) {
    for (int64_t m : {1, 2, 3, 5, 6, 7, 11, 12, 13, 17, 25, 64, 129}) {
      for (int64_t n : {1, 15, 16, 17, 32, 33, 70}) {
        for (int64_t k : {1, 9, 64}) {
          for (int variant = 0; variant < 4; ++variant) {
            bool ran = false;
            const double worst = run_case({m, n, k, variant}, isa, &ran);
            if (!ran) continue;
            ++ran_count;
            ASSERT_LT(worst, 1e-4) << kernel_isa_name(isa) << " m " << m << " n " << n << " k " << k
                                   << " variant " << variant;
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
  const double worst = run_case({300, 200, 300, 1}, active_kernel_isa(), &ran);
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
}

// A row's output is bit-identical whatever else shares the call (tile height, tail tile, row
// chunk): the engine's greedy batch invariance relies on it. 131 rows split into chunks of 68
// and 63, 140 into two of 70, 385 into three of 100 and one of 85 (row_chunk in
// packed_linear.cpp).
TEST(PackedLinear, RowResultDoesNotDependOnRowCount) {
  const int64_t n = 70, k = 129;
  const auto x = randn(size_t(385 * k), 11);
  const auto w = randn(size_t(n * k), 12);
  const PackedWeight packed(w.data(), n, k);
  for (KernelIsa isa : runnable_kernel_isas()) {
    std::vector<float> alone(static_cast<size_t>(n));
    PackedLinearArgs a;
    a.x = x.data() + 130 * k;  // row 130 of x
    a.w = &packed;
    a.y = alone.data();
    a.m = 1;
    ASSERT_TRUE(packed_linear_on(a, isa));
    for (int64_t m : {131, 133, 140, 385}) {
      std::vector<float> y(size_t(m * n));
      a.x = x.data();
      a.y = y.data();
      a.m = m;
      ASSERT_TRUE(packed_linear_on(a, isa));
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(y[size_t(130 * n + j)], alone[size_t(j)]) << kernel_isa_name(isa) << " m " << m;
      }
    }
  }
}

TEST(KernelIsa, NamesParseAndTheCpuCanRunGeneric) {
  EXPECT_EQ(parse_kernel_isa("avx2"), KernelIsa::avx2);
  EXPECT_EQ(parse_kernel_isa("avx512"), KernelIsa::avx512);
  EXPECT_EQ(parse_kernel_isa("generic"), KernelIsa::generic);
  try {
    parse_kernel_isa("sse9");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sse9"), std::string::npos);
  }
  EXPECT_TRUE(cpu_can_run(KernelIsa::generic));
  EXPECT_EQ(runnable_kernel_isas().front(), KernelIsa::generic);
}

// Forcing changes what packed_linear runs; forcing what the CPU lacks is refused by name.
TEST(KernelIsa, ForcingSwitchesTheActiveKernel) {
  const KernelIsa before = active_kernel_isa();
  for (KernelIsa isa : runnable_kernel_isas()) {
    force_kernel_isa(isa);
    EXPECT_EQ(active_kernel_isa(), isa);
    EXPECT_STREQ(packed_linear_isa(), kernel_isa_name(isa));
  }
  for (KernelIsa isa : {KernelIsa::avx2, KernelIsa::avx512}) {
    if (!cpu_can_run(isa)) {
      EXPECT_THROW(force_kernel_isa(isa), std::invalid_argument);
    }
  }
  force_kernel_isa(before);
}

}  // namespace
}  // namespace ps
