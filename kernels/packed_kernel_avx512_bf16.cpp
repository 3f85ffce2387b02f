// The bf16 dot-product kernel of the packed linear (--compute-dtype bfloat16, issue #38): weights
// in bf16_pairs panels, activations rounded to bf16 once per call, `vdpbf16ps` adding two exact
// bf16 products to each fp32 accumulator lane per instruction. Against the fp32 kernel
// (panel_avx512) that is twice the multiply-adds per instruction and no widening of the weights;
// what it gives up is the activations' low 16 bits, which is what a bf16 model computes in its
// own framework. Same 12x32 register tile and prefetches as panel_avx512.
#include "kernels/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

#include "kernels/panel_prefetch.h"

// x86-64-v4 plus AVX512_BF16. No inline function from a header is used (no std::), so no copy
// of shared code compiled for this ISA can be picked by the linker for other callers.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4,avx512bf16")
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ps {
namespace {

constexpr int kCols = 32;             // kPanelCols: two zmm vectors of 16 column pairs
constexpr int kPrefetchBytes = 2048;  // as panel_avx512 (packed_kernel_avx512.cpp says why)
constexpr int64_t kPairBytes = 128;   // one k-pair of a panel: 32 columns x 2 bf16

// y[0, n) = r (+ bias) (+ y), n <= 16.
__attribute__((always_inline)) inline void finish(__m512 r, float* y, const float* bias,
                                                  bool accumulate, int n) {
  const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u);
  if (bias != nullptr) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, bias));
  if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, y));
  _mm512_mask_storeu_ps(y, m, r);
}

// The pair (x[2q], x[2q + 1]) of a bf16 row in every 32-bit lane.
__attribute__((always_inline)) inline __m512bh pair_of(const uint16_t* xh, int64_t q) {
  int32_t bits;
  __builtin_memcpy(&bits, xh + 2 * q, 4);
  return (__m512bh)_mm512_set1_epi32(bits);
}

// Rows [row, row + R) against the whole panel: per k-pair, 2 weight loads, R broadcasts, 2R
// dot products.
template <int R>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, NextPanel& next) {
  __m512 a0[R], a1[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) a0[i] = a1[i] = _mm512_setzero_ps();
  const uint16_t* x = j.xh + row * j.ldxh;
  const int64_t ldx = j.ldxh;
  const char* w = static_cast<const char*>(j.panel);
  const int64_t pairs = (j.k + 1) / 2;  // a local: a store through y could alias j
  for (int64_t q = 0; q < pairs; ++q, w += kPairBytes) {
    _mm_prefetch(w + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(w + kPrefetchBytes + 64, _MM_HINT_T0);
    prefetch_next(next);
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(w);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(w + 64);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512bh b = pair_of(x + i * ldx, q);
      a0[i] = _mm512_dpbf16_ps(a0[i], w0, b);
      a1[i] = _mm512_dpbf16_ps(a1[i], w1, b);
    }
  }
  const int lo = j.cols < 16 ? j.cols : 16;
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
    finish(a0[i], y, j.bias, j.accumulate, lo);
    if (j.cols > 16)
      finish(a1[i], y + 16, j.bias ? j.bias + 16 : nullptr, j.accumulate, j.cols - 16);
  }
}

template <int R>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows,
                                                NextPanel& next) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R>(j, row, next);
    } else {
      tail<R - 1>(j, row, rows, next);
    }
  }
}

}  // namespace

void panel_avx512_bf16(const PanelJob& j) {
  constexpr int kRows = 12;
  NextPanel next = next_panel(j, (j.rows + kRows - 1) / kRows);
  // next_panel spreads the next panel over k steps; this kernel takes half as many (k-pairs).
  next.stride = next.stride * 2 < 128 ? next.stride * 2 : 128;
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) tile<kRows>(j, row, next);
  if (row < j.rows) tail<kRows - 1>(j, row, j.rows - row, next);
}

void round_rows_to_bf16(const float* x, int64_t ldx, int64_t m, int64_t k, uint16_t* out,
                        int64_t ldo) {
  for (int64_t r = 0; r < m; ++r) {
    const float* src = x + r * ldx;
    uint16_t* dst = out + r * ldo;
    int64_t c = 0;
    for (; c + 16 <= k; c += 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c),
                          (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + c)));
    }
    if (c < k) {
      const __mmask16 mask = __mmask16((1u << (k - c)) - 1u);
      const __m256i h = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, src + c));
      _mm256_mask_storeu_epi16(dst + c, mask, h);
    }
    if (k % 2 != 0) dst[k] = 0;
  }
}

}  // namespace ps

#pragma GCC pop_options
#endif
