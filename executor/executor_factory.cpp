#include "executor/executor_factory.h"

#include <algorithm>
#include <stdexcept>

#include "model/kv_pool_split.h"
#include "model/model_weights.h"

#ifdef PAGEDSERVE_CUDA
#include "cuda/cuda_executor.h"
#include "cuda/cuda_weight_source.h"
#endif

namespace ps {

BuiltExecutor make_executor(std::shared_ptr<const ModelWeights> weights, const ExecutorRequest& r) {
  if (!weights) throw std::invalid_argument("make_executor: no weights");
  const ModelConfig& c = weights->config;
  BuiltExecutor built;
  Device device = Device::cpu;
  if (r.device.device != Device::cpu) {
    CudaFeatureUse use;
    use.int8_weights = r.runner.quantization == WeightQuantization::int8;
    use.max_loras = r.max_loras;
    device =
        resolve_device(r.device.device, probe_cuda(), cuda_unsupported_reason(c, use), &built.note);
  }
  built.device = device;
  if (device == Device::cpu) {
    int32_t blocks = r.num_blocks;
    if (blocks <= 0) {
      const int64_t per_block =
          ModelRunner::kv_bytes_per_block(c, r.block_size, r.runner.kv_cache_dtype);
      blocks = int32_t(
          std::min<int64_t>(std::max<int64_t>(1, r.cpu_kv_cache_memory / per_block), 1 << 30));
    }
    const KvPoolSizes pools = split_kv_pools(c, blocks, r.block_size, r.max_num_seqs,
                                             r.max_batched_tokens, r.sliding_pool);
    built.kv = KvCacheSpec{pools.num_blocks, r.block_size, pools.num_sliding_blocks};
    if (pools.num_sliding_blocks > 0) {
      std::string line = "KV cache: " + std::to_string(pools.num_blocks) +
                         " blocks for full-attention layers, " +
                         std::to_string(pools.num_sliding_blocks) +
                         " for sliding-window layers (given back as the window passes)";
      if (!built.note.empty()) built.note.push_back('\n');
      built.note.append(line);
    }
    built.executor = std::make_unique<ModelRunner>(std::move(weights), built.kv, r.runner);
    return built;
  }
#ifdef PAGEDSERVE_CUDA
  cuda::CudaExecutorOptions o;
  o.block_size = r.block_size;
  o.num_blocks = r.num_blocks;
  o.kv_cache_memory = r.device.kv_cache_memory;
  o.gpu_memory_utilization = r.device.gpu_memory_utilization;
  o.max_tokens_per_step = r.max_batched_tokens;
  o.max_seqs = r.max_num_seqs;
  o.cuda_graphs = r.device.cuda_graphs;
  std::string sizing;
  built.executor = cuda::make_cuda_executor(bf16_model_source(*weights), o, &built.kv, &sizing);
  built.note += (built.note.empty() ? "" : "\n") + sizing;
  return built;
#else
  throw std::logic_error("make_executor: resolve_device chose cuda in a build without CUDA");
#endif
}

}  // namespace ps
