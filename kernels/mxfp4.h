#pragma once
// MXFP4 (the OCP microscaling FP4 format), in which gpt-oss ships its expert weights: each run of
// 32 consecutive inputs of a weight row shares one E8M0 scale byte e (the power 2^(e - 127)), and
// each weight is a 4-bit E2M1 float, two to a byte, the lower-indexed weight in the low nibble.
// That is how HF's `*_blocks` [rows, k / 32, 16] and `*_scales` [rows, k / 32] tensors hold a
// [rows, k] matrix (checkpoints name it [out, in], as every other projection).
#include <cstdint>
#include <cstring>

namespace ps {

inline constexpr int64_t kMxfp4Block = 32;  // inputs per scale

// The 16 E2M1 values by code: bit 3 is the sign, bits 0-2 index 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline constexpr float kMxfp4Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// 2^(e - 127), formed as the kernels form it: e's bits as an fp32 exponent. Exact for e in
// [1, 254]; e = 0 (2^-127, a subnormal) gives 0, and e = 255 (NaN in the spec) gives infinity.
inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = uint32_t(e) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A [rows, k] MXFP4 matrix as a checkpoint stores it.
struct Mxfp4Matrix {
  const uint8_t* blocks = nullptr;  // [rows, k / 32, 16]
  const uint8_t* scales = nullptr;  // [rows, k / 32]
  int64_t rows = 0, k = 0;          // k a multiple of 32
};

// The 4-bit code of panel column c (0..31) in one k-step's 16 bytes of an MXFP4 panel: byte
// c % 16, the low nibble for columns 0-15 and the high one for 16-31 (panel_pack_mxfp4.cpp).
inline int mxfp4_panel_code(const uint8_t* step, int64_t c) {
  return (step[c % 16] >> (c < 16 ? 0 : 4)) & 0x0F;
}

// Weight (r, c) of `m`: its value times its block's scale (exact: a power of two times E2M1).
float mxfp4_weight(const Mxfp4Matrix& m, int64_t r, int64_t c);
// The whole matrix widened to fp32, row-major [rows, k].
void mxfp4_dequantize(const Mxfp4Matrix& m, float* out);
// Rounds a row-major fp32 [rows, k] matrix to MXFP4 (what `make-tiny-model` writes for gpt-oss):
// each block's scale is the smallest power of two that puts its largest |w| within 6, each
// weight the nearest E2M1 value (ties to the even code). blocks: rows * k / 2 bytes, scales:
// rows * k / 32. Throws std::invalid_argument unless k is a positive multiple of 32.
void mxfp4_quantize(const float* w, int64_t rows, int64_t k, uint8_t* blocks, uint8_t* scales);

}  // namespace ps
