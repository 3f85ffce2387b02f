#pragma once
// The CUDA executor's small data-movement kernels (cuda/cuda_executor.cpp), beside the
// model kernels of kernels.h and with the same conventions: raw device pointers, row strides in
// elements, enqueue on `stream`, std::invalid_argument on bad shapes, std::runtime_error when
// the launch fails. Plain C++ header.
#include <cstdint>

#include "cuda/kernels.h"

namespace ps::cuda {

// out[t] = table[ids[t]] for t < rows: the embedding lookup, rows of `width` elements.
void embedding_gather(DType dtype, const void* table, const int32_t* ids, int64_t rows,
                      int32_t width, void* out, Stream stream);

// y[r][j] += bias[j] over `rows` rows of `width` elements, ld apart (qwen2's q/k/v bias).
void add_bias_rows(DType dtype, void* y, int64_t ld, int64_t rows, int32_t width, const void* bias,
                   Stream stream);

// dst[r] = src[index[r]] for r < rows (the sampled rows before lm_head), rows of `width`.
void gather_rows(DType dtype, const void* src, int64_t ld_src, const int32_t* index, int64_t rows,
                 int32_t width, void* dst, int64_t ld_dst, Stream stream);

}  // namespace ps::cuda
