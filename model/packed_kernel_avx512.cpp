// AVX-512 micro-kernel of the packed linear. Intrinsics rather than GCC vector types: the
// kernel's speed is its register allocation, and intrinsics pin it (24 zmm accumulators, 2
// weight vectors, 1 broadcast; 27 of 32 registers).
#include "model/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

// Everything in this file is compiled for x86-64-v4. It uses no inline function from a header
// (no std::), so no AVX-512 copy of shared code can be picked by the linker for other callers.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")

namespace ps {
namespace {

constexpr int kCols = 32;  // kPanelCols: two zmm vectors

// y[0, n) = r (+ bias) (+ y), n <= 16; the masked loads never touch memory past n.
__attribute__((always_inline)) inline void finish(__m512 r, float* y, const float* bias,
                                                  bool accumulate, int n) {
  const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u);
  if (bias != nullptr) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, bias));
  if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, y));
  _mm512_mask_storeu_ps(y, m, r);
}

// Rows [row, row + R) against the whole panel: per step of k, 2 weight loads, R broadcasts,
// 2R FMAs.
template <int R>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row) {
  __m512 a0[R], a1[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) a0[i] = a1[i] = _mm512_setzero_ps();
  const float* x = j.x + row * j.ldx;
  const int64_t ldx = j.ldx;
  const float* w = j.panel;
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  for (int64_t p = 0; p < k; ++p, w += kCols) {
    const __m512 w0 = _mm512_loadu_ps(w);
    const __m512 w1 = _mm512_loadu_ps(w + 16);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const __m512 b = _mm512_set1_ps(x[i * ldx + p]);
      a0[i] = _mm512_fmadd_ps(b, w0, a0[i]);
      a1[i] = _mm512_fmadd_ps(b, w1, a1[i]);
    }
  }
  const int lo = j.cols < 16 ? j.cols : 16;
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
    finish(a0[i], y, j.bias, j.accumulate, lo);
    if (j.cols > 16) {
      finish(a1[i], y + 16, j.bias ? j.bias + 16 : nullptr, j.accumulate, j.cols - 16);
    }
  }
}

template <int R>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R>(j, row);
    } else {
      tail<R - 1>(j, row, rows);
    }
  }
}

}  // namespace

void panel_avx512(const PanelJob& j) {
  constexpr int kRows = 12;
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) tile<kRows>(j, row);
  if (row < j.rows) tail<kRows - 1>(j, row, j.rows - row);
}

}  // namespace ps

#pragma GCC pop_options
#endif
