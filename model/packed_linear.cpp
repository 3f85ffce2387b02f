#include "model/packed_linear.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "model/runner_simd.h"

namespace ps {
namespace {

typedef float F32x16 __attribute__((vector_size(64)));

PS_INLINE F32x16 load16(const float* p) {
  F32x16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

PS_INLINE void store16(float* p, const F32x16& v) {
  std::memcpy(p, &v, sizeof(v));
}

// Input rows per block of the parallel split: a [kRowChunk, k] slice of x (128-720 KB for
// k = 256..1408) stays in L2 while the thread's panels stream past it.
constexpr int64_t kRowChunk = 128;

// One register tile: rows [0, MR) of x against the 16·NV panel columns starting at `col`.
// Per step of k: NV vector loads of the panel, MR broadcasts of x, MR·NV FMAs into
// accumulators that never leave registers (MR·NV vectors; the ISA wrappers below pick MR and
// NV so that they plus the NV weight vectors fit the register file).
template <int MR, int NV>
PS_INLINE void tile(const PackedLinearArgs& a, const float* x, const float* panel, int64_t k,
                    int64_t row, int64_t col, int64_t cols_valid) {
  F32x16 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = F32x16{};
  }
  const float* w = panel + (col % kPanelCols);
  for (int64_t p = 0; p < k; ++p, w += kPanelCols) {
    F32x16 wv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) wv[v] = load16(w + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const F32x16 xv = x[i * a.ldx + p] - F32x16{};  // one vbroadcastss (see splat8)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] += xv * wv[v];
    }
  }
  for (int i = 0; i < MR; ++i) {
    float* y = a.y + (row + i) * a.ldy + col;
    for (int v = 0; v < NV; ++v) {
      const int64_t c0 = 16 * v;
      if (c0 >= cols_valid) break;
      F32x16 r = acc[i][v];
      if (c0 + 16 <= cols_valid) {
        if (a.bias != nullptr) r += load16(a.bias + col + c0);
        if (a.accumulate) r += load16(y + c0);
        store16(y + c0, r);
      } else {
        float lanes[16];
        store16(lanes, r);
        for (int64_t j = c0; j < cols_valid; ++j) {
          float s = lanes[j - c0];
          if (a.bias != nullptr) s += a.bias[col + j];
          y[j] = a.accumulate ? y[j] + s : s;
        }
      }
    }
  }
}

// The last (row_end - row) < MR rows, by a tile of exactly that height.
template <int R, int NV>
PS_INLINE void tail_tile(int64_t rows, const PackedLinearArgs& a, const float* x,
                         const float* panel, int64_t k, int64_t row, int64_t col,
                         int64_t cols_valid) {
  if constexpr (R > 0) {
    if (rows == R) {
      tile<R, NV>(a, x, panel, k, row, col, cols_valid);
    } else {
      tail_tile<R - 1, NV>(rows, a, x, panel, k, row, col, cols_valid);
    }
  }
}

// Rows [r0, r1) against one panel, in passes of 16·NV columns.
template <int MR, int NV>
PS_INLINE void panel_rows(const PackedLinearArgs& a, int64_t panel_index, int64_t r0, int64_t r1) {
  const PackedWeight& w = *a.w;
  const int64_t k = w.k();
  const float* panel = w.panel(panel_index);
  const int64_t panel_col = panel_index * kPanelCols;
  const int64_t panel_valid = std::min(kPanelCols, w.n() - panel_col);
  for (int64_t c = 0; c < panel_valid; c += 16 * NV) {
    const int64_t cols_valid = std::min<int64_t>(16 * NV, panel_valid - c);
    int64_t row = r0;
    for (; row + MR <= r1; row += MR) {
      tile<MR, NV>(a, a.x + row * a.ldx, panel, k, row, panel_col + c, cols_valid);
    }
    if (row < r1) {
      tail_tile<MR - 1, NV>(r1 - row, a, a.x + row * a.ldx, panel, k, row, panel_col + c,
                            cols_valid);
    }
  }
}

using PanelFn = void (*)(const PackedLinearArgs&, int64_t, int64_t, int64_t);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// AVX-512: 32 vector registers; 12 rows x 2 vectors = 24 accumulators + 2 weight vectors.
__attribute__((target("arch=x86-64-v4"))) void panel_avx512(const PackedLinearArgs& a, int64_t p,
                                                            int64_t r0, int64_t r1) {
  panel_rows<12, 2>(a, p, r0, r1);
}
// AVX2: 16 registers; a 16-float vector is two of them: 6 rows x 1 = 12 + 2 weight + 1 x.
__attribute__((target("arch=x86-64-v3"))) void panel_avx2(const PackedLinearArgs& a, int64_t p,
                                                          int64_t r0, int64_t r1) {
  panel_rows<6, 1>(a, p, r0, r1);
}
#endif
// Any other CPU (baseline SSE2 has 16 registers of 4 floats: 2 rows x 4 + 4 + 1 = 13).
void panel_generic(const PackedLinearArgs& a, int64_t p, int64_t r0, int64_t r1) {
  panel_rows<2, 1>(a, p, r0, r1);
}

struct Isa {
  PanelFn fn;
  const char* name;
};

Isa best_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {panel_avx512, "avx512"};
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {panel_avx2, "avx2"};
  }
#endif
  return {panel_generic, "generic"};
}

const Isa& isa() {
  static const Isa chosen = best_isa();
  return chosen;
}

PackedLinearArgs with_dense_strides(PackedLinearArgs a) {
  if (a.w == nullptr || a.w->empty()) throw std::invalid_argument("packed_linear: no weight");
  if (a.ldx == 0) a.ldx = a.w->k();
  if (a.ldy == 0) a.ldy = a.w->n();
  if (a.m < 0 || a.ldx < a.w->k() || a.ldy < a.w->n() || !a.x || !a.y) {
    throw std::invalid_argument("packed_linear: bad shape or null pointer");
  }
  return a;
}

void run(const PackedLinearArgs& args, PanelFn fn) {
  const PackedLinearArgs a = with_dense_strides(args);
  if (a.m == 0) return;
  const int64_t panels = a.w->panels();
  const int64_t chunks = (a.m + kRowChunk - 1) / kRowChunk;
  // Work unit u = (row chunk u / panels, panel u % panels): a thread's contiguous range of
  // units reuses its x chunk across many panels. Below ~256k multiply-adds per unit range,
  // waking the other threads costs more than it saves.
  const int64_t rows = std::min(a.m, kRowChunk);
  const int64_t grain = std::max<int64_t>(1, 262144 / (rows * kPanelCols * a.w->k()));
  at::parallel_for(0, chunks * panels, grain, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t r0 = (u / panels) * kRowChunk;
      fn(a, u % panels, r0, std::min(a.m, r0 + kRowChunk));
    }
  });
}

}  // namespace

void PackedWeight::Free::operator()(float* p) const {
  std::free(p);
}

PackedWeight::PackedWeight(const float* w, int64_t n, int64_t k) : n_(n), k_(k) {
  if (w == nullptr || n <= 0 || k <= 0) throw std::invalid_argument("PackedWeight: bad shape");
  const size_t bytes = size_t(panels() * kPanelCols * k) * sizeof(float);
  void* mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (mem == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<float*>(mem));
  float* out = data_.get();
  at::parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* dst = out + p * kPanelCols * k;
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        for (int64_t q = 0; q < k; ++q) dst[q * kPanelCols + j] = col < n ? w[col * k + q] : 0.f;
      }
    }
  });
}

void packed_linear(const PackedLinearArgs& args) {
  run(args, isa().fn);
}

const char* packed_linear_isa() {
  return isa().name;
}

bool packed_linear_on(const PackedLinearArgs& args, const char* name) {
  const std::string want = name;
  if (want == "generic") {
    run(args, panel_generic);
    return true;
  }
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  const std::string best = isa().name;
  if (want == "avx512" && best == "avx512") {
    run(args, panel_avx512);
    return true;
  }
  if (want == "avx2" && (best == "avx512" || best == "avx2")) {
    run(args, panel_avx2);
    return true;
  }
#endif
  return false;
}

}  // namespace ps
