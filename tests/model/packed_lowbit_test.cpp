// The packed linear on narrow weights (bf16, f16, int8 per channel and per group of 32) against
// a double-precision loop over the widened weights, on every kernel this CPU can run, and bit
// for bit against the fp32 kernel on the same widened weights (int8 per channel: on the
// integers, scaled once after): narrowing changes the bytes read, not the arithmetic.
#include <gtest/gtest.h>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/packed_linear.h"
#include "model/half_bits.h"

#include "tests/model/packed_case.h"
#include "tests/model/randn.h"

namespace ps {
namespace {

using testing_util::randn;

struct Format {
  PanelFormat format;
  int64_t group;  // i8 only; 0 = per output channel
  const char* name;
};

const Format kFormats[] = {{PanelFormat::bf16, 0, "bf16"},
                           {PanelFormat::f16, 0, "f16"},
                           {PanelFormat::i8, 0, "i8/channel"},
                           {PanelFormat::i8, 32, "i8/g32"}};

// What the kernel must see: w rounded to the format, or quantized and dequantized, computed
// here independently of the packer. For int8, *ints and *scales (when given) receive the
// integers as floats ([n, k]) and each group's scale ([n, groups]).
std::vector<float> widened(const std::vector<float>& w, int64_t n, int64_t k, const Format& f,
                           std::vector<float>* ints = nullptr,
                           std::vector<float>* scales = nullptr) {
  std::vector<float> out(w.size());
  if (f.format != PanelFormat::i8) {
    for (size_t i = 0; i < w.size(); ++i) {
      out[i] = f.format == PanelFormat::bf16 ? bf16_to_float(float_to_bf16(w[i]))
                                             : f16_to_float(float_to_f16(w[i]));
    }
    return out;
  }
  const int64_t g = f.group > 0 ? std::min(f.group, k) : k;
  if (ints != nullptr) ints->assign(w.size(), 0.f);
  if (scales != nullptr) scales->clear();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t q0 = 0; q0 < k; q0 += g) {
      const int64_t q1 = std::min(k, q0 + g);
      float amax = 0;
      for (int64_t q = q0; q < q1; ++q) amax = std::max(amax, std::fabs(w[j * k + q]));
      const float s = amax / 127.f;
      if (scales != nullptr) scales->push_back(s);
      for (int64_t q = q0; q < q1; ++q) {
        const float v = s > 0 ? std::nearbyint(w[j * k + q] * (1.f / s)) : 0.f;
        const float i = float(int8_t(std::clamp(v, -127.f, 127.f)));
        out[j * k + q] = i * s;
        if (ints != nullptr) (*ints)[j * k + q] = i;
      }
    }
  }
  return out;
}

using Case = testing_util::PackedCase;

// Runs the narrow kernel and the fp32 kernel on `isa`, and returns the worst |double ref - y|.
// *exact says whether the narrow kernel gave the bits packed_kernels.h promises: the fp32
// kernel's on the widened weights, or for int8 per channel, the fp32 kernel's chain over the
// integers, then fma(chain, scale, bias or 0), then + old y.
double run_case(const Case& c, const Format& f, KernelIsa isa, bool* ran, bool* exact) {
  const testing_util::PackedCaseData d(c);
  // A group as long as k is one scale per channel: the kernel cannot tell them apart.
  const bool per_channel = f.format == PanelFormat::i8 && (f.group == 0 || f.group >= c.k);
  std::vector<float> ints, scales;
  const std::vector<float> wide = widened(d.w, c.n, c.k, f, &ints, &scales);
  const PackedWeight narrow(d.w.data(), PanelFormat::f32, c.n, c.k, f.format, f.group);
  const PackedWeight full(per_channel ? ints.data() : wide.data(), c.n, c.k);
  std::vector<float> y = d.y0, y_full = d.y0;
  *ran = packed_linear_on(d.args(&narrow, y.data()), isa);
  if (!*ran) return 0;
  PackedLinearArgs a = d.args(&full, y_full.data());
  if (per_channel) {
    a.bias = nullptr;
    a.accumulate = false;
  }
  packed_linear_on(a, isa);
  if (per_channel) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        float r = std::fma(y_full[i * d.ldy + j], scales[j], d.with_bias ? d.bias[j] : 0.f);
        if (d.accumulate) r += d.y0[i * d.ldy + j];
        y_full[i * d.ldy + j] = r;
      }
    }
  }
  *exact = std::memcmp(y.data(), y_full.data(), y.size() * sizeof(float)) == 0;
  return d.worst_error(wide, y);
}

// Row counts around every tile height (2, 6, 12); n around the panel and its halves; k from 1,
// with k = 100 ending in a partial group of 32.
TEST(PackedLowbit, MatchesDoubleReferenceAndFp32KernelOnEveryKernel) {
  int ran_count = 0;
  for (KernelIsa isa : {KernelIsa::avx512, KernelIsa::avx2, KernelIsa::generic}) {
    for (const Format& f : kFormats) {
      for (int64_t m : {1, 2, 3, 5, 6, 7, 12, 13, 25}) {
        for (int64_t n : {1, 17, 33, 70}) {
          for (int64_t k : {1, 9, 64, 100}) {
            for (int variant = 0; variant < 4; ++variant) {
              bool ran = false, exact = false;
              const double worst = run_case({m, n, k, variant}, f, isa, &ran, &exact);
              if (!ran) continue;
              ++ran_count;
              const std::string where = std::string(kernel_isa_name(isa)) + " " + f.name + " m " +
                                        std::to_string(m) + " n " + std::to_string(n) + " k " +
                                        std::to_string(k) + " variant " + std::to_string(variant);
              ASSERT_LT(worst, 1e-4) << where;
              ASSERT_TRUE(exact) << where << ": differs from the fp32 kernel on widened weights";
            }
          }
        }
      }
    }
  }
  EXPECT_GE(ran_count, 4 * 9 * 4 * 4 * 4);  // the generic kernel runs everywhere
}

TEST(PackedLowbit, LargeProblemAcrossThreadsAndChunks) {
  for (const Format& f : kFormats) {
    bool ran = false, exact = false;
    const double worst = run_case({300, 200, 300, 1}, f, active_kernel_isa(), &ran, &exact);
    ASSERT_TRUE(ran);
    EXPECT_LT(worst, 1e-3) << f.name;
    EXPECT_TRUE(exact) << f.name;
  }
}

// A bf16 checkpoint's bytes are packed as they are (no fp32 round trip), from any alignment.
TEST(PackedLowbit, Bf16SourceIsCopiedBitForBitFromAnUnalignedBuffer) {
  const int64_t n = 40, k = 7;
  const auto w = randn(size_t(n * k), 9);
  std::vector<uint8_t> bytes(size_t(n * k * 2 + 1));
  for (int64_t i = 0; i < n * k; ++i) {
    const uint16_t h = float_to_bf16(w[i]);
    std::memcpy(bytes.data() + 1 + 2 * i, &h, 2);
  }
  const PackedWeight p(bytes.data() + 1, PanelFormat::bf16, n, k, PanelFormat::bf16);
  EXPECT_EQ(p.format(), PanelFormat::bf16);
  EXPECT_EQ(p.bytes(), 2 * kPanelCols * k * 2);  // two panels of 2-byte weights
  const auto* panel1 = static_cast<const uint16_t*>(p.panel_data(1));
  EXPECT_EQ(panel1[3 * kPanelCols + 5], float_to_bf16(w[37 * k + 3]));
  EXPECT_EQ(panel1[3 * kPanelCols + 8], 0);  // column 40: padding
}

TEST(PackedLowbit, Int8QuantizationErrorIsWithinHalfAStepAndZeroRowsStayZero) {
  const int64_t n = 3, k = 70;
  auto w = randn(size_t(n * k), 11);
  for (int64_t q = 0; q < k; ++q) w[1 * k + q] = 0.f;  // an all-zero output channel
  for (int64_t group : {int64_t{0}, int64_t{32}}) {
    const PackedWeight p(w.data(), PanelFormat::f32, n, k, PanelFormat::i8, group);
    EXPECT_EQ(p.groups(), group == 0 ? 1 : 3);
    EXPECT_EQ(p.bytes(), kPanelCols * (k + p.groups() * 4));
    const auto* q8 = static_cast<const int8_t*>(p.panel_data(0));
    const float* s = p.panel_scales(0);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t q = 0; q < k; ++q) {
        const float scale = s[(q / p.group()) * kPanelCols + j];
        const float deq = float(q8[q * kPanelCols + j]) * scale;
        EXPECT_LE(std::fabs(deq - w[j * k + q]), scale * 0.5f + 1e-7f) << j << " " << q;
        EXPECT_GE(q8[q * kPanelCols + j], -127);
        if (j == 1) {
          EXPECT_EQ(scale, 0.f);
        }
      }
    }
    std::vector<float> x(size_t(k), 1.f), y(size_t(n), -1.f);
    PackedLinearArgs a;
    a.x = x.data();
    a.w = &p;
    a.y = y.data();
    a.m = 1;
    packed_linear(a);
    EXPECT_EQ(y[1], 0.f);
  }
}

// The bit conversions agree with c10's (what PyTorch writes checkpoints with).
TEST(HalfBits, AgreeWithC10) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_float(uint16_t(h));
    const float ref = float(c10::Half(uint16_t(h), c10::Half::from_bits()));
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(std::memcmp(&f, &ref, 4), 0) << h;
    ASSERT_EQ(float_to_f16(f), uint16_t(h)) << h;  // every f16 value round-trips
  }
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), c10::BFloat16(f).x) << b;
    const float small = f * 1e-34f;  // lands in f16's normal and subnormal range too
    ASSERT_EQ(float_to_f16(small), c10::Half(small).x) << b;
    ASSERT_EQ(float_to_f16(f), c10::Half(f).x) << b;
  }
}

}  // namespace
}  // namespace ps
