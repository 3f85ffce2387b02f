// The packed linear's micro-kernel for any CPU: 16-byte GCC vectors, which are one register on
// baseline x86-64 (SSE2, 16 registers) and on ARM (NEON, 32). A 4x8 tile: 8 accumulators +
// 2 weight vectors + 1 broadcast. (Wider generic vectors are split by GCC into memory
// round-trips when the target lacks the width: that is what made the old AVX2 path slow.)
#include "kernels/mxfp4.h"
#include "kernels/packed_kernels.h"

#include <cmath>
#include <cstring>

#include "model/half_bits.h"

namespace ps {
namespace {

typedef float F32x4 __attribute__((vector_size(16)));
constexpr int kCols = 32;  // kPanelCols

inline F32x4 load4(const float* p) {
  F32x4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// 4 weights of a panel row widened to fp32 (int8 times its scales).
inline F32x4 wide4(const float* w, const float*) {
  return load4(w);
}
inline F32x4 wide4(const uint16_t* w, const float*, bool is_f16) {
  F32x4 v;
  for (int t = 0; t < 4; ++t) v[t] = is_f16 ? f16_to_float(w[t]) : bf16_to_float(w[t]);
  return v;
}
inline F32x4 wide4(const int8_t* w, const float* s) {
  F32x4 v;
  for (int t = 0; t < 4; ++t) v[t] = s != nullptr ? float(w[t]) * s[t] : float(w[t]);
  return v;
}

template <int R, PanelFormat F>
inline void tile(const PanelJob& j, int64_t row, int c0) {
  F32x4 a[R][2];
  for (int i = 0; i < R; ++i) a[i][0] = a[i][1] = F32x4{};
  const float* x = j.x + row * j.ldx;
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  const int64_t group = F == PanelFormat::i8 ? j.group : k;
  // int8 per channel scales the finished chain once (packed_kernels.h).
  const float* channel_scale = F == PanelFormat::i8 && group >= k ? j.scales + c0 : nullptr;
  for (int64_t p = 0; p < k; ++p) {
    F32x4 w0, w1;
    if constexpr (F == PanelFormat::f32) {
      const float* w = static_cast<const float*>(j.panel) + p * kCols + c0;
      w0 = load4(w), w1 = load4(w + 4);
    } else if constexpr (F == PanelFormat::mxfp4) {
      // 16 bytes a k-step: column c in byte c % 16, low nibble below 16, high from 16 on.
      const uint8_t* w = static_cast<const uint8_t*>(j.panel) + p * (kCols / 2);
      const uint8_t* e = j.exponents + (p / kMxfp4Block) * kCols + c0;
      float v[8];
      for (int t = 0; t < 8; ++t) {
        const int c = c0 + t;
        const int code = mxfp4_panel_code(w, c);
        v[t] = kMxfp4Values[code] * mxfp4_scale(e[t]);
      }
      std::memcpy(&w0, v, sizeof(w0));
      std::memcpy(&w1, v + 4, sizeof(w1));
    } else if constexpr (F == PanelFormat::i8) {
      const int8_t* w = static_cast<const int8_t*>(j.panel) + p * kCols + c0;
      const float* s = channel_scale ? nullptr : j.scales + (p / group) * kCols + c0;
      w0 = wide4(w, s), w1 = wide4(w + 4, s ? s + 4 : nullptr);
    } else {
      const uint16_t* w = static_cast<const uint16_t*>(j.panel) + p * kCols + c0;
      w0 = wide4(w, nullptr, F == PanelFormat::f16),
      w1 = wide4(w + 4, nullptr, F == PanelFormat::f16);
    }
    for (int i = 0; i < R; ++i) {
      const F32x4 b = x[i * j.ldx + p] - F32x4{};  // one broadcast (s - 0 folds; 0 + s does not)
      a[i][0] += b * w0;
      a[i][1] += b * w1;
    }
  }
  for (int i = 0; i < R; ++i) {
    float* y = j.y + (row + i) * j.ldy;
    float lanes[8];
    std::memcpy(lanes, &a[i][0], sizeof(F32x4));
    std::memcpy(lanes + 4, &a[i][1], sizeof(F32x4));
    for (int t = 0; t < 8 && c0 + t < j.cols; ++t) {
      float s = lanes[t];
      if (channel_scale != nullptr) {
        s = std::fma(s, channel_scale[t], j.bias != nullptr ? j.bias[c0 + t] : 0.f);
      } else if (j.bias != nullptr) {
        s += j.bias[c0 + t];
      }
      y[c0 + t] = j.accumulate ? y[c0 + t] + s : s;
    }
  }
}

template <int R, PanelFormat F>
inline void rows_of(const PanelJob& j, int64_t row) {
  for (int c0 = 0; c0 < j.cols; c0 += 8) tile<R, F>(j, row, c0);
}

template <PanelFormat F>
void panel(const PanelJob& j) {
  int64_t row = 0;
  for (; row + 4 <= j.rows; row += 4) rows_of<4, F>(j, row);
  switch (j.rows - row) {
    case 3:
      rows_of<3, F>(j, row);
      break;
    case 2:
      rows_of<2, F>(j, row);
      break;
    case 1:
      rows_of<1, F>(j, row);
      break;
    default:
      break;
  }
}

}  // namespace

void panel_generic(const PanelJob& j) {
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
