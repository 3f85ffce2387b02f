#pragma once
// The sparse MLP of one layer, batched over a step: every token row is routed, rows are grouped
// by expert, and each expert that any row chose runs its gate/up and down projections once over
// all of its rows (unused experts cost nothing). Shared experts run once over all rows.
#include <cstdint>
#include <vector>

#include "cpu/projection.h"
#include "kernels/linear_tuner.h"
#include "model/model_config.h"
#include "model/moe_weights.h"

namespace ps {

// Grow-only working memory, shared by every MoeLayer of a runner (one step runs at a time).
struct MoeScratch {
  std::vector<float> logits, weights, gathered, gate_up, act, expert_out, moe_out;
  std::vector<int32_t> experts;  // [rows * k]: row r's chosen experts, ascending
  std::vector<int32_t> slot;     // [rows * k]: where that choice sits in the grouped order
  std::vector<int32_t> row_of;   // [rows * k], grouped order: the token row of each entry
  std::vector<int32_t> count;    // [num_experts + 1] start of each expert's group
};

// Softmax (fp32) over the `num_experts` router logits of one row, the k largest (ties: the lower
// expert id), renormalised as `moe` says. Writes k experts ascending by id with their weights.
void route_row(const float* logits, const MoeConfig& moe, int32_t* experts, float* weights);

class MoeLayer {
 public:
  MoeLayer(const MoeLayerWeights& w, const ModelConfig& c, LinearTuner& tuner);

  // y[rows, hidden] += MoE(x[rows, hidden]), x the post-attention-normed rows.
  void run(const float* x, int64_t rows, float* y, MoeScratch* s) const;

  // Bytes of the router and experts held, and those one token reads (the router, its k
  // experts, the shared experts): what `bench offline`'s bandwidth floor divides by.
  int64_t bytes_held() const;
  int64_t bytes_read_per_token() const;

  // How many rows each expert received in the last run (for tests: unused experts get none).
  const std::vector<int64_t>& last_expert_rows() const { return last_rows_; }

 private:
  // gpt_oss: the router and experts from their fused MXFP4 tensors, gate and up rows moved
  // apart into the [gate | up] layout the activation reads, each expert's biases beside it.
  void load_gpt_oss_experts(const MoeLayerWeights& w);
  // act[rows, shared width] *= sigmoid(x[r] . shared_expert_gate) per row.
  void scale_by_shared_gate(const float* x, int64_t rows, float* act) const;

  MoeConfig moe_;
  int64_t hidden_ = 0, shared_width_ = 0;
  Projection router_;
  std::vector<float> router_bias_;                            // gpt_oss [E]
  std::vector<std::vector<float>> gate_up_bias_, down_bias_;  // gpt_oss, per expert
  std::vector<Projection> gate_up_, down_;                    // per routed expert
  Projection shared_gate_up_, shared_down_;                   // all shared experts as one wide MLP
  std::vector<float> shared_gate_;  // qwen3_next's shared_expert_gate [hidden]; empty: ungated
  mutable std::vector<int64_t> last_rows_;
};

}  // namespace ps
