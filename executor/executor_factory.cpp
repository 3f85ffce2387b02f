#include "executor/executor_factory.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "model/kv_pool_split.h"
#include "model/model_weights.h"

#ifdef PAGEDSERVE_CUDA
#include "cuda/cuda_executor.h"
#include "cuda/cuda_weight_source.h"
#endif

namespace ps {
namespace {

struct StatePoolSize {
  int32_t num_slots = 0;
  int32_t num_snapshots = 0;
  int64_t bytes = 0;  // taken from --kv-cache-memory (none with --num-blocks)
  std::string line;   // the start-up line
};

// A hybrid model's recurrent states come out of the same CPU budget as its KV blocks: a slot per
// sequence --max-num-seqs allows, as long as the slots take at most half of the budget (the
// full-attention layers' blocks need the rest); fewer slots lower --max-num-seqs (the engine
// says so). With --num-blocks the budget is the blocks', and the slots come on top.
StatePoolSize size_state_pool(const ModelConfig& c, const ExecutorRequest& r) {
  StatePoolSize s;
  const int64_t per_slot = c.recurrent_state_bytes_per_slot();
  if (per_slot == 0) return s;
  int64_t slots = std::max(1, r.max_num_seqs);
  if (r.num_blocks <= 0) {
    const int64_t affordable = r.cpu_kv_cache_memory / 2 / per_slot;
    if (affordable < 1) {
      throw std::runtime_error("--kv-cache-memory " + std::to_string(r.cpu_kv_cache_memory >> 20) +
                               " MiB: half of it does not hold one sequence's recurrent state (" +
                               std::to_string(per_slot >> 10) + " KiB over " +
                               std::to_string(c.num_linear_layers()) +
                               " linear-attention layers); raise --kv-cache-memory");
    }
    slots = std::min(slots, affordable);
  }
  // Snapshots for prefix hits: what was asked, or what a quarter of the budget holds (16 with
  // --num-blocks), at most 64.
  int64_t snapshots = r.max_state_snapshots;
  if (snapshots < 0) {
    snapshots = r.num_blocks > 0 ? 16 : std::min<int64_t>(64, r.cpu_kv_cache_memory / 4 / per_slot);
  }
  if (r.num_blocks <= 0) s.bytes = (slots + snapshots) * per_slot;
  s.num_slots = int32_t(slots);
  s.num_snapshots = int32_t(snapshots);
  auto mib = [](int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
    return std::string(buf);
  };
  s.line = "recurrent state: " + std::to_string(slots) + " sequences at once (" +
           mib(slots * per_slot) + ", " + std::to_string(per_slot >> 10) + " KiB each over " +
           std::to_string(c.num_linear_layers()) + " linear-attention layers); " +
           std::to_string(snapshots) + " prefix snapshots (" + mib(snapshots * per_slot) + ")";
  return s;
}

}  // namespace

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
    const StatePoolSize states = size_state_pool(c, r);
    if (!states.line.empty()) built.note = states.line;
    RunnerOptions runner = r.runner;
    runner.kv_cache_dtype = kv_cache_dtype_for(*weights, runner.kv_cache_dtype);
    int32_t blocks = r.num_blocks;
    if (blocks <= 0) {
      const int64_t per_block =
          ModelRunner::kv_bytes_per_block(c, r.block_size, runner.kv_cache_dtype);
      blocks = int32_t(std::min<int64_t>(
          std::max<int64_t>(1, (r.cpu_kv_cache_memory - states.bytes) / per_block), 1 << 30));
    }
    const KvPoolSizes pools = split_kv_pools(c, blocks, r.block_size, r.max_num_seqs,
                                             r.max_batched_tokens, r.sliding_pool);
    built.kv = KvCacheSpec{pools.num_blocks, r.block_size, pools.num_sliding_blocks,
                           states.num_slots, states.num_snapshots};
    if (pools.num_sliding_blocks > 0) {
      std::string line = "KV cache: " + std::to_string(pools.num_blocks) +
                         " blocks for full-attention layers, " +
                         std::to_string(pools.num_sliding_blocks) +
                         " for sliding-window layers (given back as the window passes)";
      if (!built.note.empty()) built.note.push_back('\n');
      built.note.append(line);
    }
    built.executor = std::make_unique<ModelRunner>(std::move(weights), built.kv, runner);
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
