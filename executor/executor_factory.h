#pragma once
// Builds the executor the engine runs (model/executor.h) on the resolved device, with its KV
// cache sized there: on CPU from --num-blocks or --kv-cache-memory as before, on CUDA from the
// GPU's memory (model/kv_sizing.h). Torch-free header.
#include <cstdint>
#include <memory>
#include <string>

#include "cpu/model_runner.h"
#include "executor/device_select.h"
#include "model/executor.h"

namespace ps {

struct ModelWeights;

struct ExecutorRequest {
  DeviceOptions device;  // device is auto, cpu or cuda (resolved here)
  RunnerOptions runner;  // CPU kernels, quantization, KV dtype
  int32_t block_size = 16;
  int32_t num_blocks = 0;             // > 0: exactly this many (--num-blocks)
  int64_t cpu_kv_cache_memory = 0;    // CPU: bytes of K+V when num_blocks is 0
  int32_t max_batched_tokens = 2048;  // CUDA: step buffers are sized for this many tokens
  int32_t max_num_seqs = 64;
  int32_t max_loras = 0;
  // CPU: sliding-window layers get a pool of their own whose blocks are given back as the
  // window passes (model/kv_pool_split.h); false keeps one pool
  // (--disable-hybrid-kv-cache-manager).
  bool sliding_pool = true;
  // Linear-attention models: recurrent-state snapshots for prefix hits (0 when prefix caching or
  // snapshots are off; -1: a quarter of cpu_kv_cache_memory's worth, at most 64).
  int32_t max_state_snapshots = -1;
};

struct BuiltExecutor {
  std::unique_ptr<Executor> executor;
  KvCacheSpec kv;
  Device device = Device::cpu;
  std::string note;  // what a start-up log should say (auto's choice, the KV sizing line)
};

// Throws std::runtime_error for --device cuda where it cannot run (device_select.h) and when the
// KV cache does not fit; std::invalid_argument for inconsistent weights.
BuiltExecutor make_executor(std::shared_ptr<const ModelWeights> weights, const ExecutorRequest& r);

}  // namespace ps
