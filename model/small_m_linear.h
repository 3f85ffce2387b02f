#pragma once
// y = x · wᵀ (+ bias) (+ y) for the few-row case of a decode step. OpenBLAS sgemm is 4-10x off
// the memory-bandwidth bound at M = 1..8 (ANCHORS.md, hazards); this path reads each weight row
// once and dots it with every input row while the row is in L1. Torch-free raw-pointer API.
#include <cstdint>

namespace ps {

// Rows at or below this go through small_m_linear inside `linear`; above it, packed sgemm wins.
// Measured by bench/micro/model_linear.cpp on the 2-core target machines.
inline constexpr int64_t kSmallMMaxRows = 16;

struct LinearArgs {
  const float* x = nullptr;     // [m, k], rows ldx apart
  const float* w = nullptr;     // [n, k] row-major (Hugging Face [out, in])
  const float* bias = nullptr;  // [n] or nullptr
  float* y = nullptr;           // [m, n], rows ldy apart
  int64_t m = 0, n = 0, k = 0;
  int64_t ldx = 0, ldy = 0;  // 0 means dense (k, n)
  bool accumulate = false;   // y += x · wᵀ (+ bias): fuses a residual add into the product
};

// The weight-streaming kernel, any m (it is only fast for small m). Parallel over output rows.
void small_m_linear(const LinearArgs& args);

// The production entry: small_m_linear for m <= kSmallMMaxRows, one sgemm (at::addmm) above.
void linear(const LinearArgs& args);

}  // namespace ps
