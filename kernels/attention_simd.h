#pragma once
// Vectors of W floats for the paged-attention kernel's grouped-head path (attention_heads.h):
// W = 16 (one AVX-512 register) where the kernel runs on AVX-512, 8 on AVX2 and generic. The
// same GCC vector-extension source compiles to each; only what is inlined into a function with
// the ISA's target attribute gets its instructions (runner_simd.h, PS_ISA_DISPATCH_WIDTH).
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/runner_simd.h"

namespace ps::attn {

template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
  typedef uint32_t U __attribute__((vector_size(4 * W)));
  typedef uint16_t H __attribute__((vector_size(2 * W)));
};
template <int W>
using Vec = typename Lanes<W>::F;

template <int W>
PS_INLINE Vec<W> loadv(const float* p) {
  Vec<W> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// A bf16 cache row widened as it is read (a shift: exact).
template <int W>
PS_INLINE Vec<W> loadv(const uint16_t* p) {
  typename Lanes<W>::H h;
  std::memcpy(&h, p, sizeof(h));
  const typename Lanes<W>::U bits = __builtin_convertvector(h, typename Lanes<W>::U) << 16;
  Vec<W> v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}
template <int W>
PS_INLINE void storev(float* p, const Vec<W>& v) {
  std::memcpy(p, &v, sizeof(v));
}
// A broadcast. For 8 lanes the idiom of splat8 (s - 0 is s: one vbroadcastss). For 16 lanes
// that idiom, and a braced list of 16 copies, built in an inline function of the baseline
// translation unit, compile to 16 masked vbroadcastss filling the vector lane by lane once
// inlined into the AVX-512 function (GCC 12, seen in objdump); 0 + s costs one scalar add more
// than a broadcast. Inner loops multiply by the scalar instead (`s * v`), which compiles to an
// FMA with an embedded broadcast.
template <int W>
PS_INLINE Vec<W> splatv(float s) {
  if constexpr (W == 16) {
    return Vec<W>{} + s;
  } else {
    return s - Vec<W>{};
  }
}

template <int W, int... L>
constexpr typename Lanes<W>::I xor_mask(int s, std::integer_sequence<int, L...>) {
  return typename Lanes<W>::I{(L ^ s)...};
}
template <int W>
PS_INLINE float hsumv(const Vec<W>& in) {
  Vec<W> v = in;
  constexpr auto seq = std::make_integer_sequence<int, W>{};
  if constexpr (W == 16) v += __builtin_shuffle(v, xor_mask<W>(8, seq));
  v += __builtin_shuffle(v, xor_mask<W>(4, seq));
  v += __builtin_shuffle(v, xor_mask<W>(2, seq));
  v += __builtin_shuffle(v, xor_mask<W>(1, seq));
  return v[0];
}

// exp8 (runner_simd.h) for W lanes: the same range reduction and polynomial, the same error.
template <int W>
PS_INLINE Vec<W> expv(const Vec<W>& in) {
  using F = Vec<W>;
  using I = typename Lanes<W>::I;
  F x = in;
  const F lo = splatv<W>(-87.0f);
  const F hi = splatv<W>(88.0f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  const F magic = splatv<W>(12582912.0f);
  const F r = (x * splatv<W>(1.44269504088896341f) + magic) - magic;
  F f = x - r * splatv<W>(0.693359375f);
  f = f + r * splatv<W>(2.12194440e-4f);
  F p = splatv<W>(1.0f / 5040.0f);
  p = p * f + splatv<W>(1.0f / 720.0f);
  p = p * f + splatv<W>(1.0f / 120.0f);
  p = p * f + splatv<W>(1.0f / 24.0f);
  p = p * f + splatv<W>(1.0f / 6.0f);
  p = p * f + splatv<W>(0.5f);
  p = p * f + splatv<W>(1.0f);
  p = p * f + splatv<W>(1.0f);
  const I e = (__builtin_convertvector(r, I) + 127) << 23;
  F scale;
  std::memcpy(&scale, &e, sizeof(scale));
  return p * scale;
}

// Summing W vectors each to one float, all at once: a transposing tree of W - 1 pairwise steps
// (two shuffles and one add each) instead of W horizontal sums (log2(W) shuffles and adds each,
// and a dependent chain). A step with chunk size C takes two vectors whose lanes are 2C-lane
// partial sums of distinct inputs and halves every partial: output chunk j holds the sum of the
// two halves of block j / 2 of input vector j % 2.
constexpr int tree_lane(int W, int C, bool high, int lane) {
  const int j = lane / C;
  return (j & 1) * W + (j >> 1) * 2 * C + lane % C + (high ? C : 0);
}
template <int W, int C, bool kHigh, int... L>
constexpr typename Lanes<W>::I tree_mask(std::integer_sequence<int, L...>) {
  return typename Lanes<W>::I{tree_lane(W, C, kHigh, L)...};
}
template <int W, int C>
PS_INLINE void tree_step(Vec<W>* v) {
  constexpr auto seq = std::make_integer_sequence<int, W>{};
  constexpr auto lo = tree_mask<W, C, false>(seq);
  constexpr auto hi = tree_mask<W, C, true>(seq);
#pragma GCC unroll 16
  for (int k = 0; k < C; ++k) {
    v[k] = __builtin_shuffle(v[2 * k], v[2 * k + 1], lo) +
           __builtin_shuffle(v[2 * k], v[2 * k + 1], hi);
  }
  if constexpr (C > 1) tree_step<W, C / 2>(v);
}
// The input slot whose sum the tree leaves in output lane `lane`: the lane's bits reversed.
constexpr int tree_slot(int W, int lane) {
  int slot = 0;
  for (int bit = 1; bit < W; bit <<= 1) slot = 2 * slot + ((lane & bit) ? 1 : 0);
  return slot;
}
// v[W], overwritten. Returns the vector whose lane i is the sum of v[tree_slot(W, i)]'s lanes.
template <int W>
PS_INLINE Vec<W> sum_each(Vec<W>* v) {
  tree_step<W, W / 2>(v);
  return v[0];
}

}  // namespace ps::attn
