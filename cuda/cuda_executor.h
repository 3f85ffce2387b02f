#pragma once
// The CUDA executor (issue #19): the Executor of model/executor.h with the weights and the KV
// cache in GPU memory. bf16 weights uploaded once; every projection one cublasGemmEx (bf16 in,
// fp32 accumulate) over all the step's tokens; norms, RoPE, the K/V write, paged attention and
// the activation are cuda/ kernels; one stream; no torch. The step's int32 arrays go up
// in one pinned buffer and one async copy (cuda/plan_upload.h). Decode-only steps replay a CUDA
// graph per batch-size bucket (cuda/graph_buckets.h); mixed prefill steps run eagerly.
//
// For now the sampled rows' fp32 logits come back to the host and the engine's sampler draws
// from them; the device sampler (kernels.h: sample) and the host-fallback split
// (sampling/device_sampling_rows.h) exist but are not yet wired into the engine.
// Built only with PAGEDSERVE_CUDA (links cudart and cuBLAS).
#include <cstdint>
#include <memory>
#include <string>

#include "cuda/cuda_weight_source.h"
#include "model/executor.h"

namespace ps::cuda {

struct CudaExecutorOptions {
  int32_t block_size = 16;
  int32_t num_blocks = 0;               // > 0: exactly this many
  int64_t kv_cache_memory = 0;          // > 0: this many bytes of K+V
  double gpu_memory_utilization = 0.9;  // otherwise: this fraction of the device (kv_sizing.h)
  int32_t max_tokens_per_step = 2048;   // step buffers are allocated up front for this many
  int32_t max_seqs = 64;                // and this many logits rows
  bool cuda_graphs = true;              // decode-only steps replay a graph per batch-size bucket
};

// Uploads `source` (its host memory is released once on the device), sizes and allocates the
// KV cache; *kv receives its spec, *sizing the start-up line that says how it was sized.
// Throws std::runtime_error naming the CUDA call that failed.
std::unique_ptr<Executor> make_cuda_executor(Bf16ModelSource source, const CudaExecutorOptions& o,
                                             KvCacheSpec* kv, std::string* sizing);

// K + V bytes of one block over all layers: the cache holds bf16.
int64_t cuda_kv_bytes_per_block(const ModelConfig& c, int32_t block_size);

}  // namespace ps::cuda
