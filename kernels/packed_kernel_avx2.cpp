// AVX2 + FMA micro-kernel of the packed linear, for the 16 ymm registers of this ISA. The
// earlier kernel reused the AVX-512 source on 16-float GCC vectors; on AVX2 each of them is two
// registers and GCC kept the accumulators on the stack, moving halves through general
// registers on every step (objdump: vmovq/vpinsrq around each FMA), ~14 GFLOP/s. Intrinsics pin
// the allocation: a 6x16 tile = 12 accumulators + 2 weight vectors + 1 broadcast.
#include "kernels/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

#include "kernels/panel_prefetch.h"

// Compiled for x86-64-v3 (AVX2, FMA). No inline function from a header is used (no std::),
// so no AVX2 copy of shared code can be picked by the linker for baseline callers;
// panel_prefetch.h's functions are static, a private copy in each file.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")

namespace ps {
namespace {

constexpr int kCols = 32;  // kPanelCols: four ymm vectors
// Software prefetch 2 KB ahead of the panel stream, as in the AVX-512 kernel (which says why).
constexpr int kPrefetchBytes = 2048;

// y[0, n) = r (+ bias) (+ y), n <= 8, in the same order as the full-width path. With `scale`
// (int8 per channel) the first step is one fused r * scale + (bias or 0).
__attribute__((always_inline)) inline void finish(__m256 r, float* y, const float* bias,
                                                  const float* scale, bool accumulate, int n) {
  if (n >= 8) {
    if (scale != nullptr) {
      const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
      r = _mm256_fmadd_ps(r, _mm256_loadu_ps(scale), b);
    } else if (bias != nullptr) {
      r = _mm256_add_ps(r, _mm256_loadu_ps(bias));
    }
    if (accumulate) r = _mm256_add_ps(r, _mm256_loadu_ps(y));
    _mm256_storeu_ps(y, r);
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, r);
  for (int t = 0; t < n; ++t) {
    float s = lanes[t];
    if (scale != nullptr) {
      s = __builtin_fmaf(s, scale[t], bias != nullptr ? bias[t] : 0.f);
    } else if (bias != nullptr) {
      s += bias[t];
    }
    y[t] = accumulate ? y[t] + s : s;
  }
}

// 8 weights of a panel row widened to fp32 (F16C converts f16; int8's scale is applied by the
// caller: per group on the weights, per channel on the finished chain).
template <PanelFormat F>
struct Wide;
template <>
struct Wide<PanelFormat::f32> {
  using T = float;
  __attribute__((always_inline)) static inline __m256 load(const float* w) {
    return _mm256_loadu_ps(w);
  }
};
template <>
struct Wide<PanelFormat::bf16> {
  using T = uint16_t;
  __attribute__((always_inline)) static inline __m256 load(const uint16_t* w) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
};
template <>
struct Wide<PanelFormat::f16> {
  using T = uint16_t;
  __attribute__((always_inline)) static inline __m256 load(const uint16_t* w) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  }
};
template <>
struct Wide<PanelFormat::i8> {
  using T = int8_t;
  __attribute__((always_inline)) static inline __m256 load(const int8_t* w) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w))));
  }
};

// MXFP4 panels are decoded in the tile itself (see there).
template <>
struct Wide<PanelFormat::mxfp4> {
  using T = uint8_t;
};

// One step of k for R rows and NV weight vectors: R broadcasts, R NV FMAs.
template <int R, int NV>
__attribute__((always_inline)) inline void step(__m256 (&a)[R][NV], const __m256 (&wv)[NV],
                                                const float* x, int64_t ldx, int64_t p) {
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    const __m256 b = _mm256_broadcast_ss(x + i * ldx + p);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) a[i][v] = _mm256_fmadd_ps(b, wv[v], a[i][v]);
  }
}

// Rows [row, row + R) against panel columns [c0, c0 + 8 NV): per step of k, NV weight loads,
// R broadcasts, R NV FMAs. NV = 2 for the 6-row tile (the panel in two passes, each reading
// every other cache line of it); NV = 4 (the whole panel at once) for R <= 3, so a decode
// step with few rows streams each panel once, contiguously.
template <int R, int NV, PanelFormat F, bool Ahead = true>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, int c0,
                                                NextPanel& next) {
  using T = typename Wide<F>::T;
  __m256 a[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) a[i][v] = _mm256_setzero_ps();
  }
  const float* x = j.x + row * j.ldx;
  const int64_t ldx = j.ldx;
  const T* w = static_cast<const T*>(j.panel) + c0;
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  // int8 per channel (one group spanning k) streams the integers and scales the result once
  // (packed_kernels.h): one multiply per weight vector fewer, a third of the vector ALU work
  // per weight (batch-1 int8 decode 6-9% faster, bench/README.md).
  const bool per_channel = F == PanelFormat::i8 && j.group >= k;
  if constexpr (F == PanelFormat::mxfp4) {
    // A k-step's 16 bytes: the low nibbles are columns 0-15, the high ones 16-31. vpshufb looks
    // the codes up as int8 twice their E2M1 value (0, 1, 2, 3, 4, 6, 8, 12 and negatives), vector
    // v (columns c0 + 8v..+8) widens 8 of those bytes to fp32, and the group's scale carries the
    // halving: 2^(e - 127) from the exponent bits (as in the AVX-512 kernel) times 0.5, exact
    // down to e = 1. So the widened weights are exact, the fp32 kernel's. (A vpermps table per
    // vector, with the sign taken from bit 3, took ~30% more instructions a k-step.)
    const __m128i lut = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m256 half = _mm256_set1_ps(0.5f);
    const uint8_t* e = j.exponents + c0;
    w = static_cast<const T*>(j.panel);
    for (int64_t g0 = 0; g0 < k; g0 += 32, e += kCols) {
      __m256 sv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        sv[v] = _mm256_mul_ps(
            _mm256_castsi256_ps(_mm256_slli_epi32(
                _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e + 8 * v))),
                23)),
            half);
      }
      for (int64_t p = g0; p < g0 + 32; ++p, w += kCols / 2) {
        if (Ahead && (p & 3) == 0) {  // one prefetch per 64-byte line (4 k-steps)
          _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
        }
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
        const __m128i low = _mm_shuffle_epi8(lut, _mm_and_si128(bytes, nibble));
        const __m128i high = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(bytes, 4), nibble));
        __m256 wv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          const int vv = c0 / 8 + v;  // which 8 of the panel's 32 columns
          __m128i q = vv < 2 ? low : high;
          if (vv & 1) q = _mm_unpackhi_epi64(q, q);
          wv[v] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), sv[v]);
        }
        step<R, NV>(a, wv, x, ldx, p);
      }
    }
  } else if (F == PanelFormat::i8 && !per_channel) {
    const float* s = j.scales + c0;
    const int64_t group = j.group;
    for (int64_t g0 = 0; g0 < k; g0 += group, s += kCols) {
      __m256 sv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) sv[v] = _mm256_loadu_ps(s + 8 * v);
      const int64_t g1 = g0 + group < k ? g0 + group : k;
      for (int64_t p = g0; p < g1; ++p, w += kCols) {
        _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
        __m256 wv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) wv[v] = _mm256_mul_ps(Wide<F>::load(w + 8 * v), sv[v]);
        step<R, NV>(a, wv, x, ldx, p);
      }
    }
  } else {
    for (int64_t p = 0; p < k; ++p, w += kCols) {
      if constexpr (Ahead) {
        _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
      }
      if constexpr (F != PanelFormat::i8) prefetch_next(next);
      if constexpr (F != PanelFormat::mxfp4) {
        __m256 wv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) wv[v] = Wide<F>::load(w + 8 * v);
        step<R, NV>(a, wv, x, ldx, p);
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int c = c0 + 8 * v;
      if (c >= j.cols) break;
      finish(a[i][v], y + c, j.bias ? j.bias + c : nullptr, per_channel ? j.scales + c : nullptr,
             j.accumulate, j.cols - c < 8 ? j.cols - c : 8);
    }
  }
}

// R rows against the whole panel.
template <int R, PanelFormat F>
__attribute__((always_inline)) inline void rows_of(const PanelJob& j, int64_t row,
                                                   NextPanel& next) {
  if constexpr (R <= 3) {
    // One pass over the panel; its 2 KB-ahead prefetch as the CPU wants it (PanelJob).
    if (j.single_pass_prefetch) {
      tile<R, 4, F>(j, row, 0, next);
    } else {
      tile<R, 4, F, false>(j, row, 0, next);
    }
  } else {
    tile<R, 2, F>(j, row, 0, next);
    if (j.cols > 16) tile<R, 2, F>(j, row, 16, next);
  }
}

template <int R, PanelFormat F>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows,
                                                NextPanel& next) {
  if constexpr (R > 0) {
    if (rows == R) {
      rows_of<R, F>(j, row, next);
    } else {
      tail<R - 1, F>(j, row, rows, next);
    }
  }
}

// One row against the S panels of a span (PanelJob::span, S = 2; fp32 panels): per k-step one
// broadcast and 4S independent FMA chains, each the chain tile<1, 4, F> runs for its output.
// Four chains a k-step kept batch-1 at the FMA's latency (packed_kernels.h). Narrow formats are
// not spanned here: their widening, not the latency, bounds them on AVX2 (packed_linear.cpp).
template <int S, PanelFormat F, bool Ahead>
__attribute__((always_inline)) inline void span_row(const PanelJob& j) {
  using T = typename Wide<F>::T;
  __m256 a[S][4];
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) a[s][v] = _mm256_setzero_ps();
  }
  const T* w[S];
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
    w[s] = reinterpret_cast<const T*>(static_cast<const char*>(j.panel) + s * j.panel_stride);
  }
  const float* x = j.x;
  const int64_t k = j.k;
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b = _mm256_broadcast_ss(x + p);
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {
      const T* ws = w[s] + p * kCols;
      if constexpr (Ahead) {
        _mm_prefetch(reinterpret_cast<const char*>(ws) + kPrefetchBytes, _MM_HINT_T0);
      }
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) a[s][v] = _mm256_fmadd_ps(b, Wide<F>::load(ws + 8 * v), a[s][v]);
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
    const int cols = s + 1 < S ? kCols : j.cols;
    float* y = j.y + s * kCols;
    const float* bias = j.bias != nullptr ? j.bias + s * kCols : nullptr;
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const int c = 8 * v;
      if (c >= cols) break;
      finish(a[s][v], y + c, bias ? bias + c : nullptr, nullptr, j.accumulate,
             cols - c < 8 ? cols - c : 8);
    }
  }
}

template <PanelFormat F>
void panel(const PanelJob& j) {
  // packed_linear.cpp spans one row, two fp32 panels.
  if constexpr (F == PanelFormat::f32) {
    if (j.span > 1) {
      if (j.single_pass_prefetch) return span_row<2, F, true>(j);
      return span_row<2, F, false>(j);
    }
  }
  constexpr int kRows = 6;
  // A tile of more than 3 rows passes over the panel twice (two halves of its columns).
  NextPanel next = next_panel(j, j.rows <= 3 ? 1 : (j.rows + kRows - 1) / kRows * 2);
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) rows_of<kRows, F>(j, row, next);
  if (row < j.rows) tail<kRows - 1, F>(j, row, j.rows - row, next);
}

}  // namespace

void panel_avx2(const PanelJob& j) {
  switch (j.format) {
    case PanelFormat::bf16:
      return panel<PanelFormat::bf16>(j);
    case PanelFormat::f16:
      return panel<PanelFormat::f16>(j);
    case PanelFormat::i8:
      return panel<PanelFormat::i8>(j);
    case PanelFormat::mxfp4:
      return panel<PanelFormat::mxfp4>(j);
    case PanelFormat::bf16_pairs:  // packed_linear runs these on panel_avx512_bf16 only
    case PanelFormat::i8_quads:    // and these on panel_avx512_vnni
    case PanelFormat::f32:
      break;
  }
  panel<PanelFormat::f32>(j);
}

}  // namespace ps

#pragma GCC pop_options
#endif
