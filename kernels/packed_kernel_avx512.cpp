// AVX-512 micro-kernel of the packed linear. Intrinsics rather than GCC vector types: the
// kernel's speed is its register allocation, and intrinsics pin it (24 zmm accumulators, 2
// weight vectors, 1 broadcast; 27 of 32 registers).
#include "kernels/packed_kernels.h"

#if PS_X86_KERNELS
#include <immintrin.h>

#include "kernels/panel_prefetch.h"

// Everything in this file is compiled for x86-64-v4. It uses no inline function from a header
// (no std::), so no AVX-512 copy of shared code can be picked by the linker for other callers;
// panel_prefetch.h's functions are static, a private copy in each file.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
// GCC 12's unmasked widening intrinsics (cvtph_ps, cvtepi8_epi32, ...) pass an "undefined"
// merge source that -Wmaybe-uninitialized reports once they are inlined; it is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ps {
namespace {

constexpr int kCols = 32;  // kPanelCols: two zmm vectors
// The panel is read once, front to back, at M = 1: the hardware prefetcher alone kept one core
// at 69% (bf16) and 56% (int8) of its read bandwidth there, software prefetch 2 KB ahead (one
// per k-step; a duplicate for int8's half-line steps costs nothing) at 85-90%
// (bench_model_lowbit_linear 1, one thread).
constexpr int kPrefetchBytes = 2048;

// y[0, n) = r (+ bias) (+ y), n <= 16; the masked loads never touch memory past n. With
// `scale` (int8 per channel) the first step is one fused r * scale + (bias or 0).
__attribute__((always_inline)) inline void finish(__m512 r, float* y, const float* bias,
                                                  const float* scale, bool accumulate, int n) {
  const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u);
  if (scale != nullptr) {
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias) : _mm512_setzero_ps();
    r = _mm512_fmadd_ps(r, _mm512_maskz_loadu_ps(m, scale), b);
  } else if (bias != nullptr) {
    r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, bias));
  }
  if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, y));
  _mm512_mask_storeu_ps(y, m, r);
}

// 16 weights of a panel row widened to fp32: bf16 is the high half of an fp32 (a shift), f16
// converts in one instruction (AVX512F), int8 sign-extends and converts (its scale is applied
// by the caller: per group on the weights, per channel on the finished chain).
template <PanelFormat F>
struct Wide;
template <>
struct Wide<PanelFormat::f32> {
  using T = float;
  __attribute__((always_inline)) static inline __m512 load(const float* w) {
    return _mm512_loadu_ps(w);
  }
};
template <>
struct Wide<PanelFormat::bf16> {
  using T = uint16_t;
  __attribute__((always_inline)) static inline __m512 load(const uint16_t* w) {
    const __m512i v =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
};
template <>
struct Wide<PanelFormat::f16> {
  using T = uint16_t;
  __attribute__((always_inline)) static inline __m512 load(const uint16_t* w) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  }
};
template <>
struct Wide<PanelFormat::i8> {
  using T = int8_t;
  __attribute__((always_inline)) static inline __m512 load(const int8_t* w) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
  }
};

// MXFP4 panels are decoded in the tile itself (a LUT permute per 16 weights, see there).
template <>
struct Wide<PanelFormat::mxfp4> {
  using T = uint8_t;
};

// One step of k for R rows: R broadcasts, 2R FMAs.
template <int R>
__attribute__((always_inline)) inline void step(__m512 (&a0)[R], __m512 (&a1)[R], const float* x,
                                                int64_t ldx, int64_t p, __m512 w0, __m512 w1) {
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const __m512 b = _mm512_set1_ps(x[i * ldx + p]);
    a0[i] = _mm512_fmadd_ps(b, w0, a0[i]);
    a1[i] = _mm512_fmadd_ps(b, w1, a1[i]);
  }
}

// Rows [row, row + R) against the whole panel: per step of k, 2 weight loads (widened for the
// narrow formats; int8 also times its group's 2 scale vectors), R broadcasts, 2R FMAs.
template <int R, PanelFormat F>
__attribute__((always_inline)) inline void tile(const PanelJob& j, int64_t row, NextPanel& next) {
  using T = typename Wide<F>::T;
  __m512 a0[R], a1[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) a0[i] = a1[i] = _mm512_setzero_ps();
  const float* x = j.x + row * j.ldx;
  const int64_t ldx = j.ldx;
  const T* w = static_cast<const T*>(j.panel);
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  // int8 per channel scales the finished chain once (see packed_kernel_avx2.cpp).
  const bool per_channel = F == PanelFormat::i8 && j.group >= k;
  if constexpr (F == PanelFormat::mxfp4) {
    // A k-step's 16 bytes widen to 16 int32 lanes; vpermps reads only an index's low 4 bits, so
    // the low nibbles (columns 0-15) index the E2M1 table as they are, the high ones (16-31)
    // after a shift. Each group's two scale vectors are its exponent bytes moved into the fp32
    // exponent field. A table value times a power of two is exact: the fp32 kernel's weights.
    const __m512 lut = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f,
                                      -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
    const uint8_t* e = j.exponents;
    for (int64_t g0 = 0; g0 < k; g0 += 32, e += kCols) {
      const __m512 s0 = _mm512_castsi512_ps(_mm512_slli_epi32(
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e))), 23));
      const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e + 16))), 23));
      for (int64_t p = g0; p < g0 + 32; ++p, w += kCols / 2) {
        if ((p & 3) == 0) {  // one prefetch per 64-byte line (4 k-steps)
          _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
        }
        const __m512i codes =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
        step<R>(a0, a1, x, ldx, p, _mm512_mul_ps(_mm512_permutexvar_ps(codes, lut), s0),
                _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(codes, 4), lut), s1));
      }
    }
  } else if (F == PanelFormat::i8 && !per_channel) {
    const float* s = j.scales;
    const int64_t group = j.group;
    for (int64_t g0 = 0; g0 < k; g0 += group, s += kCols) {
      const __m512 s0 = _mm512_loadu_ps(s);
      const __m512 s1 = _mm512_loadu_ps(s + 16);
      const int64_t g1 = g0 + group < k ? g0 + group : k;
      for (int64_t p = g0; p < g1; ++p, w += kCols) {
        _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
        step<R>(a0, a1, x, ldx, p, _mm512_mul_ps(Wide<F>::load(w), s0),
                _mm512_mul_ps(Wide<F>::load(w + 16), s1));
      }
    }
  } else {
    for (int64_t p = 0; p < k; ++p, w += kCols) {
      _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes, _MM_HINT_T0);
      if constexpr (F != PanelFormat::i8) prefetch_next(next);
      if constexpr (F != PanelFormat::mxfp4) {
        step<R>(a0, a1, x, ldx, p, Wide<F>::load(w), Wide<F>::load(w + 16));
      }
    }
  }
  const int lo = j.cols < 16 ? j.cols : 16;
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
    const float* s = per_channel ? j.scales : nullptr;
    finish(a0[i], y, j.bias, s, j.accumulate, lo);
    if (j.cols > 16) {
      finish(a1[i], y + 16, j.bias ? j.bias + 16 : nullptr, s ? s + 16 : nullptr, j.accumulate,
             j.cols - 16);
    }
  }
}

template <int R, PanelFormat F>
__attribute__((always_inline)) inline void tail(const PanelJob& j, int64_t row, int64_t rows,
                                                NextPanel& next) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R, F>(j, row, next);
    } else {
      tail<R - 1, F>(j, row, rows, next);
    }
  }
}

// R rows (1 or 2) against the S panels of a span (PanelJob::span): per k-step R broadcasts, 2S
// weight loads and 2RS independent FMA chains, each the chain tile<R, F> would run for its
// output. f32, bf16, f16 and int8 per channel (whose chain ends are scaled in finish).
template <int R, int S, PanelFormat F>
__attribute__((always_inline)) inline void span_tile(const PanelJob& j) {
  using T = typename Wide<F>::T;
  __m512 a0[S][R], a1[S][R];
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) a0[s][i] = a1[s][i] = _mm512_setzero_ps();
  }
  const T* w[S];
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) {
    w[s] = reinterpret_cast<const T*>(static_cast<const char*>(j.panel) + s * j.panel_stride);
  }
  const float* x = j.x;
  const int64_t ldx = j.ldx, k = j.k;
  for (int64_t p = 0; p < k; ++p) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) {
      const T* ws = w[s] + p * kCols;
      _mm_prefetch(reinterpret_cast<const char*>(ws) + kPrefetchBytes, _MM_HINT_T0);
      step<R>(a0[s], a1[s], x, ldx, p, Wide<F>::load(ws), Wide<F>::load(ws + 16));
    }
  }
  const bool per_channel = F == PanelFormat::i8;
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) {
    const int cols = s + 1 < S ? kCols : j.cols;
    const int lo = cols < 16 ? cols : 16;
    const float* bias = j.bias != nullptr ? j.bias + s * kCols : nullptr;
    const float* scale = per_channel ? j.scales + s * j.scale_stride : nullptr;
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      float* y = j.y + i * j.ldy + s * kCols;
      finish(a0[s][i], y, bias, scale, j.accumulate, lo);
      if (cols > 16) {
        finish(a1[s][i], y + 16, bias ? bias + 16 : nullptr, scale ? scale + 16 : nullptr,
               j.accumulate, cols - 16);
      }
    }
  }
}

template <int R, PanelFormat F>
__attribute__((always_inline)) inline void span_rows(const PanelJob& j) {
  switch (j.span) {
    case 4:
      return span_tile<R, 4, F>(j);
    case 3:
      return span_tile<R, 3, F>(j);
    default:
      return span_tile<R, 2, F>(j);
  }
}

template <PanelFormat F>
void panel(const PanelJob& j) {
  // packed_linear.cpp spans int8 panels only per channel (one group over k).
  if constexpr (F == PanelFormat::f32 || F == PanelFormat::bf16 || F == PanelFormat::f16 ||
                F == PanelFormat::i8) {
    if (j.span > 1) {
      if (j.rows == 1) return span_rows<1, F>(j);
      return span_rows<2, F>(j);
    }
  }
  constexpr int kRows = 12;
  NextPanel next = next_panel(j, (j.rows + kRows - 1) / kRows);
  int64_t row = 0;
  for (; row + kRows <= j.rows; row += kRows) tile<kRows, F>(j, row, next);
  if (row < j.rows) tail<kRows - 1, F>(j, row, j.rows - row, next);
}

}  // namespace

void panel_avx512(const PanelJob& j) {
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
