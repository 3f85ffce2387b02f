// silu_and_mul (kernels.h): the gated MLP activation, reading the fused gate/up projection's
// rows once and writing half as much. Grid: (column tiles, rows).
#include "cuda/common.cuh"

namespace ps::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void silu_and_mul_kernel(const T* __restrict__ gu, int64_t inter, T* __restrict__ out) {
  const int64_t r = blockIdx.y;
  const int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (j >= inter) return;
  const float g = to_f32(gu[r * 2 * inter + j]);
  const float u = to_f32(gu[r * 2 * inter + inter + j]);
  out[r * inter + j] = from_f32<T>(g / (1.0f + __expf(-g)) * u);
}

}  // namespace

void silu_and_mul(DType dtype, const void* gu, int64_t rows, int64_t inter, void* out,
                  Stream stream) {
  require(rows >= 0 && inter > 0, "silu_and_mul: need inter > 0");
  require(rows <= 65535, "silu_and_mul: at most 65535 rows per launch (grid.y)");
  if (rows == 0) return;
  const dim3 grid(unsigned((inter + kThreads - 1) / kThreads), unsigned(rows));
  dispatch_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    silu_and_mul_kernel<T>
        <<<grid, kThreads, 0, stream>>>(static_cast<const T*>(gu), inter, static_cast<T*>(out));
  });
  check_launch("silu_and_mul");
}

}  // namespace ps::cuda
