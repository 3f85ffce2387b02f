#pragma once
// Several query rows of a prefill item against the same cache block at once (paged_attention.cpp).
// One row at a time, a block's work is a chain: scores, then the softmax's max and weights, then
// the weighted sum of V, each waiting on the last, and V is read again for every row. The rows'
// scores and weights are independent of each other, so the core overlaps them, and one pass over
// V serves every row's heads (bench_model_paged_attention's Qwen3 cases, docs/performance.md).
// Each row's arithmetic is its own call's, in the same order: the result is the one-row path's
// bit for bit (tests/model/paged_attention_paths_test.cpp).
#include <cstdint>

#include "kernels/attention_heads.h"

namespace ps::attn {

// One row's part of a block call: its HG heads' query rows (kD floats apart), weights scratch,
// and running sums.
struct BlockRow {
  const float* q;
  float* p;
  float* m;
  float* l;
  float* acc;
};

// acc[h] += sum over t < n of p(h, t) v_t for the R rows and their HG heads: Q = R HG query
// vectors, the head's kD floats in passes of CP vectors so that the Q x CP sums stay in
// registers while each V vector loaded serves all Q. p in weigh_block's tile order.
template <int W, int kD, int HG, int R>
PS_INLINE void accumulate_values_rows(const BlockRow* rows, const float* vb, int32_t n) {
  constexpr int U = W / HG, C = kD / W, Q = R * HG;
  constexpr int kSums = W == 16 ? 16 : 8;  // half the register file
  constexpr int CP = kSums / Q >= C ? C : (kSums / Q >= 1 ? kSums / Q : 1);
  static_assert(C % CP == 0);
#pragma GCC unroll 1
  for (int c0 = 0; c0 < C; c0 += CP) {
    Vec<W> a[Q][CP];
#pragma GCC unroll 16
    for (int j = 0; j < Q; ++j) {
      const float* acc = rows[j / HG].acc + (j % HG) * kD + c0 * W;
#pragma GCC unroll 16
      for (int i = 0; i < CP; ++i) a[j][i] = loadv<W>(acc + i * W);
    }
    for (int32_t t = 0; t < n; ++t) {
      const int32_t lane = (t / U) * W + t % U;
      const float* v = vb + t * kD + c0 * W;
      Vec<W> vv[CP];
#pragma GCC unroll 16
      for (int i = 0; i < CP; ++i) vv[i] = loadv<W>(v + i * W);
#pragma GCC unroll 16
      for (int j = 0; j < Q; ++j) {
        const float pj = rows[j / HG].p[lane + (j % HG) * U];  // scalar * vector: see splatv
#pragma GCC unroll 16
        for (int i = 0; i < CP; ++i) a[j][i] += pj * vv[i];
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < Q; ++j) {
      float* acc = rows[j / HG].acc + (j % HG) * kD + c0 * W;
#pragma GCC unroll 16
      for (int i = 0; i < CP; ++i) storev<W>(acc + i * W, a[j][i]);
    }
  }
}

// attend_block_heads for R rows that attend to the same n tokens of a packed block (kD floats a
// token).
template <int W, int kD, int HG, int R>
PS_INLINE void attend_block_rows(const BlockRow* rows, const float* kb, const float* vb, int32_t n,
                                 int32_t block_size, float scale) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    weigh_block<W, kD, HG, false>(rows[r].q, kb, kD, n, block_size, scale, rows[r].p, rows[r].m,
                                  rows[r].l, rows[r].acc, 0);
  }
  accumulate_values_rows<W, kD, HG, R>(rows, vb, n);
}

}  // namespace ps::attn
