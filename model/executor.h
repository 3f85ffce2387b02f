#pragma once
// The one interface the engine runs a model through (docs/architecture.md): the CPU ModelRunner and
// the CUDA executor (cuda/cuda_executor.h) both implement it, so the step loop never knows
// which device holds the weights and the KV cache. Torch-free header.
#include <cstddef>  // size_t, which scheduler/step_plan.h uses unqualified
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "scheduler/step_plan.h"

namespace ps {

struct LoraAdapter;

// The paged KV pool an executor allocates: blocks of block_size token slots.
struct KvCacheSpec {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
  // > 0: the sliding-window layers' K/V has a pool of its own this size (kvcache/kv_pools.h)
  // and the plans carry its tables; num_blocks is then the full-attention layers' pool.
  int32_t num_sliding_blocks = 0;
  // > 0: the model has linear-attention layers and the executor holds this many recurrent
  // state slots (kvcache/state_slots.h); the plans name each sequence's (StepPlan::state_slots).
  int32_t num_state_slots = 0;
  // Snapshots of those states at block boundaries of cached prefixes (StepPlan::state_restores
  // and state_snapshots), held past the running slots.
  int32_t num_state_snapshots = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Runs one step. `logits` receives [plan.logit_rows().size(), vocab_size] row-major fp32 on
  // the host, in logit_rows() order.
  virtual void forward(const StepPlan& plan, std::vector<float>* logits) = 0;

  // Makes `adapter` the one sequences with plan.lora_slot == slot run with; null empties the
  // slot. Only between steps. An executor that cannot run adapters throws for a non-null one.
  virtual void set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) = 0;

  virtual const ModelConfig& config() const = 0;
  // What the model runs on (device, kernels, dtypes): printed at start, in /metrics and bench.
  virtual const std::string& kernel_summary() const = 0;
  // Weight bytes the executor holds, and the part one decode step reads (the bandwidth floor).
  virtual int64_t weight_bytes() const = 0;
  virtual int64_t weight_bytes_per_token() const = 0;
};

}  // namespace ps
