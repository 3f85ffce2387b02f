#pragma once
// y = x · wᵀ (+ bias) (+ y) for every projection of the forward, on a weight re-laid out once
// at load. Why not OpenBLAS sgemm (bench/micro/model_linear.cpp, 2-core machine): at M = 1..8
// it is 2-10x off the memory-bandwidth bound (docs/anchors.md), and at the M of a busy decode step
// (16..256 rows) it re-packs the weight on every call — 16% of a 64-sequence step's time under
// perf — and its kernel ran at ~70% of its own large-GEMM speed. One packed layout serves
// both ends: at M = 1 a panel is one contiguous stream of weights (as fast from DRAM as the
// dedicated weight-streaming kernel it replaced); at M = 64 it is a register-tiled GEMM with
// no copy. Torch-free raw-pointer API.
#include <cstdint>
#include <memory>

#include "kernels/kernel_isa.h"
#include "kernels/mxfp4.h"
#include "kernels/packed_kernels.h"  // PanelFormat

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
  // Panels of `format` from a row-major [n, k] source stored as `src` (f32, bf16 or f16), so a
  // bf16 checkpoint is packed without an fp32 copy. bf16/f16 from the same source copy bits;
  // other pairs go through fp32, rounded to nearest even. bf16_pairs holds bf16 in the layout of
  // the bf16 dot products (packed_kernels.h), from any float source; i8_quads is i8 per output
  // channel in the layout of the int8 dot products (group must be 0). i8 is symmetric weight-only
  // quantization: q = round(w / s) in [-127, 127] with s = max|w| / 127 over `group` k-steps of
  // one output column (group 0 = the whole row: one scale per output channel).
  PackedWeight(const void* w, PanelFormat src, int64_t n, int64_t k, PanelFormat format,
               int64_t group = 0);
  // MXFP4 panels (PanelFormat::mxfp4) from a checkpoint's blocks and scales, kept 4-bit: 16 bytes
  // a k-step of a panel plus one exponent byte per 32 weights (4.25 bits a weight). Throws
  // std::invalid_argument unless k is a positive multiple of 32.
  explicit PackedWeight(const Mxfp4Matrix& m);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t panels() const { return (n_ + kPanelCols - 1) / kPanelCols; }
  PanelFormat format() const { return format_; }
  // fp32 panels only (the format of the first constructor).
  const float* panel(int64_t i) const {
    return reinterpret_cast<const float*>(data_.get()) + i * kPanelCols * k_;
  }
  const void* panel_data(int64_t i) const { return data_.get() + i * panel_bytes(); }
  // Weight bytes of one panel (its scales or exponents apart).
  int64_t panel_bytes() const {
    if (format_ == PanelFormat::mxfp4) return k_ * (kPanelCols / 2);
    if (format_ == PanelFormat::bf16_pairs) return kPanelCols * ((k_ + 1) / 2 * 2) * 2;
    if (format_ == PanelFormat::i8_quads) return kPanelCols * ((k_ + 3) / 4 * 4);
    return kPanelCols * k_ * elem_;
  }
  // i8: the panel's [groups, kPanelCols] scales; nullptr otherwise.
  const float* panel_scales(int64_t i) const {
    return scales_ ? scales_.get() + i * groups() * kPanelCols : nullptr;
  }
  // i8_quads: the panel's kPanelCols column sums of integer weights; nullptr otherwise.
  const int32_t* panel_col_sums(int64_t i) const {
    return col_sums_ ? col_sums_.get() + i * kPanelCols : nullptr;
  }
  // mxfp4: the panel's [groups, kPanelCols] E8M0 exponents; nullptr otherwise.
  const uint8_t* panel_exponents(int64_t i) const {
    return exponents_ ? exponents_.get() + i * groups() * kPanelCols : nullptr;
  }
  // Weight row r (output column r) widened to fp32 into out[0, k), read across its panel
  // (stride kPanelCols). Exact for f32/bf16/f16 panels, so a tied embedding can be looked up
  // here instead of holding a second copy of the table (and for mxfp4, whose values are exact
  // too); false (nothing written) for i8, whose values are quantized.
  bool row(int64_t r, float* out) const;
  int64_t group() const { return group_; }
  int64_t groups() const { return (k_ + group_ - 1) / group_; }
  bool empty() const { return n_ == 0; }
  // Weight bytes held in memory (panels, and the scales of i8 or exponents of mxfp4).
  int64_t bytes() const {
    const int64_t per_group = scales_ ? int64_t(sizeof(float)) : exponents_ ? 1 : 0;
    return panels() * (panel_bytes() + kPanelCols * groups() * per_group);
  }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  // bf16_pairs: where weight (k-step p, panel column j) sits in its panel, in elements.
  static int64_t pair_index(int64_t p, int64_t j);
  void pack_pairs(const void* w, PanelFormat src, uint8_t* out) const;
  // i8_quads: weight (k-step p, panel column j)'s byte in its panel.
  static int64_t quad_index(int64_t p, int64_t j);
  void pack_quads(const void* w, PanelFormat src, uint8_t* out);

  std::unique_ptr<uint8_t[], Free> data_;  // 64-byte aligned
  std::unique_ptr<float[]> scales_;
  std::unique_ptr<int32_t[]> col_sums_;
  std::unique_ptr<uint8_t[]> exponents_;
  PanelFormat format_ = PanelFormat::f32;
  int64_t elem_ = 4;  // bytes per stored weight
  int64_t n_ = 0, k_ = 0, group_ = 0;
};

const char* panel_format_name(PanelFormat f);  // "f32" | "bf16" | "f16" | "i8" | "mxfp4"

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
