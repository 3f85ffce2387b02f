#include "model/kv_sizing.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ps {
namespace {

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

KvSizing size_kv_cache(const KvSizingInput& in) {
  if (in.bytes_per_block <= 0 || in.block_size <= 0) {
    throw std::invalid_argument("size_kv_cache: bytes_per_block and block_size must be positive");
  }
  if (in.total_bytes <= 0 || in.free_bytes < 0 || in.free_bytes > in.total_bytes) {
    throw std::invalid_argument("size_kv_cache: free must be within [0, total] and total > 0");
  }
  const int64_t fixed = in.weight_bytes + in.activation_bytes;
  const int64_t room = in.free_bytes - fixed;  // what the cache can have at most
  std::string rule;
  int64_t want = 0;
  if (in.num_blocks > 0) {
    want = int64_t{in.num_blocks} * in.bytes_per_block;
    rule = "--num-blocks " + std::to_string(in.num_blocks);
  } else if (in.kv_cache_memory > 0) {
    want = in.kv_cache_memory;
    rule = "--kv-cache-memory " + mib(in.kv_cache_memory);
  } else {
    const double u = in.gpu_memory_utilization;
    if (!(u > 0.0 && u <= 1.0)) {
      throw std::invalid_argument("--gpu-memory-utilization must be in (0, 1]");
    }
    const int64_t others = in.total_bytes - in.free_bytes;
    want = int64_t(u * double(in.total_bytes)) - others - fixed;
    rule = "--gpu-memory-utilization " + std::to_string(u).substr(0, 4) + " of " +
           mib(in.total_bytes) + " (" + mib(others) + " already in use)";
  }
  const bool explicit_size = in.num_blocks > 0 || in.kv_cache_memory > 0;
  const std::string after = " after " + mib(in.weight_bytes) + " of weights and " +
                            mib(in.activation_bytes) + " of step buffers (" + mib(in.free_bytes) +
                            " free)";
  if (explicit_size && want > room) {
    throw std::runtime_error("KV cache: " + rule + " (" + mib(want) + ") does not fit" + after +
                             "; lower it, or --max-batched-tokens");
  }
  // The utilization rule never asks for more than `room` (u <= 1), so no clamp is needed here.
  const int64_t blocks = std::max<int64_t>(want, 0) / in.bytes_per_block;
  if (blocks < 1) {
    throw std::runtime_error("KV cache: " + rule + " leaves no room for one block of " +
                             mib(in.bytes_per_block) + after +
                             "; raise --gpu-memory-utilization or pass --kv-cache-memory");
  }
  KvSizing s;
  s.num_blocks = int32_t(std::min<int64_t>(blocks, 1 << 30));
  s.kv_bytes = int64_t{s.num_blocks} * in.bytes_per_block;
  s.max_tokens = int64_t{s.num_blocks} * in.block_size;
  s.summary = "KV cache " + mib(s.kv_bytes) + " (" + rule + "): " + std::to_string(s.num_blocks) +
              " blocks of " + std::to_string(in.block_size) + " tokens, " +
              std::to_string(s.max_tokens) + " tokens at once; weights " + mib(in.weight_bytes) +
              ", step buffers " + mib(in.activation_bytes);
  return s;
}

}  // namespace ps
