#pragma once
// The batched forward of docs/architecture.md §3: one packed forward per step over all scheduled
// tokens, K/V written to and read from the paged cache. Torch-free header: engine/ uses it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/linear_tuner.h"
#include "model/executor.h"
#include "model/model_config.h"
#include "model/model_dtype.h"
#include "scheduler/step_plan.h"

namespace ps {

struct ModelWeights;

struct RunnerOptions {
  // --kernel: which linear kernel runs each projection (auto: the faster one per shape and
  // batch-size bucket, timed at load; linear_tuner.h).
  LinearMode linear_mode = LinearMode::auto_tune;
  double tuning_budget_s = 2.0;
  std::string tuning_cache;  // "" default location, "off" none
  // --quantization int8: every projection (and lm_head) packed as int8 with fp32 scales, one
  // per output channel (group 0) or per `quantization_group` input columns.
  WeightQuantization quantization = WeightQuantization::none;
  int64_t quantization_group = 0;
  // --kv-cache-dtype: the cache's element type (attention computes in fp32 either way); auto
  // follows the embedding's dtype (model_dtype.h). fp32 unless asked, for callers that build a
  // runner themselves.
  KvCacheDtype kv_cache_dtype = KvCacheDtype::f32;
  // --compute-dtype: bfloat16 runs every float projection on the bf16 dot products, int8 every
  // int8 one on the int8 dot products (model_dtype.h); each needs its unit (AVX512_BF16 on the
  // avx512 kernel ISA; AVX512_VNNI on avx512 or AVX-VNNI on avx2), and the packed kernel
  // (cpu/packed_layer.h).
  ComputeDtype compute_dtype = ComputeDtype::f32;
};

class ModelRunner : public Executor {
 public:
  ModelRunner(std::shared_ptr<const ModelWeights> weights, KvCacheSpec spec,
              RunnerOptions options = {});
  ~ModelRunner() override;
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Runs one step. `logits` receives [plan.logit_rows().size(), vocab_size] row-major, in
  // logit_rows() order (one row per sample index without speculative drafts).
  void forward(const StepPlan& plan, std::vector<float>* logits) override;

  // Makes `adapter` (cpu/lora_factors.h: pack_lora_adapter) the one sequences with
  // plan.lora_slot == slot run with; null empties the slot. Only between steps.
  void set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) override;

  const ModelConfig& config() const override;
  // The kernels this runner uses: ISA, linear mode, and each projection shape's plan.
  const std::string& kernel_summary() const override;
  // Bytes of K and V cache one block takes across all layers.
  static int64_t kv_bytes_per_block(const ModelConfig& config, int32_t block_size,
                                    KvCacheDtype dtype = KvCacheDtype::f32);
  // Weight bytes this runner holds (packed projections, lm_head, embedding, norms), and the
  // part of them one decode step reads (every projection and lm_head): the bandwidth floor's
  // numerator.
  int64_t weight_bytes() const override;
  int64_t weight_bytes_per_token() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
