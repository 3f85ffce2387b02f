#include "model/small_m_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <stdexcept>

#include "model/runner_simd.h"

namespace ps {
namespace {

// Weight rows per unit of parallel work: 8 rows of k = 512..2816 floats stay in L1/L2 while
// every input row is dotted with them, so each weight byte comes from memory once.
constexpr int64_t kRowsPerBlock = 8;

// Output columns (weight rows) per register tile for MR input rows: MR x NR accumulators of 8
// lanes stay at or under 8 registers, so nothing spills even with 16 vector registers.
template <int MR>
constexpr int kTileCols = MR == 1   ? 8
                          : MR == 2 ? 4
                                    : 2;

// out[i][j] = dot(x row i, w row j) over k, for MR x NR rows. The accumulators are vector-typed
// locals indexed by constants after unrolling, which is what keeps GCC from spilling them to the
// stack (a float[MR][NR][8] array stays in memory and runs 3x slower). When pf is set, the same
// rows of the next block are prefetched into L2 as this tile streams, so DRAM keeps delivering
// while the core computes (measured from DRAM: M = 1 1.5x and M = 8 1.5-2x faster with it;
// prefetching into L1 instead thrashes it and loses most of the gain).
template <int MR, int NR>
PS_INLINE void dot_tile(const float* x, int64_t ldx, const float* w, int64_t k, const float* pf,
                        float (&out)[MR][NR]) {
  constexpr int L = kSimdLanes;
  F32x8 acc[MR][NR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) acc[i][j] = F32x8{};
  }
  int64_t p = 0;
  for (; p + L <= k; p += L) {
    if (pf != nullptr && p % 16 == 0) {  // one prefetch per 64-byte line
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j) __builtin_prefetch(pf + j * k + p, 0, 2);
    }
    F32x8 wv[NR];
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) wv[j] = load8(w + j * k + p);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const F32x8 xv = load8(x + i * ldx + p);
#pragma GCC unroll 16
      for (int j = 0; j < NR; ++j) acc[i][j] += xv * wv[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      float s = hsum8(acc[i][j]);
      for (int64_t q = p; q < k; ++q) s += x[i * ldx + q] * w[j * k + q];
      out[i][j] = s;
    }
  }
}

template <int MR, int NR>
PS_INLINE void store_tile(const LinearArgs& a, int64_t row, int64_t col, const float (&v)[MR][NR]) {
  for (int i = 0; i < MR; ++i) {
    float* y = a.y + (row + i) * a.ldy + col;
    for (int j = 0; j < NR; ++j) {
      float r = v[i][j];
      if (a.bias != nullptr) r += a.bias[col + j];
      y[j] = a.accumulate ? y[j] + r : r;
    }
  }
}

// Input rows [row, row + MR) against the weight rows [col_begin, col_end) of one block.
template <int MR>
PS_INLINE void rows_block(const LinearArgs& a, int64_t row, int64_t col_begin, int64_t col_end,
                          bool prefetch_next) {
  constexpr int NR = kTileCols<MR>;
  const float* x = a.x + row * a.ldx;
  const int64_t next = col_end - col_begin;  // distance to the same row of the next block
  int64_t col = col_begin;
  for (; col + NR <= col_end; col += NR) {
    const bool pf = prefetch_next && col + next + NR <= a.n;
    float v[MR][NR];
    dot_tile<MR, NR>(x, a.ldx, a.w + col * a.k, a.k, pf ? a.w + (col + next) * a.k : nullptr, v);
    store_tile<MR, NR>(a, row, col, v);
  }
  for (; col < col_end; ++col) {
    float v[MR][1];
    dot_tile<MR, 1>(x, a.ldx, a.w + col * a.k, a.k, nullptr, v);
    store_tile<MR, 1>(a, row, col, v);
  }
}

// Block by block: every input row passes over a block while it is in L1/L2, so each weight
// byte comes from memory once; the first pass prefetches the next block.
PS_SIMD_CLONES void column_range(const LinearArgs& a, int64_t col_begin, int64_t col_end) {
  for (int64_t c0 = col_begin; c0 < col_end; c0 += kRowsPerBlock) {
    const int64_t c1 = std::min(col_end, c0 + kRowsPerBlock);
    bool first = true;
    int64_t row = 0;
    for (; row + 4 <= a.m; row += 4, first = false) rows_block<4>(a, row, c0, c1, first);
    switch (a.m - row) {
      case 3:
        rows_block<3>(a, row, c0, c1, first);
        break;
      case 2:
        rows_block<2>(a, row, c0, c1, first);
        break;
      case 1:
        rows_block<1>(a, row, c0, c1, first);
        break;
      default:
        break;
    }
  }
}

LinearArgs with_dense_strides(LinearArgs a) {
  if (a.ldx == 0) a.ldx = a.k;
  if (a.ldy == 0) a.ldy = a.n;
  if (a.m < 0 || a.n <= 0 || a.k <= 0 || a.ldx < a.k || a.ldy < a.n || !a.x || !a.w || !a.y) {
    throw std::invalid_argument("linear: bad shape or null pointer");
  }
  return a;
}

}  // namespace

void small_m_linear(const LinearArgs& args) {
  const LinearArgs a = with_dense_strides(args);
  if (a.m == 0) return;
  const int64_t blocks = (a.n + kRowsPerBlock - 1) / kRowsPerBlock;
  // Below ~64k multiply-adds a block range is cheaper than waking the other threads.
  const int64_t grain = std::max<int64_t>(1, 65536 / (kRowsPerBlock * a.m * a.k));
  at::parallel_for(0, blocks, grain, [&](int64_t b0, int64_t b1) {
    column_range(a, b0 * kRowsPerBlock, std::min(a.n, b1 * kRowsPerBlock));
  });
}

void linear(const LinearArgs& args) {
  const LinearArgs a = with_dense_strides(args);
  if (a.m == 0) return;
  if (a.m <= kSmallMMaxRows) {
    small_m_linear(a);
    return;
  }
  // Views over the caller's memory: one sgemm, written in place, no copies.
  auto f32 = at::TensorOptions().dtype(at::kFloat);
  at::Tensor x = at::from_blob(const_cast<float*>(a.x), {a.m, a.k}, {a.ldx, 1}, f32);
  at::Tensor w = at::from_blob(const_cast<float*>(a.w), {a.n, a.k}, f32);
  at::Tensor y = at::from_blob(a.y, {a.m, a.n}, {a.ldy, 1}, f32);
  if (a.accumulate) {
    if (a.bias != nullptr) y.add_(at::from_blob(const_cast<float*>(a.bias), {a.n}, f32));
    y.addmm_(x, w.t());
  } else if (a.bias != nullptr) {
    at::addmm_out(y, at::from_blob(const_cast<float*>(a.bias), {a.n}, f32), x, w.t());
  } else {
    at::mm_out(y, x, w.t());
  }
}

}  // namespace ps
