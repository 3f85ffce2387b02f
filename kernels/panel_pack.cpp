// PackedWeight's narrow formats (packed_linear.h): bf16/f16 panels and int8 quantization at
// load. Kept apart from the fp32 packer so that path's code stays as it was.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "kernels/packed_linear.h"
#include "kernels/parallel_for.h"
#include "model/half_bits.h"

namespace ps {
namespace {

int64_t element_bytes(PanelFormat f) {
  switch (f) {
    case PanelFormat::f32:
      return 4;
    case PanelFormat::bf16:
    case PanelFormat::f16:
    case PanelFormat::bf16_pairs:
      return 2;
    case PanelFormat::i8:
    case PanelFormat::i8_quads:
    case PanelFormat::mxfp4:  // not per weight: PackedWeight::panel_bytes says
      break;
  }
  return 1;
}

// Source element `i` of a row-major matrix stored as `src`, widened to fp32 (exact).
float source_value(const void* w, PanelFormat src, int64_t i) {
  switch (src) {
    case PanelFormat::f32: {
      float f;
      std::memcpy(&f, static_cast<const uint8_t*>(w) + 4 * i, 4);
      return f;
    }
    case PanelFormat::bf16:
    case PanelFormat::f16: {
      uint16_t h;  // checkpoint data need not be 2-byte aligned
      std::memcpy(&h, static_cast<const uint8_t*>(w) + 2 * i, 2);
      return src == PanelFormat::bf16 ? bf16_to_float(h) : f16_to_float(h);
    }
    case PanelFormat::i8:
    case PanelFormat::mxfp4:
    case PanelFormat::bf16_pairs:
    case PanelFormat::i8_quads:
      break;
  }
  throw std::invalid_argument("PackedWeight: an int8, MXFP4 or paired source is not supported");
}

}  // namespace

// bf16_pairs: column j's k-steps 2p and 2p + 1 side by side, the panel's columns one after the
// other within a k-pair (kPanelCols pairs, 128 bytes), k-pair after k-pair; an odd k's last pair
// ends in a zero.
int64_t PackedWeight::pair_index(int64_t p, int64_t j) {
  return ((p / 2) * kPanelCols + j) * 2 + p % 2;
}

void PackedWeight::pack_pairs(const void* w, PanelFormat src, uint8_t* out) const {
  const int64_t n = n_, k = k_;
  parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      uint16_t* dst = reinterpret_cast<uint16_t*>(out + p * panel_bytes());
      std::memset(dst, 0, size_t(panel_bytes()));
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        if (col >= n) continue;  // padding columns: zero weights
        for (int64_t q = 0; q < k; ++q) {
          uint16_t h;
          if (src == PanelFormat::bf16) {
            std::memcpy(&h, static_cast<const uint8_t*>(w) + 2 * (col * k + q), 2);
          } else {
            h = float_to_bf16(source_value(w, src, col * k + q));
          }
          dst[pair_index(q, j)] = h;
        }
      }
    }
  });
}

// i8_quads: column j's k-steps 4p..4p + 3 side by side, the panel's columns one after the other
// within a k-quad (128 bytes), k-quad after k-quad; k's last quad padded with zeros. Quantized as
// i8 per channel (below): s = max|w| / 127, q = round(w / s).
int64_t PackedWeight::quad_index(int64_t p, int64_t j) {
  return ((p / 4) * kPanelCols + j) * 4 + p % 4;
}

void PackedWeight::pack_quads(const void* w, PanelFormat src, uint8_t* out) {
  const int64_t n = n_, k = k_;
  scales_.reset(new float[size_t(panels() * kPanelCols)]);
  col_sums_.reset(new int32_t[size_t(panels() * kPanelCols)]);
  float* scales = scales_.get();
  int32_t* sums = col_sums_.get();
  parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* dst = out + p * panel_bytes();
      std::memset(dst, 0, size_t(panel_bytes()));
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        scales[p * kPanelCols + j] = 0.f;
        sums[p * kPanelCols + j] = 0;
        if (col >= n) continue;  // padding columns: zero weights, scales and sums
        float amax = 0.f;
        for (int64_t q = 0; q < k; ++q) {
          row[q] = source_value(w, src, col * k + q);
          amax = std::max(amax, std::fabs(row[q]));
        }
        const float s = amax / 127.f;
        const float inv = s > 0.f ? 1.f / s : 0.f;
        int32_t sum = 0;
        for (int64_t q = 0; q < k; ++q) {
          const auto v = int8_t(std::clamp(std::nearbyint(row[q] * inv), -127.f, 127.f));
          dst[quad_index(q, j)] = uint8_t(v);
          sum += v;
        }
        scales[p * kPanelCols + j] = s;
        sums[p * kPanelCols + j] = sum;
      }
    }
  });
}

bool PackedWeight::row(int64_t r, float* out) const {
  if (r < 0 || r >= n_ || format_ == PanelFormat::i8 || format_ == PanelFormat::i8_quads) {
    return false;
  }
  const int64_t j = r % kPanelCols;
  const uint8_t* panel = static_cast<const uint8_t*>(panel_data(r / kPanelCols));
  if (format_ == PanelFormat::mxfp4) {
    const uint8_t* e = panel_exponents(r / kPanelCols) + j;
    for (int64_t p = 0; p < k_; ++p) {
      const int code = mxfp4_panel_code(panel + p * (kPanelCols / 2), j);
      out[p] = kMxfp4Values[code] * mxfp4_scale(e[(p / kMxfp4Block) * kPanelCols]);
    }
  } else if (format_ == PanelFormat::f32) {
    const float* w = reinterpret_cast<const float*>(panel) + j;
    for (int64_t p = 0; p < k_; ++p) out[p] = w[p * kPanelCols];
  } else if (format_ == PanelFormat::bf16_pairs) {
    const uint16_t* w = reinterpret_cast<const uint16_t*>(panel);
    for (int64_t p = 0; p < k_; ++p) out[p] = bf16_to_float(w[pair_index(p, j)]);
  } else {
    const uint16_t* w = reinterpret_cast<const uint16_t*>(panel) + j;
    const bool bf16 = format_ == PanelFormat::bf16;
    for (int64_t p = 0; p < k_; ++p) {
      out[p] = bf16 ? bf16_to_float(w[p * kPanelCols]) : f16_to_float(w[p * kPanelCols]);
    }
  }
  return true;
}

const char* panel_format_name(PanelFormat f) {
  switch (f) {
    case PanelFormat::f32:
      return "f32";
    case PanelFormat::bf16:
      return "bf16";
    case PanelFormat::f16:
      return "f16";
    case PanelFormat::i8:
      return "i8";
    case PanelFormat::bf16_pairs:
      return "bf16-pairs";
    case PanelFormat::i8_quads:
      return "i8-quads";
    case PanelFormat::mxfp4:
      break;
  }
  return "mxfp4";
}

PackedWeight::PackedWeight(const void* w, PanelFormat src, int64_t n, int64_t k, PanelFormat format,
                           int64_t group)
    : format_(format), elem_(element_bytes(format)), n_(n), k_(k) {
  if (w == nullptr || n <= 0 || k <= 0 || group < 0) {
    throw std::invalid_argument("PackedWeight: bad shape");
  }
  if (src == PanelFormat::i8 || src == PanelFormat::mxfp4 || src == PanelFormat::bf16_pairs ||
      src == PanelFormat::i8_quads) {
    throw std::invalid_argument("PackedWeight: int8, MXFP4 or paired source");
  }
  if (format == PanelFormat::mxfp4) {
    throw std::invalid_argument("PackedWeight: MXFP4 panels are packed from MXFP4 blocks");
  }
  group_ = format == PanelFormat::i8 && group > 0 ? std::min(group, k) : k;
  const size_t bytes = size_t(panels() * panel_bytes());
  void* mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (mem == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(mem));
  const int64_t G = groups();
  if (format == PanelFormat::i8) scales_.reset(new float[size_t(panels() * G * kPanelCols)]);
  uint8_t* out = data_.get();
  if (format == PanelFormat::bf16_pairs) {
    pack_pairs(w, src, out);
    return;
  }
  if (format == PanelFormat::i8_quads) {
    if (group > 0 && group < k) {
      throw std::invalid_argument("PackedWeight: i8_quads panels are per output channel (group 0)");
    }
    pack_quads(w, src, out);
    return;
  }
  float* scales = scales_.get();
  const bool same_bits = src == format;
  parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* dst = out + p * kPanelCols * k * elem_;
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        if (col >= n) {  // padding columns: zero weights (and zero scales)
          for (int64_t q = 0; q < k; ++q) std::memset(dst + (q * kPanelCols + j) * elem_, 0, elem_);
          if (scales) {
            for (int64_t g = 0; g < G; ++g) scales[(p * G + g) * kPanelCols + j] = 0.f;
          }
          continue;
        }
        if (same_bits) {
          const uint8_t* s = static_cast<const uint8_t*>(w) + col * k * elem_;
          for (int64_t q = 0; q < k; ++q) {
            std::memcpy(dst + (q * kPanelCols + j) * elem_, s + q * elem_, elem_);
          }
          continue;
        }
        for (int64_t q = 0; q < k; ++q) row[q] = source_value(w, src, col * k + q);
        for (int64_t g = 0; g < G; ++g) {
          const int64_t q0 = g * group_, q1 = std::min(k, q0 + group_);
          if (format == PanelFormat::i8) {
            float amax = 0.f;
            for (int64_t q = q0; q < q1; ++q) amax = std::max(amax, std::fabs(row[q]));
            const float s = amax / 127.f;
            scales[(p * G + g) * kPanelCols + j] = s;
            const float inv = s > 0.f ? 1.f / s : 0.f;
            for (int64_t q = q0; q < q1; ++q) {
              const float v = std::nearbyint(row[q] * inv);
              dst[q * kPanelCols + j] = uint8_t(int8_t(std::clamp(v, -127.f, 127.f)));
            }
            continue;
          }
          for (int64_t q = q0; q < q1; ++q) {
            if (format == PanelFormat::f32) {
              std::memcpy(dst + (q * kPanelCols + j) * 4, &row[q], 4);
            } else {
              const uint16_t h =
                  format == PanelFormat::bf16 ? float_to_bf16(row[q]) : float_to_f16(row[q]);
              std::memcpy(dst + (q * kPanelCols + j) * 2, &h, 2);
            }
          }
        }
      }
    }
  });
}

}  // namespace ps
