// The int8 dot-product kernel of the packed linear (--quantization int8 --compute-dtype int8,
// issue #38): int8 weights per output channel in i8_quads panels, activations quantized per row
// to int8 once per call, `vpdpbusd` (AVX512_VNNI) adding four u8 x s8 products to each int32
// lane per instruction. The activations go in unsigned (q + 128); each column's sum of weights,
// times 128, is taken off at the end, so the integer result is exactly sum(q_x q_w) and does not
// depend on the order of the sum: a row's result does not depend on the batch. Same 12x32 tile
// as panel_avx512.
#include "kernels/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

#include "kernels/panel_prefetch.h"

// x86-64-v4 plus AVX512_VNNI. No inline function from a header is used (no std::).
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4,avx512vnni")
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ps {
namespace {

constexpr int kPrefetchBytes = 2048;  // as panel_avx512 (packed_kernel_avx512.cpp says why)
constexpr int64_t kQuadBytes = 128;   // one k-quad of a panel: 32 columns x 4 int8

// y[0, n) = (acc - 128 colsum) * row_scale * col_scale (+ bias) (+ y), n <= 16.
__attribute__((always_inline)) inline void finish(__m512i acc, const int32_t* sums, float row_scale,
                                                  const float* scales, float* y, const float* bias,
                                                  bool accumulate, int n) {
  const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u);
  const __m512i exact =
      _mm512_sub_epi32(acc, _mm512_slli_epi32(_mm512_maskz_loadu_epi32(m, sums), 7));
  __m512 r = _mm512_mul_ps(_mm512_cvtepi32_ps(exact), _mm512_set1_ps(row_scale));
  const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias) : _mm512_setzero_ps();
  r = _mm512_fmadd_ps(r, _mm512_maskz_loadu_ps(m, scales), b);
  if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, y));
  _mm512_mask_storeu_ps(y, m, r);
}

template <int R>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, NextPanel& next) {
  __m512i a0[R], a1[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) a0[i] = a1[i] = _mm512_setzero_si512();
  const uint8_t* x = j.xq + row * j.ldxq;
  const int64_t ldx = j.ldxq;
  const char* w = static_cast<const char*>(j.panel);
  const int64_t quads = (j.k + 3) / 4;  // a local: a store through y could alias j
  for (int64_t q = 0; q < quads; ++q, w += kQuadBytes) {
    _mm_prefetch(w + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(w + kPrefetchBytes + 64, _MM_HINT_T0);
    prefetch_next(next);
    const __m512i w0 = _mm512_loadu_si512(w);
    const __m512i w1 = _mm512_loadu_si512(w + 64);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      int32_t bits;
      __builtin_memcpy(&bits, x + i * ldx + 4 * q, 4);
      const __m512i b = _mm512_set1_epi32(bits);
      a0[i] = _mm512_dpbusd_epi32(a0[i], b, w0);
      a1[i] = _mm512_dpbusd_epi32(a1[i], b, w1);
    }
  }
  const int lo = j.cols < 16 ? j.cols : 16;
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
    const float rs = j.x_scales[row + i];
    finish(a0[i], j.col_sums, rs, j.scales, y, j.bias, j.accumulate, lo);
    if (j.cols > 16) {
      finish(a1[i], j.col_sums + 16, rs, j.scales + 16, y + 16, j.bias ? j.bias + 16 : nullptr,
             j.accumulate, j.cols - 16);
    }
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

void panel_avx512_vnni(const PanelJob& j) {
  constexpr int kRows = 12;
  NextPanel next = next_panel(j, (j.rows + kRows - 1) / kRows);
  // next_panel spreads the next panel over k steps; this kernel takes a quarter as many.
  next.stride = next.stride * 4 < 128 ? next.stride * 4 : 128;
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) tile<kRows>(j, row, next);
  if (row < j.rows) tail<kRows - 1>(j, row, j.rows - row, next);
}

void quantize_rows_u8(const float* x, int64_t ldx, int64_t m, int64_t k, uint8_t* out, int64_t ldo,
                      float* scales) {
  const int64_t padded = (k + 3) / 4 * 4;
  for (int64_t r = 0; r < m; ++r) {
    const float* src = x + r * ldx;
    uint8_t* dst = out + r * ldo;
    __m512 amax = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= k; c += 16)
      amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_loadu_ps(src + c)));
    if (c < k) {
      const __mmask16 mask = __mmask16((1u << (k - c)) - 1u);
      amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_maskz_loadu_ps(mask, src + c)));
    }
    // As the weights are quantized (panel_pack.cpp): s = max|x| / 127, q = round(x * (1 / s)).
    const float s = _mm512_reduce_max_ps(amax) / 127.f;
    scales[r] = s;
    const __m512 inv = _mm512_set1_ps(s > 0.f ? 1.f / s : 0.f);
    const __m512 lo = _mm512_set1_ps(-127.f), hi = _mm512_set1_ps(127.f);
    const __m512i offset = _mm512_set1_epi32(128);
    for (c = 0; c < k; c += 16) {
      const int64_t left = k - c;
      const __mmask16 mask = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1u);
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, src + c), inv);
      v = _mm512_min_ps(_mm512_max_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT), lo), hi);
      const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), offset);
      _mm512_mask_cvtepi32_storeu_epi8(dst + c, mask, q);
    }
    for (c = k; c < padded; ++c) dst[c] = 128;  // q = 0 against the panels' zero padding
  }
}

}  // namespace ps

#pragma GCC pop_options
#endif
