#include "cpu/projection.h"

#include <stdexcept>
#include <string>

namespace ps {

Projection::Projection(const Tensor& w, const LinearPlan& plan) : plan_(plan) {
  if (w.dim() != 2 || w.dtype() != DType::f32) {
    throw std::invalid_argument(
        "ModelRunner: a projection weight must be a 2-D contiguous fp32 "
        "matrix");
  }
  n_ = w.size(0);
  k_ = w.size(1);
  if (plan_.uses(LinearKernel::packed)) packed_ = PackedWeight(w.data_ptr<float>(), n_, k_);
  if (plan_.uses(LinearKernel::blas)) dense_ = w;
}

PanelFormat panel_format_of(DType t) {
  if (t == DType::bf16) return PanelFormat::bf16;
  if (t == DType::f16) return PanelFormat::f16;
  if (t == DType::f32) return PanelFormat::f32;
  throw std::invalid_argument("ModelRunner: weights must be float32, bfloat16 or float16");
}

Projection::Projection(const Tensor& w, PanelFormat format, int64_t group) {
  if (w.dim() != 2) {
    throw std::invalid_argument("ModelRunner: a projection weight must be a 2-D contiguous matrix");
  }
  const PanelFormat src = panel_format_of(w.dtype());
  n_ = w.size(0);
  k_ = w.size(1);
  packed_ = PackedWeight(w.data_ptr(), src, n_, k_, format, group);
}

Projection::Projection(const Mxfp4Matrix& m) : packed_(m), n_(m.rows), k_(m.k) {}

void Projection::run(const float* x, int64_t m, const float* bias, float* y,
                     bool accumulate) const {
  if (plan_.for_rows(m) == LinearKernel::blas) {
    blas_linear(dense_, x, k_, m, bias, y, n_, accumulate);
    return;
  }
  PackedLinearArgs a;
  a.x = x;
  a.w = &packed_;
  a.bias = bias;
  a.y = y;
  a.m = m;
  a.accumulate = accumulate;
  packed_linear(a);
}

bool Projection::gather_rows(const int32_t* ids, int64_t count, float* out) const {
  if (!can_gather_rows()) return false;
  for (int64_t t = 0; t < count; ++t) {
    if (!packed_.row(ids[t], out + t * k_)) {
      throw std::out_of_range("Projection::gather_rows: row " + std::to_string(ids[t]) + " of " +
                              std::to_string(n_));
    }
  }
  return true;
}

int64_t Projection::bytes_read(int64_t m) const {
  if (plan_.for_rows(m) == LinearKernel::blas) return dense_.numel() * int64_t(sizeof(float));
  return packed_.empty() ? 0 : packed_.bytes();
}

int64_t Projection::bytes() const {
  return (packed_.empty() ? 0 : packed_.bytes()) +
         (dense_.defined() ? dense_.numel() * int64_t(sizeof(float)) : 0);
}

}  // namespace ps
