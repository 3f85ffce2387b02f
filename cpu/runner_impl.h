#pragma once
// ModelRunner's state (model_runner.h), internal to cpu/: the packed layers, the KV pages, the
// linear layers' recurrent states and the step's scratch. model_runner.cpp builds it;
// runner_forward.cpp runs one step over it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/linear_attention_layer.h"
#include "cpu/lora_bank.h"
#include "cpu/model_runner.h"
#include "cpu/moe_layer.h"
#include "cpu/packed_layer.h"
#include "cpu/projection.h"
#include "cpu/runner_ops.h"
#include "model/rope_scaling.h"

namespace ps {
namespace runner_detail {

inline const float* ptr(const Tensor& t) {
  return t.defined() ? t.data_ptr<float>() : nullptr;
}

// y[m, n] (= or +=) x[m, k] · wᵀ (+ bias).
inline void project(const float* x, int64_t m, const Projection& w, const Tensor& bias, float* y,
                    bool accumulate = false) {
  w.run(x, m, ptr(bias), y, accumulate);
}

// Grow-only scratch: a step reuses the previous step's memory (fresh multi-megabyte buffers
// per step would be page-faulted and zeroed by the kernel every time).
struct Buffer {
  std::vector<float> v;
  float* get(int64_t n) {
    if (int64_t(v.size()) < n) v.resize(size_t(n));
    return v.data();
  }
};

}  // namespace runner_detail

struct ModelRunner::Impl {
  using Buffer = runner_detail::Buffer;
  std::shared_ptr<const ModelWeights> weights;
  ModelConfig c;
  KvCacheSpec spec;
  Tensor embed, final_norm;
  Projection lm_head;
  // A tied embedding is read from lm_head's panels (the same values): its mapped checkpoint
  // pages are then never touched. Each lookup had faulted in a whole page-cache folio (up to
  // 2 MB on ext4 with large folios): 244 MB of the 311 MB table for a 256-token prompt.
  bool embed_from_lm_head = false;
  std::vector<PackedLayer> layers;
  std::vector<Tensor> k_cache, v_cache;  // per layer [blocks, block_size, kv_heads, hd]
  bool split_pools = false;  // sliding layers' caches are the sliding pool's (KvCacheSpec)
  KvCacheDtype kv_dtype = KvCacheDtype::f32;
  RopeFrequencies rope;        // inv_freq [rotary_dim / 2], attention factor
  RopeFrequencies rope_local;  // sliding layers' (Gemma 3's rope_local_base_freq)
  bool local_rope = false;     // rope_local differs from rope: its own tables each step
  float embed_scale = 1.0f;    // Gemma: sqrt(hidden_size) in the embedding's dtype
  Buffer x, h, qkv, attn, gu, act, cos, sin, cos_local, sin_local, sel_x, sel_attn, branch;
  MoeScratch moe_scratch;
  RecurrentStates states;  // the linear layers' per-slot states (a hybrid model's)
  std::vector<float> linear_scratch;
  std::vector<int32_t> sample_rows;
  std::string kernel_summary;
  LoraBank lora;  // resident adapters; their low-rank terms follow each base projection

  // The step's cos/sin tables: one set, or two when sliding layers rotate by their own base.
  void rope_tables(const StepPlan& plan) {
    const int64_t T = plan.num_tokens(), half = rope.rotary_dim / 2;
    rope_cos_sin(rope, plan.positions.data(), T, cos.get(T * half), sin.get(T * half));
    if (local_rope) {
      rope_cos_sin(rope_local, plan.positions.data(), T, cos_local.get(T * half),
                   sin_local.get(T * half));
    }
  }

  void forward(const StepPlan& plan, std::vector<float>* logits);

  // A sequence whose step starts at position 0 (a new one, or one preempted and recomputed)
  // starts from zero recurrent states; the others continue from their slot's.
  void reset_started_states(const StepPlan& plan) {
    if (states.num_slots() == 0) return;
    // A prefix hit starts from the snapshot of its boundary (kvcache/state_snapshots.h).
    for (const StepPlan::StateCopy& r : plan.state_restores) {
      states.copy(spec.num_state_slots + r.snapshot, plan.state_slots[size_t(r.seq_index)]);
    }
    for (int32_t i = 0; i < plan.num_seqs(); ++i) {
      const int32_t begin = plan.query_start[size_t(i)];
      if (plan.query_start[size_t(i) + 1] > begin && plan.positions[size_t(begin)] == 0) {
        states.reset(plan.state_slots[size_t(i)]);
      }
    }
  }

  // bytes_of(projection) summed over every projection (lm_head and each layer's four), plus
  // moe_bytes(layer) for each sparse layer.
  template <typename BytesOf, typename MoeBytes>
  int64_t sum_over_projections(BytesOf bytes_of, MoeBytes moe_bytes) const {
    int64_t total = bytes_of(lm_head);
    for (const PackedLayer& l : layers) {
      total += bytes_of(l.qkv) + bytes_of(l.o_proj) + bytes_of(l.gate_up) + bytes_of(l.down);
      if (l.linear) total += bytes_of(l.linear_in);
      if (l.moe) total += moe_bytes(*l.moe);
    }
    return total;
  }
  // The projections' bytes held, and those one decode step (M = 1) reads: fewer when a plan
  // keeps a dense copy for OpenBLAS at large M, and only k experts of a sparse layer.
  int64_t projection_bytes_held() const {
    return sum_over_projections([](const Projection& p) { return p.bytes(); },
                                [](const MoeLayer& m) { return m.bytes_held(); });
  }
  int64_t weight_bytes_per_token() const {
    return sum_over_projections([](const Projection& p) { return p.bytes_read(1); },
                                [](const MoeLayer& m) { return m.bytes_read_per_token(); });
  }
};

}  // namespace ps
