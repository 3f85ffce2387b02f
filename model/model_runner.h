#pragma once
// The batched forward of DESIGN.md §3: one packed forward per step over all scheduled tokens,
// K/V written to and read from the paged cache. Torch-free header: engine/ uses it.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/model_config.h"
#include "scheduler/step_plan.h"

namespace ps {

struct ModelWeights;

struct KvCacheSpec {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
};

class ModelRunner {
 public:
  ModelRunner(std::shared_ptr<const ModelWeights> weights, KvCacheSpec spec);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Runs one step. `logits` receives [plan.sample_indices.size(), vocab_size] row-major, in
  // sample_indices order.
  void forward(const StepPlan& plan, std::vector<float>* logits);

  const ModelConfig& config() const;
  // Bytes of K and V cache one block takes across all layers (fp32 on CPU).
  static int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
