#include "kernels/mxfp4.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ps {

float mxfp4_weight(const Mxfp4Matrix& m, int64_t r, int64_t c) {
  const uint8_t byte = m.blocks[r * (m.k / 2) + c / 2];
  const uint8_t code = (c % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
  return kMxfp4Values[code] * mxfp4_scale(m.scales[r * (m.k / kMxfp4Block) + c / kMxfp4Block]);
}

void mxfp4_dequantize(const Mxfp4Matrix& m, float* out) {
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.k; ++c) out[r * m.k + c] = mxfp4_weight(m, r, c);
  }
}

void mxfp4_quantize(const float* w, int64_t rows, int64_t k, uint8_t* blocks, uint8_t* scales) {
  if (k <= 0 || k % kMxfp4Block != 0 || rows < 0) {
    throw std::invalid_argument("mxfp4_quantize: k must be a positive multiple of 32");
  }
  const int64_t groups = k / kMxfp4Block;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* x = w + r * k + g * kMxfp4Block;
      float amax = 0;
      for (int64_t i = 0; i < kMxfp4Block; ++i) amax = std::max(amax, std::fabs(x[i]));
      // amax / 6 = f * 2^p with f in [0.5, 1): 2^p >= amax / 6 > 2^(p - 1).
      int p = 0;
      const float f = std::frexp(amax / 6.0f, &p);
      if (f == 0.5f) --p;  // amax / 6 a power of two: that power itself
      const int e = amax == 0 ? 1 : std::min(254, std::max(1, p + 127));
      scales[r * groups + g] = uint8_t(e);
      const float inv = 1.0f / mxfp4_scale(uint8_t(e));
      uint8_t* out = blocks + r * (k / 2) + g * (kMxfp4Block / 2);
      for (int64_t i = 0; i < kMxfp4Block; ++i) {
        const float v = std::fabs(x[i]) * inv;
        int best = 0;
        for (int c = 1; c < 8; ++c) {
          // Strictly nearer wins: a tie keeps the smaller magnitude.
          if (std::fabs(kMxfp4Values[c] - v) < std::fabs(kMxfp4Values[best] - v)) best = c;
        }
        const uint8_t code = uint8_t(best | (std::signbit(x[i]) && best != 0 ? 8 : 0));
        if (i % 2 == 0) {
          out[i / 2] = code;
        } else {
          out[i / 2] = uint8_t(out[i / 2] | (code << 4));
        }
      }
    }
  }
}

}  // namespace ps
