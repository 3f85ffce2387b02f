// The packed linear's micro-kernel for any CPU: 16-byte GCC vectors, which are one register on
// baseline x86-64 (SSE2, 16 registers) and on ARM (NEON, 32). A 4x8 tile: 8 accumulators +
// 2 weight vectors + 1 broadcast. (Wider generic vectors are split by GCC into memory
// round-trips when the target lacks the width: that is what made the old AVX2 path slow.)
#include "model/packed_kernels.h"

#include <cstring>

namespace ps {
namespace {

typedef float F32x4 __attribute__((vector_size(16)));
constexpr int kCols = 32;  // kPanelCols

inline F32x4 load4(const float* p) {
  F32x4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <int R>
inline void tile(const PanelJob& j, int64_t row, int c0) {
  F32x4 a[R][2];
  for (int i = 0; i < R; ++i) a[i][0] = a[i][1] = F32x4{};
  const float* x = j.x + row * j.ldx;
  const float* w = j.panel + c0;
  const int64_t k = j.k;  // a local: a store through y could alias j (GCC reloads it)
  for (int64_t p = 0; p < k; ++p, w += kCols) {
    const F32x4 w0 = load4(w), w1 = load4(w + 4);
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
      if (j.bias != nullptr) s += j.bias[c0 + t];
      y[c0 + t] = j.accumulate ? y[c0 + t] + s : s;
    }
  }
}

template <int R>
inline void rows_of(const PanelJob& j, int64_t row) {
  for (int c0 = 0; c0 < j.cols; c0 += 8) tile<R>(j, row, c0);
}

}  // namespace

void panel_generic(const PanelJob& j) {
  int64_t row = 0;
  for (; row + 4 <= j.rows; row += 4) rows_of<4>(j, row);
  switch (j.rows - row) {
    case 3:
      rows_of<3>(j, row);
      break;
    case 2:
      rows_of<2>(j, row);
      break;
    case 1:
      rows_of<1>(j, row);
      break;
    default:
      break;
  }
}

}  // namespace ps
