// RMSNorm and the fused residual-add + RMSNorm of the pre-norm decoder (kernels.h). One block
// per row; the row is read once into registers-sized chunks, reduced in fp32, then written.
#include "cuda/common.cuh"

namespace ps::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void rms_norm_kernel(const T* __restrict__ x, int64_t ldx, const T* __restrict__ w,
                                float eps, int32_t width, T* __restrict__ y, int64_t ldy) {
  const T* xr = x + int64_t(blockIdx.x) * ldx;
  T* yr = y + int64_t(blockIdx.x) * ldy;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = to_f32(xr[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / float(width) + eps);
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    yr[i] = from_f32<T>(to_f32(xr[i]) * inv * to_f32(w[i]));
  }
}

// residual += x (rounded to T, as the unfused torch ops would store it); x = norm(residual) * w.
template <typename T>
__global__ void fused_add_rms_norm_kernel(T* __restrict__ x, int64_t ldx, T* __restrict__ res,
                                          int64_t ldr, const T* __restrict__ w, float eps,
                                          int32_t width) {
  T* xr = x + int64_t(blockIdx.x) * ldx;
  T* rr = res + int64_t(blockIdx.x) * ldr;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    const T s = from_f32<T>(to_f32(xr[i]) + to_f32(rr[i]));
    rr[i] = s;
    const float v = to_f32(s);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / float(width) + eps);
  // Each thread reads back only the elements it wrote itself: no barrier needed for rr.
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    xr[i] = from_f32<T>(to_f32(rr[i]) * inv * to_f32(w[i]));
  }
}

}  // namespace

void rms_norm(DType dtype, const void* x, int64_t ldx, const void* w, float eps, int64_t rows,
              int32_t width, void* y, int64_t ldy, Stream stream) {
  require(rows >= 0 && width > 0 && ldx >= width && ldy >= width,
          "rms_norm: need width > 0 and row strides >= width");
  require(rows <= 0x7fffffff, "rms_norm: too many rows for one launch");
  if (rows == 0) return;
  dispatch_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rms_norm_kernel<T><<<unsigned(rows), kThreads, 0, stream>>>(static_cast<const T*>(x), ldx,
                                                                static_cast<const T*>(w), eps,
                                                                width, static_cast<T*>(y), ldy);
  });
  check_launch("rms_norm");
}

void fused_add_rms_norm(DType dtype, void* x, int64_t ldx, void* residual, int64_t ldr,
                        const void* w, float eps, int64_t rows, int32_t width, Stream stream) {
  require(rows >= 0 && width > 0 && ldx >= width && ldr >= width,
          "fused_add_rms_norm: need width > 0 and row strides >= width");
  require(rows <= 0x7fffffff, "fused_add_rms_norm: too many rows for one launch");
  if (rows == 0) return;
  dispatch_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fused_add_rms_norm_kernel<T><<<unsigned(rows), kThreads, 0, stream>>>(
        static_cast<T*>(x), ldx, static_cast<T*>(residual), ldr, static_cast<const T*>(w), eps,
        width);
  });
  check_launch("fused_add_rms_norm");
}

}  // namespace ps::cuda
