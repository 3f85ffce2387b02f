// The int8 dot-product kernel of the packed linear on the avx2 ISA (--quantization int8
// --compute-dtype int8 on a CPU with AVX-VNNI but no AVX-512, or with --kernel-isa avx2): the
// VEX form of `vpdpbusd` on 256-bit registers, four u8 x s8 products into each int32 lane per
// instruction, over the same i8_quads panels and the same per-row int8 activations as
// panel_avx512_vnni. The integer sums are exact, so a row's result is that kernel's bit for bit
// and does not depend on the batch (packed_kernel_avx512_vnni.cpp says how the +128 offset of
// the activations is taken off).
//
// Sixteen ymm registers: a tile is 6 rows x 16 columns (12 accumulators, 2 weight vectors, one
// broadcast), two passes a panel, the first over each k-quad's columns 0-15 (its first cache
// line), the second over 16-31 (its second).
#include "kernels/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

#include "kernels/panel_prefetch.h"

// x86-64-v3 plus AVX-VNNI. No inline function from a header is used (no std::).
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3,avxvnni")
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ps {
namespace {

constexpr int kPrefetchBytes = 2048;  // as panel_avx512_vnni
constexpr int64_t kQuadBytes = 128;   // one k-quad of a panel: 32 columns x 4 int8
constexpr int kRows = 6;

// y[0, n) = (acc - 128 colsum) * row_scale * col_scale (+ bias) (+ y), n <= 8. The same
// operations, in the same order, as panel_avx512_vnni's finish.
__attribute__((always_inline)) inline void finish(__m256i acc, const int32_t* sums, float row_scale,
                                                  const float* scales, float* y, const float* bias,
                                                  bool accumulate, int n) {
  const __m256i m =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i exact = _mm256_sub_epi32(acc, _mm256_slli_epi32(_mm256_maskload_epi32(sums, m), 7));
  __m256 r = _mm256_mul_ps(_mm256_cvtepi32_ps(exact), _mm256_set1_ps(row_scale));
  const __m256 b = bias != nullptr ? _mm256_maskload_ps(bias, m) : _mm256_setzero_ps();
  r = _mm256_fmadd_ps(r, _mm256_maskload_ps(scales, m), b);
  if (accumulate) r = _mm256_add_ps(r, _mm256_maskload_ps(y, m));
  _mm256_maskstore_ps(y, m, r);
}

// Rows [row, row + R) x the 16 columns at `half` (0 or 1) of the panel.
template <int R>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, int half,
                                                NextPanel& next) {
  __m256i a0[R], a1[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) a0[i] = a1[i] = _mm256_setzero_si256();
  const uint8_t* x = j.xq + row * j.ldxq;
  const int64_t ldx = j.ldxq;
  const char* w = static_cast<const char*>(j.panel) + half * 64;
  const int64_t quads = (j.k + 3) / 4;  // a local: a store through y could alias j
  for (int64_t q = 0; q < quads; ++q, w += kQuadBytes) {
    _mm_prefetch(w + kPrefetchBytes, _MM_HINT_T0);
    prefetch_next(next);
    const __m256i w0 = _mm256_loadu_si256((const __m256i*)w);
    const __m256i w1 = _mm256_loadu_si256((const __m256i*)(w + 32));
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      int32_t bits;
      __builtin_memcpy(&bits, x + i * ldx + 4 * q, 4);
      const __m256i b = _mm256_set1_epi32(bits);
      a0[i] = _mm256_dpbusd_avx_epi32(a0[i], b, w0);
      a1[i] = _mm256_dpbusd_avx_epi32(a1[i], b, w1);
    }
  }
  const int c0 = half * 16;
  const int left = j.cols - c0;
  const int lo = left < 8 ? left : 8;
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy + c0;
    const float rs = j.x_scales[row + i];
    const float* bias = j.bias != nullptr ? j.bias + c0 : nullptr;
    finish(a0[i], j.col_sums + c0, rs, j.scales + c0, y, bias, j.accumulate, lo);
    if (left > 8) {
      finish(a1[i], j.col_sums + c0 + 8, rs, j.scales + c0 + 8, y + 8,
             bias != nullptr ? bias + 8 : nullptr, j.accumulate, left - 8);
    }
  }
}

template <int R>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows,
                                                int half, NextPanel& next) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R>(j, row, half, next);
    } else {
      tail<R - 1>(j, row, rows, half, next);
    }
  }
}

}  // namespace

void panel_avx2_vnni(const PanelJob& j) {
  const int halves = j.cols > 16 ? 2 : 1;
  NextPanel next = next_panel(j, halves * ((j.rows + kRows - 1) / kRows));
  // next_panel spreads the next panel over k steps; this kernel takes a quarter as many.
  next.stride = next.stride * 4 < 128 ? next.stride * 4 : 128;
  for (int half = 0; half < halves; ++half) {
    int64_t row = 0;
    for (; row + kRows <= j.rows; row += kRows) tile<kRows>(j, row, half, next);
    if (row < j.rows) tail<kRows - 1>(j, row, j.rows - row, half, next);
  }
}

// quantize_rows_u8 on AVX2: the same scale (max |x| / 127), the same product by its inverse, the
// same rounding (nearest even) and clamp, so the same bytes.
void quantize_rows_u8_avx2(const float* x, int64_t ldx, int64_t m, int64_t k, uint8_t* out,
                           int64_t ldo, float* scales) {
  const int64_t padded = (k + 3) / 4 * 4;
  const __m256 sign = _mm256_set1_ps(-0.f);
  for (int64_t r = 0; r < m; ++r) {
    const float* src = x + r * ldx;
    uint8_t* dst = out + r * ldo;
    __m256 amax = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 8 <= k; c += 8)
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + c)));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, amax);
    float mx = 0.f;
    for (int i = 0; i < 8; ++i) mx = lanes[i] > mx ? lanes[i] : mx;
    for (; c < k; ++c) {
      const float a = src[c] < 0.f ? -src[c] : src[c];
      mx = a > mx ? a : mx;
    }
    const float s = mx / 127.f;
    scales[r] = s;
    const float inv = s > 0.f ? 1.f / s : 0.f;
    const __m256 invv = _mm256_set1_ps(inv);
    const __m256 lo = _mm256_set1_ps(-127.f), hi = _mm256_set1_ps(127.f);
    const __m256i offset = _mm256_set1_epi32(128);
    for (c = 0; c + 8 <= k; c += 8) {
      __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + c), invv);
      v = _mm256_min_ps(
          _mm256_max_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), lo), hi);
      alignas(32) int32_t q[8];
      _mm256_store_si256((__m256i*)q, _mm256_add_epi32(_mm256_cvtps_epi32(v), offset));
      for (int i = 0; i < 8; ++i) dst[c + i] = uint8_t(q[i]);
    }
    for (; c < k; ++c) {
      float v = __builtin_nearbyintf(src[c] * inv);
      v = v < -127.f ? -127.f : (v > 127.f ? 127.f : v);
      dst[c] = uint8_t(int32_t(v) + 128);
    }
    for (c = k; c < padded; ++c) dst[c] = 128;  // q = 0 against the panels' zero padding
  }
}

}  // namespace ps

#pragma GCC pop_options
#endif
