#pragma once
// The batched forward of DESIGN.md §3: one packed forward per step over all scheduled tokens,
// K/V written to and read from the paged cache. Torch-free header: engine/ uses it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/linear_tuner.h"
#include "model/model_config.h"
#include "scheduler/step_plan.h"

namespace ps {

struct ModelWeights;

struct KvCacheSpec {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
};

struct RunnerOptions {
  // --kernel: which linear kernel runs each projection (auto: the faster one per shape and
  // batch-size bucket, timed at load; linear_tuner.h).
  LinearMode linear_mode = LinearMode::auto_tune;
  double tuning_budget_s = 2.0;
  std::string tuning_cache;  // "" default location, "off" none
};

class ModelRunner {
 public:
  ModelRunner(std::shared_ptr<const ModelWeights> weights, KvCacheSpec spec,
              RunnerOptions options = {});
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Runs one step. `logits` receives [plan.logit_rows().size(), vocab_size] row-major, in
  // logit_rows() order (one row per sample index without speculative drafts).
  void forward(const StepPlan& plan, std::vector<float>* logits);

  const ModelConfig& config() const;
  // The kernels this runner uses: ISA, linear mode, and each projection shape's plan.
  const std::string& kernel_summary() const;
  // Bytes of K and V cache one block takes across all layers (fp32 on CPU).
  static int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
