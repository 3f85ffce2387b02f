// embedding_gather, add_bias_rows, gather_rows (executor_kernels.h). One block per row, threads
// over the row: these move a few megabytes per step at most, so simplicity wins over tuning.
#include "cuda/common.cuh"
#include "cuda/executor_kernels.h"

namespace ps::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void gather_kernel(const T* __restrict__ src, int64_t ld_src,
                              const int32_t* __restrict__ index, int32_t width, T* __restrict__ dst,
                              int64_t ld_dst) {
  const int64_t r = blockIdx.x;
  const T* from = src + int64_t(index[r]) * ld_src;
  T* to = dst + r * ld_dst;
  for (int32_t j = threadIdx.x; j < width; j += kThreads) to[j] = from[j];
}

template <typename T>
__global__ void add_bias_kernel(T* __restrict__ y, int64_t ld, int32_t width,
                                const T* __restrict__ bias) {
  T* row = y + int64_t(blockIdx.x) * ld;
  for (int32_t j = threadIdx.x; j < width; j += kThreads) {
    row[j] = from_f32<T>(to_f32(row[j]) + to_f32(bias[j]));
  }
}

void launch_gather(DType dtype, const void* src, int64_t ld_src, const int32_t* index, int64_t rows,
                   int32_t width, void* dst, int64_t ld_dst, Stream stream, const char* name) {
  require(rows >= 0 && width > 0 && ld_src >= width && ld_dst >= width,
          "gather: need width > 0 and row strides >= width");
  require(rows <= 0x7fffffff, "gather: too many rows for one launch");
  require(src != nullptr && index != nullptr && dst != nullptr, "gather: null pointer");
  if (rows == 0) return;
  dispatch_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    gather_kernel<T><<<unsigned(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(src), ld_src, index, width, static_cast<T*>(dst), ld_dst);
  });
  check_launch(name);
}

}  // namespace

void embedding_gather(DType dtype, const void* table, const int32_t* ids, int64_t rows,
                      int32_t width, void* out, Stream stream) {
  launch_gather(dtype, table, width, ids, rows, width, out, width, stream, "embedding_gather");
}

void gather_rows(DType dtype, const void* src, int64_t ld_src, const int32_t* index, int64_t rows,
                 int32_t width, void* dst, int64_t ld_dst, Stream stream) {
  launch_gather(dtype, src, ld_src, index, rows, width, dst, ld_dst, stream, "gather_rows");
}

void add_bias_rows(DType dtype, void* y, int64_t ld, int64_t rows, int32_t width, const void* bias,
                   Stream stream) {
  require(rows >= 0 && width > 0 && ld >= width, "add_bias_rows: need width > 0, ld >= width");
  require(rows <= 0x7fffffff, "add_bias_rows: too many rows for one launch");
  require(y != nullptr && bias != nullptr, "add_bias_rows: null pointer");
  if (rows == 0) return;
  dispatch_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_bias_kernel<T><<<unsigned(rows), kThreads, 0, stream>>>(static_cast<T*>(y), ld, width,
                                                                static_cast<const T*>(bias));
  });
  check_launch("add_bias_rows");
}

}  // namespace ps::cuda
