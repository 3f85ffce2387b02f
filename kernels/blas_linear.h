#pragma once
// The tuner's BLAS candidate: a product through OpenBLAS's C interface.
#include <cstdint>

#include "model/tensor.h"

namespace ps {

// y (= or +=) x · wᵀ (+ bias) through OpenBLAS's C interface: sgemv for one row, sgemm
// otherwise. x and y have row strides ldx, ldy. w is fp32 contiguous [n, k].
void blas_linear(const Tensor& w, const float* x, int64_t ldx, int64_t m, const float* bias,
                 float* y, int64_t ldy, bool accumulate);

}  // namespace ps
