#pragma once
// Shared device helpers of cuda/*.cu: element loads/stores in fp32, warp and block
// reductions, launch checking. Included only by .cu files.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda/kernels.h"

namespace ps::cuda {

__device__ __forceinline__ float to_f32(float v) {
  return v;
}
__device__ __forceinline__ float to_f32(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // partial[] may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : 0.0f;
  return warp_sum(v);
}

// Throws with the kernel's name when the launch was rejected (bad config, no device, ...).
inline void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel ") + kernel +
                             " failed to launch: " + cudaGetErrorString(e));
  }
}

// Calls f with a typed null pointer whose type is the C++ element type of `t`.
template <typename F>
void dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      f(static_cast<float*>(nullptr));
      return;
    case DType::f16:
      f(static_cast<__half*>(nullptr));
      return;
    case DType::bf16:
      f(static_cast<__nv_bfloat16*>(nullptr));
      return;
  }
  throw std::invalid_argument("model/cuda: unknown DType " + std::to_string(int(t)));
}

inline void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("model/cuda: ") + what);
}

}  // namespace ps::cuda
