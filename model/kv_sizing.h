#pragma once
// How many KV blocks the CUDA executor allocates (issue #19), from the GPU's memory as the
// runtime reports it before the executor allocates anything. Pure: tested with made-up numbers.
#include <cstdint>
#include <string>

namespace ps {

struct KvSizingInput {
  int64_t free_bytes = 0;   // cudaMemGetInfo before weights are uploaded
  int64_t total_bytes = 0;  // the device's whole memory
  int64_t weight_bytes = 0;
  int64_t activation_bytes = 0;  // the step buffers' peak (they are allocated up front)
  int64_t bytes_per_block = 0;   // K + V of one block over all layers
  double gpu_memory_utilization = 0.9;
  int64_t kv_cache_memory = 0;  // > 0: exactly this many bytes (--kv-cache-memory)
  int32_t num_blocks = 0;       // > 0: exactly this many blocks (--num-blocks)
  int32_t block_size = 16;
};

struct KvSizing {
  int32_t num_blocks = 0;
  int64_t kv_bytes = 0;
  int64_t max_tokens = 0;  // num_blocks * block_size: tokens all sequences can hold at once
  std::string summary;     // one start-up line: sizes, the rule used, blocks and tokens
};

// --num-blocks wins, then --kv-cache-memory, else the utilization rule:
//   kv = utilization * total - (total - free) - weights - activations
// (total - free is what other processes and the CUDA context already hold). Whichever rule
// applies, weights + activations + kv must fit in free memory. Throws std::runtime_error naming
// the flag to change when fewer than one block fits.
KvSizing size_kv_cache(const KvSizingInput& in);

}  // namespace ps
