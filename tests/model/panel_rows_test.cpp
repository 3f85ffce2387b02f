// Rows read back from packed panels (a tied embedding looked up in lm_head's panels instead of a
// second copy of the table), and the KV pool's lazily committed pages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cpu/kv_cache_pages.h"
#include "cpu/projection.h"
#include "kernels/packed_linear.h"
#include "model/half_bits.h"

#include "tests/model/randn.h"

namespace ps {
namespace {

using testing_util::randn;

// Every row of a matrix whose n is no multiple of the panel width (the last panel is partial),
// from fp32, bf16 and f16 panels: the widened source values, bit for bit.
TEST(PanelRows, EveryRowOfEveryExactFormatIsTheWidenedSource) {
  const int64_t n = 70, k = 37;
  const auto w = randn(size_t(n * k), 21);
  for (PanelFormat f : {PanelFormat::f32, PanelFormat::bf16, PanelFormat::f16}) {
    const PackedWeight p(w.data(), PanelFormat::f32, n, k, f);
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      ASSERT_TRUE(p.row(r, row.data())) << panel_format_name(f) << " row " << r;
      for (int64_t q = 0; q < k; ++q) {
        const float src = w[size_t(r * k + q)];
        const float want = f == PanelFormat::f32    ? src
                           : f == PanelFormat::bf16 ? bf16_to_float(float_to_bf16(src))
                                                    : f16_to_float(float_to_f16(src));
        ASSERT_EQ(std::memcmp(&row[size_t(q)], &want, 4), 0)
            << panel_format_name(f) << " row " << r << " col " << q;
      }
    }
    EXPECT_FALSE(p.row(n, row.data()));  // past the last row (the padding columns)
    EXPECT_FALSE(p.row(-1, row.data()));
  }
}

// int8 panels hold quantized values: an embedding read from them would differ from the table,
// so they refuse, and so does a Projection over them (the runner then uses the table).
TEST(PanelRows, Int8PanelsRefuseAndLeaveTheOutputAlone) {
  const int64_t n = 33, k = 8;
  const auto w = randn(size_t(n * k), 22);
  const PackedWeight p(w.data(), PanelFormat::f32, n, k, PanelFormat::i8);
  std::vector<float> row(static_cast<size_t>(k), 7.f);
  EXPECT_FALSE(p.row(0, row.data()));
  EXPECT_EQ(row, std::vector<float>(size_t(k), 7.f));

  const Tensor t = Tensor::from_floats(w, {n, k});
  const Projection i8(t, PanelFormat::i8, 0);
  EXPECT_FALSE(i8.can_gather_rows());
  const int32_t ids[] = {3};
  EXPECT_FALSE(i8.gather_rows(ids, 1, row.data()));
  EXPECT_EQ(row, std::vector<float>(size_t(k), 7.f));
}

TEST(PanelRows, ProjectionGathersRowsInIdOrderAndRejectsAnIdOutOfRange) {
  const int64_t n = 40, k = 5;
  const auto w = randn(size_t(n * k), 23);
  const Tensor t = Tensor::from_floats(w, {n, k});
  const Projection bf16(t.to(DType::bf16), PanelFormat::bf16, 0);
  ASSERT_TRUE(bf16.can_gather_rows());
  const int32_t ids[] = {39, 0, 39, 17};
  std::vector<float> out(4 * size_t(k));
  ASSERT_TRUE(bf16.gather_rows(ids, 4, out.data()));
  for (int i = 0; i < 4; ++i) {
    for (int64_t q = 0; q < k; ++q) {
      EXPECT_EQ(out[size_t(i * k + q)], bf16_to_float(float_to_bf16(w[size_t(ids[i] * k + q)])));
    }
  }
  const int32_t bad[] = {40};
  EXPECT_THROW(bf16.gather_rows(bad, 1, out.data()), std::out_of_range);
}

// Resident pages of this process (statm's second field).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * int64_t(::sysconf(_SC_PAGESIZE));
}

// The pool reads as zeros and costs memory only where written: mapping 256 MB grows the RSS by
// (almost) nothing; writing a quarter of it grows it by about that quarter.
TEST(KvCachePages, ZerosThatTakeMemoryOnlyOnceWritten) {
  const int64_t before = resident_bytes();
  Tensor pool = lazily_committed_zeros({1024, 64, 1024}, DType::f32);  // 256 MiB
  ASSERT_EQ(pool.sizes(), (std::vector<int64_t>{1024, 64, 1024}));
  EXPECT_EQ(pool.dtype(), DType::f32);
  // It starts on a 2 MB boundary, so transparent huge pages can back it from its first byte.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pool.data_ptr()) % (uintptr_t{2} << 20), 0u);
  const int64_t mapped = resident_bytes();
  EXPECT_LT(mapped - before, int64_t{16} << 20);
  // Reading sampled spots (one per block) commits nothing either: zero pages are shared.
  float* p = pool.data_ptr<float>();
  double sum = 0;
  for (int64_t b = 0; b < 1024; ++b) sum += p[b * 64 * 1024 + 5];
  EXPECT_EQ(sum, 0.0);
  std::fill(p, p + int64_t{256} * 64 * 1024, 1.f);
  const int64_t written = resident_bytes() - before;
  EXPECT_GT(written, int64_t{60} << 20);
  EXPECT_LT(written, int64_t{100} << 20);
  EXPECT_EQ(p[(int64_t{300} * 64 + 1) * 1024 + 2], 0.f);
  EXPECT_EQ(p[(int64_t{255} * 64 + 63) * 1024 + 1023], 1.f);
  Tensor bf16 = lazily_committed_zeros({3, 5}, DType::bf16);
  EXPECT_EQ(bf16.dtype(), DType::bf16);
  const auto* h = static_cast<const uint16_t*>(bf16.data_ptr());
  EXPECT_TRUE(std::all_of(h, h + 15, [](uint16_t v) { return v == 0; }));
}

}  // namespace
}  // namespace ps
