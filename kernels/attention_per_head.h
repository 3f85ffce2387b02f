#pragma once
// The paged-attention kernel's per-head path (paged_attention.cpp): one query head against the
// tokens of one cache block at a time, for any head_dim. It serves the head dims the grouped path
// (attention_heads.h) has no compile-time instance of, soft-capped scores, and CPUs without AVX2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/runner_simd.h"

namespace ps::attn_per_head {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// K/V elements as fp32: a bf16 cache is widened as it is read (a shift: exact).
using ps::load8;  // the fp32 one (runner_simd.h), which this overload would otherwise hide
PS_INLINE F32x8 load8(const uint16_t* p) {
  typedef uint16_t U16x8 __attribute__((vector_size(16)));
  typedef uint32_t U32x8 __attribute__((vector_size(32)));
  U16x8 h;
  std::memcpy(&h, p, sizeof(h));
  const U32x8 bits = __builtin_convertvector(h, U32x8) << 16;
  F32x8 v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}
PS_INLINE float widen(float f) {
  return f;
}
PS_INLINE float widen(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The per-head path, for a head_dim the grouped path (attention_heads.h) has no compile-time
// instance of: one query head against tokens [0, n) of a block at a time.
template <typename KV>
PS_INLINE float dot(const float* q, const KV* k, int32_t D) {
  F32x8 a0{}, a1{};
  int32_t d = 0;
  for (; d + 16 <= D; d += 16) {
    a0 += load8(q + d) * load8(k + d);
    a1 += load8(q + d + 8) * load8(k + d + 8);
  }
  for (; d + 8 <= D; d += 8) a0 += load8(q + d) * load8(k + d);
  float s = hsum8(a0 + a1);
  for (; d < D; ++d) s += q[d] * widen(k[d]);
  return s;
}

// The online-softmax update of (running max m, running sum l, unnormalized output acc) by
// tokens [0, n) of one block; p: scratch of n rounded up to 8 floats.
template <typename KV>
PS_INLINE void attend_block(const float* q, const KV* kb, const KV* vb, int64_t tok_stride,
                            int32_t n, int32_t D, float scale, float softcap, float* p, float& m,
                            float& l, float* acc) {
  for (int32_t t = 0; t < n; ++t) p[t] = dot(q, kb + t * tok_stride, D) * scale;
  if (softcap > 0) {
    for (int32_t t = 0; t < n; ++t) p[t] = softcap * std::tanh(p[t] / softcap);
  }
  float block_max = kNegInf;
  for (int32_t t = 0; t < n; ++t) block_max = std::max(block_max, p[t]);
  if (block_max > m) {
    // The earlier blocks' terms were scaled by e^-m; move them to the new max. exp(-inf) = 0
    // covers the first block, whose acc and l are still zero.
    const float c = std::exp(m - block_max);
    l *= c;
    const F32x8 cv = splat8(c);
    int32_t d = 0;
    for (; d + 8 <= D; d += 8) store8(acc + d, load8(acc + d) * cv);
    for (; d < D; ++d) acc[d] *= c;
    m = block_max;
  }
  const int32_t n8 = (n + 7) / 8 * 8;
  for (int32_t t = n; t < n8; ++t) p[t] = kNegInf;
  const F32x8 mv = splat8(m);
  F32x8 sum{};
  for (int32_t t = 0; t < n8; t += 8) {
    F32x8 e = exp8(load8(p + t) - mv);
    store8(p + t, e);
    sum += e;
  }
  // Lanes past n hold exp8's floor (~1e-38), not 0: subtract them instead of masking.
  float lsum = hsum8(sum);
  for (int32_t t = n; t < n8; ++t) lsum -= p[t];
  l += lsum;
  // acc += sum of p[t] v[t]
  int32_t d = 0;
  for (; d + 8 <= D; d += 8) {
    F32x8 a = load8(acc + d);
    for (int32_t t = 0; t < n; ++t) a += splat8(p[t]) * load8(vb + t * tok_stride + d);
    store8(acc + d, a);
  }
  for (; d < D; ++d) {
    float a = acc[d];
    for (int32_t t = 0; t < n; ++t) a += p[t] * widen(vb[t * tok_stride + d]);
    acc[d] = a;
  }
}

}  // namespace ps::attn_per_head
