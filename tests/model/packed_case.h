#pragma once
// One case of the packed-linear kernel tests (packed_linear_test, packed_lowbit_test): the
// shape, the variant (bias, accumulate, padded strides), inputs from fixed seeds, the kernel's
// arguments, and the double-precision reference the output is held to.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kernels/packed_linear.h"

#include "tests/model/randn.h"

namespace ps::testing_util {

struct PackedCase {
  int64_t m, n, k;
  int variant;  // bit 0: bias; bit 1: accumulate; 2: padded y rows; 3: padded x rows
};

struct PackedCaseData {
  PackedCase c;
  bool with_bias, accumulate;
  int64_t ldx, ldy;
  std::vector<float> x, w, bias, y0;  // w: [n, k], as a checkpoint holds it

  explicit PackedCaseData(const PackedCase& pc)
      : c(pc),
        with_bias(pc.variant & 1),
        accumulate(pc.variant & 2),
        ldx(pc.k + (pc.variant == 3 ? 5 : 0)),
        ldy(pc.n + (pc.variant == 2 ? 3 : 0)),
        x(randn(size_t(pc.m * ldx), 1)),
        w(randn(size_t(pc.n * pc.k), 2)),
        bias(randn(size_t(pc.n), 3)),
        y0(randn(size_t(pc.m * ldy), 4)) {}

  // The case's arguments for weight `packed` writing into `y` (which starts as y0).
  PackedLinearArgs args(const PackedWeight* packed, float* y) const {
    PackedLinearArgs a;
    a.x = x.data();
    a.w = packed;
    a.bias = with_bias ? bias.data() : nullptr;
    a.y = y;
    a.m = c.m;
    a.ldx = ldx;
    a.ldy = ldy;
    a.accumulate = accumulate;
    return a;
  }

  // Worst |double reference - y| with weights `ref_w` ([n, k]); 1e9 when the kernel wrote into
  // the padding between output rows.
  double worst_error(const std::vector<float>& ref_w, const std::vector<float>& y) const {
    double worst = 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double ref = accumulate ? y0[i * ldy + j] : 0.0;
        if (with_bias) ref += bias[j];
        for (int64_t p = 0; p < c.k; ++p) ref += double(x[i * ldx + p]) * ref_w[j * c.k + p];
        worst = std::max(worst, std::abs(ref - y[i * ldy + j]));
      }
      for (int64_t j = c.n; j < ldy; ++j) {
        if (y[i * ldy + j] != y0[i * ldy + j]) return 1e9;
      }
    }
    return worst;
  }
};

// The case's rows taken `rows` at a time (1: decode) give the bits they get among all m rows,
// the padding between output rows included (never written): the engine's batch invariance on the
// weight `packed`'s path, on the active kernel or on `isa` forced (which must run it).
inline void expect_rows_batch_invariant(const PackedCaseData& d, const PackedWeight& packed,
                                        int64_t rows = 1,
                                        std::optional<KernelIsa> isa = std::nullopt) {
  auto run = [&](const PackedLinearArgs& a) {
    if (isa) {
      ASSERT_TRUE(packed_linear_on(a, *isa)) << kernel_isa_name(*isa);
    } else {
      packed_linear(a);
    }
  };
  std::vector<float> all = d.y0;
  run(d.args(&packed, all.data()));
  if (::testing::Test::HasFatalFailure()) return;
  for (int64_t i = 0; i < d.c.m; i += rows) {
    const int64_t m = std::min(rows, d.c.m - i);
    std::vector<float> few(d.y0.begin() + i * d.ldy, d.y0.begin() + (i + m) * d.ldy);
    PackedLinearArgs a = d.args(&packed, few.data());
    a.x = d.x.data() + i * d.ldx;
    a.m = m;
    run(a);
    if (::testing::Test::HasFatalFailure()) return;
    for (int64_t j = 0; j < m * d.ldy; ++j) {
      ASSERT_EQ(few[j], all[i * d.ldy + j]) << "row " << i + j / d.ldy << " col " << j % d.ldy;
    }
  }
}

// The dot-product kernels' cases (bf16 pairs, int8 quads): m 1 (decode), a 12-row tile and its
// tails, past a 128-row chunk; n under, at and past one panel; k 1, 2, 5, 7 and 33 (padded pairs
// and quads), long; every variant (bias, accumulate, padded strides).
inline ::testing::internal::ParamGenerator<PackedCase> dot_product_cases() {
  return ::testing::Values(PackedCase{1, 32, 64, 0}, PackedCase{1, 33, 7, 1},
                           PackedCase{2, 31, 1, 2}, PackedCase{5, 100, 255, 3},
                           PackedCase{12, 64, 128, 1}, PackedCase{13, 65, 33, 2},
                           PackedCase{37, 96, 96, 3}, PackedCase{130, 40, 70, 0},
                           PackedCase{1, 1, 2, 0}, PackedCase{3, 17, 5, 1});
}

inline std::string packed_case_name(const ::testing::TestParamInfo<PackedCase>& i) {
  const PackedCase& c = i.param;
  return "m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k) +
         "_v" + std::to_string(c.variant);
}

}  // namespace ps::testing_util
