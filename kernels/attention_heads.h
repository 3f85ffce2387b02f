#pragma once
// The paged-attention kernel's fast path (paged_attention.cpp): HG query heads of one row that
// share a KV head, against the tokens of one cache block, with head_dim a compile-time multiple
// of the vector width W. Each K row is loaded once for all HG heads; the HG x U dot products of
// a tile (HG * U = W) are summed by one transposing tree (attention_simd.h), not a horizontal sum
// each; max, exp and sums run on whole vectors. Scores of a block live in tile order,
// p[tile][head][u] for token tile * U + u, so no pass rearranges them.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/attention_simd.h"

namespace ps::attn {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Lane i of a tile holds head i / U, token i % U.
template <int W, int U, int... L>
constexpr typename Lanes<W>::I token_of_lane(std::integer_sequence<int, L...>) {
  return typename Lanes<W>::I{(L % U)...};
}

// The tile's W dot products q_h . k_u, unscaled; lane h * U + u. Tokens k, k + tok_stride, ...
// Vector loads of W elements per 64-byte cache line: one prefetch per line, not per load (a
// prefetch per 32-byte AVX2 load made a single long-context decode 15% slower).
template <int W, typename KV>
constexpr int loads_per_line() {
  return int(W * sizeof(KV)) >= 64 ? 1 : 64 / int(W * sizeof(KV));
}

// With kAhead, the same rows of the next block (`ahead` elements on) are prefetched as these
// are loaded (see attend_block_heads).
template <int W, int kD, int HG, bool kAhead, typename KV>
PS_INLINE Vec<W> score_tile(const float* q, const KV* k, int64_t tok_stride, int64_t ahead) {
  constexpr int U = W / HG;
  Vec<W> acc[W];
#pragma GCC unroll 16
  for (int s = 0; s < W; ++s) acc[s] = Vec<W>{};
#pragma GCC unroll 16
  for (int i = 0; i < kD / W; ++i) {
    Vec<W> kv[U];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u) {
      kv[u] = loadv<W>(k + u * tok_stride + i * W);
      if constexpr (kAhead) {
        if (i % loads_per_line<W, KV>() == 0) {
          __builtin_prefetch(k + ahead + u * tok_stride + i * W, 0, 2);
        }
      }
    }
#pragma GCC unroll 16
    for (int h = 0; h < HG; ++h) {
      const Vec<W> qv = loadv<W>(q + h * kD + i * W);
#pragma GCC unroll 16
      for (int u = 0; u < U; ++u) acc[tree_slot(W, h * U + u)] += qv * kv[u];
    }
  }
  return sum_each<W>(acc);
}

// One query head's dot with one token: a block's last tile, when it would run past the block.
template <int W, int kD, typename KV>
PS_INLINE float dot_row(const float* q, const KV* k) {
  Vec<W> a{};
#pragma GCC unroll 16
  for (int i = 0; i < kD / W; ++i) a += loadv<W>(q + i * W) * loadv<W>(k + i * W);
  return hsumv<W>(a);
}

// Per head of the tile's lanes: every lane of head h's S * 2 lanes ends holding their max (or
// sum), by swap steps of S, S / 2, ..., 1 lanes (S = U / 2 to cover a head's U lanes).
template <int W, int S, bool kMax>
PS_INLINE Vec<W> within_head(const Vec<W>& in) {
  Vec<W> v = in;
  if constexpr (S >= 1) {
    const Vec<W> o = __builtin_shuffle(v, xor_mask<W>(S, std::make_integer_sequence<int, W>{}));
    v = kMax ? (o > v ? o : v) : v + o;
    return within_head<W, S / 2, kMax>(v);
  }
  return v;
}

// acc[h] += sum over t < n of p(h, t) v_t for HV heads at once, acc in registers.
template <int W, int kD, int HG, int HV, bool kAhead, typename KV>
PS_INLINE void accumulate_values(const float* p, const KV* vb, int64_t tok_stride, int32_t n,
                                 int h0, float* acc, int64_t ahead) {
  constexpr int U = W / HG, C = kD / W;
  Vec<W> a[HV][C];
#pragma GCC unroll 16
  for (int h = 0; h < HV; ++h) {
#pragma GCC unroll 16
    for (int i = 0; i < C; ++i) a[h][i] = loadv<W>(acc + (h0 + h) * kD + i * W);
  }
  for (int32_t t = 0; t < n; ++t) {
    const float* pt = p + (t / U) * W + h0 * U + t % U;
    const KV* v = vb + t * tok_stride;
    Vec<W> vv[C];
#pragma GCC unroll 16
    for (int i = 0; i < C; ++i) {
      vv[i] = loadv<W>(v + i * W);
      if constexpr (kAhead) {
        if (i % loads_per_line<W, KV>() == 0) __builtin_prefetch(v + ahead + i * W, 0, 2);
      }
    }
#pragma GCC unroll 16
    for (int h = 0; h < HV; ++h) {
      const float ph = pt[h * U];  // scalar * vector: see splatv
#pragma GCC unroll 16
      for (int i = 0; i < C; ++i) a[h][i] += ph * vv[i];
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < HV; ++h) {
#pragma GCC unroll 16
    for (int i = 0; i < C; ++i) storev<W>(acc + (h0 + h) * kD + i * W, a[h][i]);
  }
}

// The first half of the online-softmax update of HG heads by tokens [0, n) of one block, n >= 1:
// their scores, the running max m (acc and the running sum l rescaled where it grew), the
// weights p = e^(score - m) in tile order, and l += their sum. q: the HG heads' query rows, kD
// floats apart. p: scratch of (block_size / U + 1) * W floats. Tokens past n but inside the
// block (block_size of them) may be read as K, never as V: their scores are masked to -inf.
//
// kAhead: the rows of the sequence's next cache block that this call's rows mirror, `ahead`
// elements from kb (here) and vb (accumulate_values), are prefetched line for line as these are
// loaded. A sequence's blocks are scattered, so the hardware prefetcher, which follows a stream
// within a 4 KB page, starts each block on demand misses; with the caches of many sequences in
// DRAM that latency was what a decode step's attention waited on (bench_model_paged_attention's
// Layers cases, bench/README.md). The hint is T1 (to L2), not T0: the step still read the cache
// at about half the streaming bandwidth, as if the misses in flight were capped, and with T1 16
// sequences x 224 tokens of a bf16 cache took 4255-5630 us against 4360-6405 (median 4634 vs
// 5164, seven pairs alternately; fp32 cache no different; AMD EPYC, Qwen3Layers cases).
template <int W, int kD, int HG, bool kAhead, typename KV>
PS_INLINE void weigh_block(const float* q, const KV* kb, int64_t tok_stride, int32_t n,
                           int32_t block_size, float scale, float* p, float* m, float* l,
                           float* acc, int64_t ahead) {
  static_assert(kD % W == 0 && W % HG == 0);
  constexpr int U = W / HG;
  using F = Vec<W>;
  const int32_t tiles = (n + U - 1) / U;
  const F sv = splatv<W>(scale);
  const F neg = splatv<W>(kNegInf);
  F block_max = neg;
  for (int32_t g = 0; g < tiles; ++g) {
    const int32_t t0 = g * U;
    F s;
    if (t0 + U <= block_size) {
      s = score_tile<W, kD, HG, kAhead>(q, kb + t0 * tok_stride, tok_stride, ahead) * sv;
    } else {  // the tile would read past the block: only its tokens below n, one at a time
      float tile[W];
      for (int i = 0; i < W; ++i) {
        const int32_t t = t0 + i % U;
        tile[i] = t < n ? dot_row<W, kD>(q + (i / U) * kD, kb + t * tok_stride) * scale : 0.f;
      }
      s = loadv<W>(tile);
    }
    if (t0 + U > n) {  // the last tile: lanes past n are not tokens of this step's causal range
      constexpr auto lane_token = token_of_lane<W, U>(std::make_integer_sequence<int, W>{});
      s = lane_token < (n - t0) ? s : neg;
    }
    storev<W>(p + g * W, s);
    block_max = s > block_max ? s : block_max;
  }
  block_max = within_head<W, U / 2, true>(block_max);
  // Move each head whose max grew to the new max: earlier terms were scaled by e^-m. exp(-inf)
  // = 0 covers the first block, whose acc and l are still zero.
  float mrow[W];
  for (int h = 0; h < HG; ++h) {
    const float bm = block_max[h * U];
    if (bm > m[h]) {
      const float c = std::exp(m[h] - bm);
      l[h] *= c;
      const F cv = splatv<W>(c);
#pragma GCC unroll 16
      for (int i = 0; i < kD / W; ++i) {
        storev<W>(acc + h * kD + i * W, loadv<W>(acc + h * kD + i * W) * cv);
      }
      m[h] = bm;
    }
    for (int u = 0; u < U; ++u) mrow[h * U + u] = m[h];
  }
  const F mv = loadv<W>(mrow);
  F sum{};
  for (int32_t g = 0; g < tiles; ++g) {
    // A masked lane's exp is exp8's floor, ~1e-38, not 0: against l >= 1 (the max term adds
    // e^0) it is below float resolution, and the V loop never reads it.
    const F e = expv<W>(loadv<W>(p + g * W) - mv);
    storev<W>(p + g * W, e);
    sum += e;
  }
  sum = within_head<W, U / 2, false>(sum);
  for (int h = 0; h < HG; ++h) l[h] += sum[h * U];
}

// The online-softmax update of HG heads' (running max m, running sum l, unnormalized output
// acc, kD floats a head) by tokens [0, n) of one block, n >= 1: weigh_block, then acc += p v.
template <int W, int kD, int HG, bool kAhead, typename KV>
PS_INLINE void attend_block_heads(const float* q, const KV* kb, const KV* vb, int64_t tok_stride,
                                  int32_t n, int32_t block_size, float scale, float* p, float* m,
                                  float* l, float* acc, int64_t ahead) {
  weigh_block<W, kD, HG, kAhead>(q, kb, tok_stride, n, block_size, scale, p, m, l, acc, ahead);
  // Heads per pass of the V loop: as many as keep their acc in half the register file.
  constexpr int kPerPass = (W == 16 ? 16 : 8) / (kD / W);
  constexpr int HV = kPerPass >= HG ? HG : (kPerPass >= 1 ? kPerPass : 1);
  static_assert(HG % HV == 0);
  accumulate_values<W, kD, HG, HV, kAhead>(p, vb, tok_stride, n, 0, acc, ahead);
#pragma GCC unroll 8
  for (int h0 = HV; h0 < HG; h0 += HV) {
    accumulate_values<W, kD, HG, HV, false>(p, vb, tok_stride, n, h0, acc, 0);
  }
}

}  // namespace ps::attn
