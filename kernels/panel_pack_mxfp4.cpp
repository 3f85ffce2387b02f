// PackedWeight's MXFP4 panels (packed_linear.h): a checkpoint's E2M1 codes re-laid out per panel
// without widening, so an expert stays at 4.25 bits a weight in memory.
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "kernels/packed_linear.h"
#include "kernels/parallel_for.h"

namespace ps {

PackedWeight::PackedWeight(const Mxfp4Matrix& m)
    : format_(PanelFormat::mxfp4), elem_(1), n_(m.rows), k_(m.k), group_(kMxfp4Block) {
  if (m.blocks == nullptr || m.scales == nullptr || m.rows <= 0 || m.k <= 0 ||
      m.k % kMxfp4Block != 0) {
    throw std::invalid_argument("PackedWeight: MXFP4 needs blocks, scales and k a multiple of 32");
  }
  const int64_t k = m.k, G = groups(), step = kPanelCols / 2;
  const size_t bytes = size_t(panels() * panel_bytes());
  void* mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (mem == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(mem));
  // Padding columns past n: code 0 (+0.0) and exponent 0 (scale 0).
  std::memset(data_.get(), 0, bytes);
  exponents_.reset(new uint8_t[size_t(panels() * G * kPanelCols)]());
  uint8_t* out = data_.get();
  uint8_t* exps = exponents_.get();
  parallel_for(0, panels(), 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      uint8_t* dst = out + p * panel_bytes();
      for (int64_t j = 0; j < kPanelCols; ++j) {
        const int64_t col = p * kPanelCols + j;
        if (col >= n_) break;
        const uint8_t* row = m.blocks + col * (k / 2);
        const int64_t byte = j % 16, shift = j < 16 ? 0 : 4;
        for (int64_t q = 0; q < k; ++q) {
          const uint8_t code = (row[q / 2] >> ((q % 2) * 4)) & 0x0F;
          dst[q * step + byte] = uint8_t(dst[q * step + byte] | (code << shift));
        }
        for (int64_t g = 0; g < G; ++g) exps[(p * G + g) * kPanelCols + j] = m.scales[col * G + g];
      }
    }
  });
}

}  // namespace ps
