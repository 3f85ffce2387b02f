#pragma once
// y = x · wᵀ (+ bias) (+ y) for every projection of the forward, on a weight re-laid out once
// at load. Why not OpenBLAS sgemm (bench/micro/model_linear.cpp, 2-core machine): at M = 1..8
// it is 2-10x off the memory-bandwidth bound (ANCHORS.md), and at the M of a busy decode step
// (16..256 rows) it re-packs the weight on every call — 16% of a 64-sequence step's time under
// perf — and its kernel ran at ~70% of its own large-GEMM speed. One packed layout serves
// both ends: at M = 1 a panel is one contiguous stream of weights (as fast from DRAM as the
// dedicated weight-streaming kernel it replaced); at M = 64 it is a register-tiled GEMM with
// no copy. Torch-free raw-pointer API.
#include <cstdint>
#include <memory>

#include "model/kernel_isa.h"

namespace ps {

// Output columns per panel. A panel is kPanelCols consecutive weight rows stored k-major
// (panel[p * kPanelCols + j] = w[col0 + j][p]), so the kernel reads each weight once per
// block of input rows as one contiguous stream and keeps a [rows x kPanelCols] tile of y in
// registers (two AVX-512 vectors per row; on AVX2 four vectors for up to 3 rows, or two passes
// of two vectors for 6-row tiles).
inline constexpr int64_t kPanelCols = 32;

class PackedWeight {
 public:
  PackedWeight() = default;
  // w: [n, k] row-major (Hugging Face [out, in]). Columns past n in the last panel are zero.
  PackedWeight(const float* w, int64_t n, int64_t k);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t panels() const { return (n_ + kPanelCols - 1) / kPanelCols; }
  const float* panel(int64_t i) const { return data_.get() + i * kPanelCols * k_; }
  bool empty() const { return n_ == 0; }
  int64_t bytes() const { return panels() * kPanelCols * k_ * int64_t(sizeof(float)); }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;  // 64-byte aligned
  int64_t n_ = 0, k_ = 0;
};

// x [m, k] and y [m, n] row-major with row strides ldx / ldy (0 = dense: k and n).
struct PackedLinearArgs {
  const float* x = nullptr;
  const PackedWeight* w = nullptr;
  const float* bias = nullptr;  // [n] or nullptr
  float* y = nullptr;
  int64_t m = 0;
  int64_t ldx = 0, ldy = 0;
  bool accumulate = false;
};

// Any m; parallel over panels (and over row chunks when there are few panels per thread).
void packed_linear(const PackedLinearArgs& args);

// Which instruction set packed_linear runs on now ("avx512", "avx2" or "generic": the active
// kernel ISA, kernel_isa.h), printed by the benchmarks.
const char* packed_linear_isa();

// The same product through one ISA's kernel, so every path is checked and measured on a machine
// that would pick another. False (nothing computed) when this CPU cannot run it.
bool packed_linear_on(const PackedLinearArgs& args, KernelIsa isa);

}  // namespace ps
