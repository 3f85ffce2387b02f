#pragma once
// One projection weight of the forward, held in the form(s) its LinearPlan runs: packed panels
// for our kernel, the row-major fp32 matrix for OpenBLAS, or both when the best kernel depends
// on the batch size. y[m, n] (= or +=) x[m, k] · wᵀ (+ bias).
#include <cstdint>

#include "kernels/blas_linear.h"
#include "kernels/linear_tuner.h"
#include "kernels/mxfp4.h"
#include "kernels/packed_linear.h"
#include "model/tensor.h"

namespace ps {

// The panel format that holds a matrix of dtype `t` as it is (f32, bf16, f16); throws
// std::invalid_argument for any other dtype.
PanelFormat panel_format_of(DType t);

class Projection {
 public:
  Projection() = default;
  // w: 2-D contiguous fp32 [n, k] (checked); plan: from LinearTuner::plan_for.
  Projection(const Tensor& w, const LinearPlan& plan);
  // Packed panels only, of `format` (bf16/f16 from a matrix of that dtype, or int8 quantized
  // from fp32/bf16/f16 with `group` input columns per scale, 0 = per output channel). No BLAS
  // candidate: OpenBLAS would need an fp32 copy of the weight, the memory this saves.
  Projection(const Tensor& w, PanelFormat format, int64_t group);

  // MXFP4 panels (a checkpoint's blocks and scales, kept 4-bit): gpt-oss's experts.
  explicit Projection(const Mxfp4Matrix& m);

  void run(const float* x, int64_t m, const float* bias, float* y, bool accumulate) const;

  bool shape_is(int64_t n, int64_t k) const { return n_ == n && k_ == k; }
  const LinearPlan& plan() const { return plan_; }
  int64_t bytes() const;  // held: the panels and, when the plan uses BLAS, the dense copy
  // What one call with m rows reads: the form the plan runs at m. A plan with BLAS at large M
  // holds two copies, but a decode step at M = 1 reads only the panels; the bandwidth floor of
  // `bench offline` divides by this, not by bytes().
  int64_t bytes_read(int64_t m) const;
  PanelFormat packed_format() const { return packed_.format(); }
  // Rows ids[0, count) of the weight, widened to fp32, into out [count, k]; false (nothing
  // written) when the panels cannot give them exactly (i8, or no panels: a BLAS-only plan).
  bool gather_rows(const int32_t* ids, int64_t count, float* out) const;
  bool can_gather_rows() const {
    return !packed_.empty() && packed_.format() != PanelFormat::i8 &&
           packed_.format() != PanelFormat::i8_quads;
  }

 private:
  PackedWeight packed_;
  Tensor dense_;  // kept only when the plan uses BLAS somewhere
  LinearPlan plan_;
  int64_t n_ = 0, k_ = 0;
};

}  // namespace ps
