#pragma once
// Two query rows of a prefill item against the same cache block at once (paged_attention.cpp).
// One row at a time, a block's work is a chain: scores, then the softmax's max and weights, then
// the weighted sum of V, each waiting on the last, and V is read again for every row. Two rows'
// scores and weights are independent of each other, so the core overlaps them, and one pass over
// V serves both rows' heads (bench_model_paged_attention's Qwen3 cases, docs/performance.md).
// Each row's arithmetic is its own call's, in the same order: the result is the one-row path's
// bit for bit (tests/model/paged_attention_paths_test.cpp).
#include <cstdint>

#include "kernels/attention_heads.h"

namespace ps::attn {

// acc_r[h] += sum over t < n of p_r(h, t) v_t for both rows r and their HG heads: Q = 2 HG
// query vectors, the head's kD floats in passes of CP vectors so that the Q x CP sums stay in
// registers while each V vector loaded serves all Q. p_r in weigh_block's tile order.
template <int W, int kD, int HG>
PS_INLINE void accumulate_values_pair(const float* pa, const float* pb, const float* vb, int32_t n,
                                      float* acca, float* accb) {
  constexpr int U = W / HG, C = kD / W, Q = 2 * HG;
  constexpr int kSums = W == 16 ? 16 : 8;  // half the register file
  constexpr int CP = kSums / Q >= C ? C : (kSums / Q >= 1 ? kSums / Q : 1);
  static_assert(C % CP == 0);
#pragma GCC unroll 1
  for (int c0 = 0; c0 < C; c0 += CP) {
    Vec<W> a[Q][CP];
#pragma GCC unroll 16
    for (int j = 0; j < Q; ++j) {
      float* acc = (j < HG ? acca : accb) + (j % HG) * kD + c0 * W;
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
        const float pj = (j < HG ? pa : pb)[lane + (j % HG) * U];  // scalar * vector: splatv
#pragma GCC unroll 16
        for (int i = 0; i < CP; ++i) a[j][i] += pj * vv[i];
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < Q; ++j) {
      float* acc = (j < HG ? acca : accb) + (j % HG) * kD + c0 * W;
#pragma GCC unroll 16
      for (int i = 0; i < CP; ++i) storev<W>(acc + i * W, a[j][i]);
    }
  }
}

// attend_block_heads for two rows a and b that attend to the same n tokens of a packed block
// (kD floats a token): their HG heads' query rows qa and qb, running sums (ma, la, acca) and
// (mb, lb, accb), weights scratch pa and pb.
template <int W, int kD, int HG>
PS_INLINE void attend_block_pair(const float* qa, const float* qb, const float* kb, const float* vb,
                                 int32_t n, int32_t block_size, float scale, float* pa, float* pb,
                                 float* ma, float* la, float* acca, float* mb, float* lb,
                                 float* accb) {
  weigh_block<W, kD, HG, false>(qa, kb, kD, n, block_size, scale, pa, ma, la, acca, 0);
  weigh_block<W, kD, HG, false>(qb, kb, kD, n, block_size, scale, pb, mb, lb, accb, 0);
  accumulate_values_pair<W, kD, HG>(pa, pb, vb, n, acca, accb);
}

}  // namespace ps::attn
