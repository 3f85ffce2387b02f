#include "kernels/blas_linear.h"

#include <cblas.h>

namespace ps {

void blas_linear(const Tensor& w, const float* x, int64_t ldx, int64_t m, const float* bias,
                 float* y, int64_t ldy, bool accumulate) {
  const int64_t n = w.size(0), k = w.size(1);
  if (m == 0) return;
  const float* wp = w.data_ptr<float>();
  const float beta = accumulate ? 1.0f : 0.0f;
  if (m == 1) {
    // sgemv: at M = 1 OpenBLAS sgemm is 4-5x slower than sgemv (docs/anchors.md).
    cblas_sgemv(CblasRowMajor, CblasNoTrans, blasint(n), blasint(k), 1.0f, wp, blasint(k), x, 1,
                beta, y, 1);
  } else {
    // Y[m, n] = X[m, k] · Wᵀ, W row-major [n, k].
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(m), blasint(n), blasint(k), 1.0f,
                x, blasint(ldx), wp, blasint(k), beta, y, blasint(ldy));
  }
  if (bias != nullptr) {
    for (int64_t r = 0; r < m; ++r) {
      float* row = y + r * ldy;
      for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
    }
  }
}

}  // namespace ps
