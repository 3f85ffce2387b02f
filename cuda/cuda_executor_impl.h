#pragma once
// The CUDA executor's class, shared by its two source files: cuda_executor.cpp (weights, memory,
// the eager step) and cuda_executor_graphs.cpp (CUDA graphs for decode steps). Private to
// cuda/: everything else sees only cuda_executor.h.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cublas_api.h"
#include "cuda/cuda_executor.h"
#include "cuda/device_memory.h"
#include "cuda/kernels.h"
#include "cuda/plan_upload.h"

namespace ps::cuda {

inline constexpr DType kAct = DType::bf16;  // activations, weights and the KV cache
inline constexpr int64_t kAlign = 256;      // bytes: every tensor in the weight arena starts here
inline constexpr int64_t kCublasWorkspace = 32ll << 20;

inline int64_t align_up(int64_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

inline void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what + ": " + cublas_api().status_string(s));
  }
}

// A layer's weights as device pointers into the arena (nullptr: the model has none).
struct DeviceLayer {
  const void *input_norm = nullptr, *post_norm = nullptr;
  const void *qkv = nullptr, *qkv_bias = nullptr, *q_norm = nullptr, *k_norm = nullptr;
  const void *o_proj = nullptr, *gate_up = nullptr, *down = nullptr;
};

// The step buffers' size: `tokens` packed rows, `rows` logits rows.
struct StepShape {
  int64_t tokens = 0, rows = 0;
};

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(Bf16ModelSource source, const CudaExecutorOptions& o, KvCacheSpec* kv,
               std::string* sizing);
  ~CudaExecutor() override;

  void forward(const StepPlan& plan, std::vector<float>* logits) override;
  void set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) override;
  const ModelConfig& config() const override { return c_; }
  const std::string& kernel_summary() const override { return summary_; }
  int64_t weight_bytes() const override { return weights_.bytes(); }
  int64_t weight_bytes_per_token() const override { return bytes_per_token_; }

 private:
  int64_t step_buffer_bytes(StepShape s) const;
  void reserve_step(StepShape s);
  // Enqueues the whole step, from the embedding lookup to lm_head's fp32 logits in logits_,
  // reading the plan from `d` (device) laid out as `lay`. No copies, no syncs: the same calls
  // run eagerly or are captured into a graph.
  void enqueue_step(const PlanUploadLayout& lay, const int32_t* d);
  // Runs a decode step through its bucket's graph (capturing it the first time the bucket runs);
  // false when the step is not one a graph runs.
  bool try_graph_step(const StepPlan& plan);
  // At start: each bucket's all-padding plan runs once eagerly (loading cuBLAS's and our
  // kernels) and is captured. A failure turns graphs off, with a message, instead of failing.
  void capture_all_graphs();
  // Captures the step whose padded plan is in graph_plan_dev_ (laid out as `lay`); false, with
  // graphs turned off, when the capture fails.
  bool capture(int32_t bucket, const PlanUploadLayout& lay);
  void upload_graph_plan(const StepPlan& padded, PlanUploadLayout* lay);
  void drop_graphs();
  void copy_logits_back(int64_t rows, std::vector<float>* logits);
  void upload_weights(const Bf16ModelSource& source);
  void upload_rope_table();
  // y[m, n] = x[m, k] · w[n, k]ᵀ, row-major, bf16 operands, fp32 accumulation.
  void gemm(const void* x, int64_t m, int64_t k, const void* w, int64_t n, void* y,
            cudaDataType_t y_type);

  ModelConfig c_;
  KvCacheSpec spec_;
  std::string summary_;
  int64_t bytes_per_token_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;

  DeviceMemory weights_;  // one arena: every matrix and norm vector
  const void *embed_ = nullptr, *lm_head_ = nullptr, *final_norm_ = nullptr;
  std::vector<DeviceLayer> layers_;
  DeviceMemory rope_;  // fp32 [max positions, head_dim]: cos half then sin half
  DeviceMemory kv_;    // per layer K then V, [num_blocks, block_size, kv_heads, head_dim] each
  int64_t kv_layer_bytes_ = 0;
  DeviceMemory cublas_workspace_;

  // Step buffers, grown (never shrunk) to the largest step seen; allocated up front for the
  // configured maximum so that the KV sizing accounts for them.
  StepShape capacity_;
  DeviceMemory residual_, x_, qkv_, attn_, gu_, act_, sel_, logits_;
  DeviceMemory plan_dev_;
  PinnedMemory plan_host_, logits_host_;

  // CUDA graphs for decode-only steps (graph_buckets.h), one per bucket, captured at start
  // (and again after the step buffers grow, which drops them: they hold the buffers'
  // addresses). They read their plan from graph_plan_dev_, sized once for the largest bucket.
  struct Graph {
    cudaGraphExec_t exec = nullptr;
  };
  bool graphs_enabled_ = true;
  std::vector<int32_t> buckets_;
  int32_t graph_width_ = 0;  // block-table columns of every graph: the longest context's blocks
  std::map<int32_t, Graph> graphs_;
  DeviceMemory graph_plan_dev_;
};

}  // namespace ps::cuda
