#pragma once
// Qwen3.5's Gated DeltaNet mixer on CPU (issue #35): per sequence of a step, the short causal
// convolution over its q/k/v channels, then the gated delta rule, each carrying the sequence's
// recurrent state (its state slot, kvcache/state_slots.h) from the previous step; then the gated
// RMSNorm. Internal to cpu/: ModelRunner calls it for each linear_attention layer.
#include <cstdint>
#include <vector>

#include "cpu/packed_layer.h"
#include "model/model_config.h"
#include "model/tensor.h"
#include "scheduler/step_plan.h"

namespace ps {

// Every linear layer's states for every slot: the convolution's last K - 1 inputs
// [slots, conv_dim, K - 1] and the delta rule's matrices [slots, Hv, dk, dv], in memory that is
// committed as slots are first used (kv_cache_pages.h).
class RecurrentStates {
 public:
  RecurrentStates() = default;
  RecurrentStates(const ModelConfig& c, int32_t num_slots);

  int32_t num_slots() const { return num_slots_; }
  float* conv(int32_t linear_layer, int32_t slot) const;
  float* delta(int32_t linear_layer, int32_t slot) const;
  // A sequence that starts at position 0 starts from zero states in every layer.
  void reset(int32_t slot);
  // Copies slot `from`'s states into slot `to`: in every layer, or in one.
  void copy(int32_t from, int32_t to);
  void copy_layer(int32_t linear_layer, int32_t from, int32_t to);

 private:
  int32_t num_slots_ = 0;
  int64_t conv_floats_ = 0, delta_floats_ = 0;  // per slot per layer
  std::vector<Tensor> conv_, delta_;            // per linear layer
};

// The mixer of one linear layer over a step's rows. `in` is [T, ld] with linear_in's output
// (q, k, v, then z, b, a per row); the convolution overwrites its q/k/v part. `out` is
// [T, value_dim]: the gated norm's output, ready for out_proj. `plan.state_slots` names each
// sequence's slot; plan.state_snapshots' states are copied into slot snapshot_base + snapshot
// as the sequence's rows pass their boundary.
struct LinearMixerArgs {
  const PackedLayer* weights = nullptr;
  const LinearAttentionShape* shape = nullptr;
  float eps = 1e-6f;
  int32_t linear_layer = 0;
  float* in = nullptr;
  int64_t ld = 0;
  float* out = nullptr;
  int32_t snapshot_base = 0;
};
void run_linear_mixer(const LinearMixerArgs& a, const StepPlan& plan, RecurrentStates& states,
                      std::vector<float>* scratch);

}  // namespace ps
