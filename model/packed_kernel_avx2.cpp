// AVX2 + FMA micro-kernel of the packed linear, for the 16 ymm registers of this ISA. The
// earlier kernel reused the AVX-512 source on 16-float GCC vectors; on AVX2 each of them is two
// registers and GCC kept the accumulators on the stack, moving halves through general
// registers on every step (objdump: vmovq/vpinsrq around each FMA), ~14 GFLOP/s. Intrinsics pin
// the allocation: a 6x16 tile = 12 accumulators + 2 weight vectors + 1 broadcast.
#include "model/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

// Compiled for x86-64-v3 (AVX2, FMA). No inline function from a header is used (no std::),
// so no AVX2 copy of shared code can be picked by the linker for baseline callers.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")

namespace ps {
namespace {

constexpr int kCols = 32;  // kPanelCols: four ymm vectors

// y[0, n) = r (+ bias) (+ y), n <= 8, in the same order as the full-width path.
__attribute__((always_inline)) inline void finish(__m256 r, float* y, const float* bias,
                                                  bool accumulate, int n) {
  if (n >= 8) {
    if (bias != nullptr) r = _mm256_add_ps(r, _mm256_loadu_ps(bias));
    if (accumulate) r = _mm256_add_ps(r, _mm256_loadu_ps(y));
    _mm256_storeu_ps(y, r);
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, r);
  for (int t = 0; t < n; ++t) {
    float s = lanes[t];
    if (bias != nullptr) s += bias[t];
    y[t] = accumulate ? y[t] + s : s;
  }
}

// Rows [row, row + R) against panel columns [c0, c0 + 8 NV): per step of k, NV weight loads,
// R broadcasts, R NV FMAs. NV = 2 for the 6-row tile (the panel in two passes, each reading
// every other cache line of it); NV = 4 (the whole panel at once) for R <= 3, so a decode
// step with few rows streams each panel once, contiguously.
template <int R, int NV>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, int c0) {
  __m256 a[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) a[i][v] = _mm256_setzero_ps();
  }
  const float* x = j.x + row * j.ldx;
  const int64_t ldx = j.ldx;
  const float* w = j.panel + c0;
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  for (int64_t p = 0; p < k; ++p, w += kCols) {
    __m256 wv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) wv[v] = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 b = _mm256_broadcast_ss(x + i * ldx + p);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) a[i][v] = _mm256_fmadd_ps(b, wv[v], a[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int c = c0 + 8 * v;
      if (c >= j.cols) break;
      finish(a[i][v], y + c, j.bias ? j.bias + c : nullptr, j.accumulate,
             j.cols - c < 8 ? j.cols - c : 8);
    }
  }
}

// R rows against the whole panel.
template <int R>
__attribute__((always_inline)) inline void rows_of(const PanelJob& j, int64_t row) {
  if constexpr (R <= 3) {
    tile<R, 4>(j, row, 0);
  } else {
    tile<R, 2>(j, row, 0);
    if (j.cols > 16) tile<R, 2>(j, row, 16);
  }
}

template <int R>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows) {
  if constexpr (R > 0) {
    if (rows == R) {
      rows_of<R>(j, row);
    } else {
      tail<R - 1>(j, row, rows);
    }
  }
}

}  // namespace

void panel_avx2(const PanelJob& j) {
  constexpr int kRows = 6;
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) rows_of<kRows>(j, row);
  if (row < j.rows) tail<kRows - 1>(j, row, j.rows - row);
}

}  // namespace ps

#pragma GCC pop_options
#endif
