#include "cpu/linear_attention_layer.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "cpu/kv_cache_pages.h"
#include "cpu/runner_ops.h"
#include "kernels/causal_conv1d.h"
#include "kernels/gated_delta_rule.h"
#include "kernels/parallel_for.h"

namespace ps {
namespace {

// A sequence's prompt rows from this many on run the chunked (matrix-product) form; fewer, as
// decode's one row, the token-by-token recurrence. Both give the same outputs and state.
constexpr int32_t kChunkedFrom = 32;
constexpr int32_t kChunk = 64;

float softplus(float x) {
  return x > 20.0f ? x : std::log1p(std::exp(x));  // torch's threshold: x itself past 20
}

// Convolution and delta rule over one sequence's rows [begin, begin + n), from and into its
// slot's state.
void advance_state(const LinearMixerArgs& a, int32_t begin, int32_t n, int32_t slot,
                   RecurrentStates& states, const float* g, const float* beta) {
  const LinearAttentionShape& s = *a.shape;
  const int64_t key_dim = s.key_dim();
  float* rows = a.in + int64_t{begin} * a.ld;
  CausalConv1dArgs conv;
  conv.num_tokens = n;
  conv.channels = int32_t(s.conv_dim());
  conv.kernel = s.conv_kernel;
  conv.x = rows;
  conv.x_stride = a.ld;
  conv.weight = a.weights->conv_weight.data_ptr<float>();
  conv.state = states.conv(a.linear_layer, slot);
  conv.out = rows;
  conv.out_stride = a.ld;
  causal_conv1d_silu(conv);

  GatedDeltaArgs d;
  d.num_tokens = n;
  d.num_k_heads = s.num_key_heads;
  d.num_v_heads = s.num_value_heads;
  d.k_dim = s.key_head_dim;
  d.v_dim = s.value_head_dim;
  d.q = rows;
  d.k = rows + key_dim;
  d.v = rows + 2 * key_dim;
  d.q_stride = d.k_stride = d.v_stride = a.ld;
  d.g = g + int64_t{begin} * s.num_value_heads;
  d.beta = beta + int64_t{begin} * s.num_value_heads;
  d.state = states.delta(a.linear_layer, slot);
  d.out = a.out + int64_t{begin} * s.value_dim();
  d.out_stride = s.value_dim();
  if (n >= kChunkedFrom) {
    gated_delta_rule_chunked(d, kChunk);
  } else {
    gated_delta_rule_recurrent(d);
  }
}

// One sequence's rows [begin, begin + n): its state advanced (stopping at each snapshot's
// boundary to copy it, `cuts` being the row counts from `begin` and their snapshot slots), then
// the gated norm of every row.
void mix_sequence(const LinearMixerArgs& a, int32_t begin, int32_t n, int32_t slot,
                  const std::vector<std::pair<int32_t, int32_t>>& cuts, RecurrentStates& states,
                  const float* g, const float* beta) {
  const LinearAttentionShape& s = *a.shape;
  const int64_t conv_dim = s.conv_dim(), vd = s.value_head_dim;
  int32_t done = 0;
  for (const auto& [rows_before, snapshot_slot] : cuts) {
    if (rows_before > done)
      advance_state(a, begin + done, rows_before - done, slot, states, g, beta);
    done = std::max(done, rows_before);
    states.copy_layer(a.linear_layer, slot, snapshot_slot);
  }
  if (n > done) advance_state(a, begin + done, n - done, slot, states, g, beta);

  // Gated RMSNorm per value head: rmsnorm(o) * w (each head a row of vd floats), then * silu(z).
  const float* rows = a.in + int64_t{begin} * a.ld;
  float* out = a.out + int64_t{begin} * s.value_dim();
  rms_norm_rows(out, vd, nullptr, int64_t{n} * s.num_value_heads, vd,
                a.weights->gated_norm.data_ptr<float>(), a.eps, out, vd);
  for (int32_t t = 0; t < n; ++t) {
    float* o = out + int64_t{t} * s.value_dim();
    const float* z = rows + int64_t{t} * a.ld + conv_dim;
    for (int64_t j = 0; j < s.value_dim(); ++j) o[j] *= z[j] * sigmoid(z[j]);
  }
}

}  // namespace

RecurrentStates::RecurrentStates(const ModelConfig& c, int32_t num_slots) : num_slots_(num_slots) {
  const LinearAttentionShape& s = c.linear;
  conv_floats_ = s.conv_dim() * (s.conv_kernel - 1);
  delta_floats_ = int64_t{s.num_value_heads} * s.key_head_dim * s.value_head_dim;
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    if (!c.layer_is_linear(l)) continue;
    // A kernel of 1 keeps no inputs: one float per slot keeps the pointers valid.
    conv_.push_back(
        lazily_committed_zeros({num_slots, std::max<int64_t>(conv_floats_, 1)}, DType::f32));
    delta_.push_back(lazily_committed_zeros({num_slots, delta_floats_}, DType::f32));
  }
}

float* RecurrentStates::conv(int32_t layer, int32_t slot) const {
  return conv_[size_t(layer)].data_ptr<float>() +
         int64_t{slot} * std::max<int64_t>(conv_floats_, 1);
}

float* RecurrentStates::delta(int32_t layer, int32_t slot) const {
  return delta_[size_t(layer)].data_ptr<float>() + int64_t{slot} * delta_floats_;
}

void RecurrentStates::copy_layer(int32_t layer, int32_t from, int32_t to) {
  std::memcpy(conv(layer, to), conv(layer, from), sizeof(float) * size_t(conv_floats_));
  std::memcpy(delta(layer, to), delta(layer, from), sizeof(float) * size_t(delta_floats_));
}

void RecurrentStates::copy(int32_t from, int32_t to) {
  if (from < 0 || from >= num_slots_ || to < 0 || to >= num_slots_) {
    throw std::out_of_range("RecurrentStates: copy " + std::to_string(from) + " -> " +
                            std::to_string(to) + " of " + std::to_string(num_slots_) + " slots");
  }
  for (size_t l = 0; l < conv_.size(); ++l) copy_layer(int32_t(l), from, to);
}

void RecurrentStates::reset(int32_t slot) {
  if (slot < 0 || slot >= num_slots_) {
    throw std::out_of_range("RecurrentStates: slot " + std::to_string(slot) + " of " +
                            std::to_string(num_slots_));
  }
  for (size_t l = 0; l < conv_.size(); ++l) {
    std::memset(conv(int32_t(l), slot), 0, sizeof(float) * size_t(conv_floats_));
    std::memset(delta(int32_t(l), slot), 0, sizeof(float) * size_t(delta_floats_));
  }
}

void run_linear_mixer(const LinearMixerArgs& a, const StepPlan& plan, RecurrentStates& states,
                      std::vector<float>* scratch) {
  const LinearAttentionShape& s = *a.shape;
  const int64_t T = plan.num_tokens(), Hv = s.num_value_heads;
  const int64_t b_col = s.conv_dim() + s.value_dim(), a_col = b_col + Hv;
  // The write strength beta = sigmoid(b) and the log decay g = -exp(A_log) softplus(a + dt_bias)
  // of every row and value head.
  scratch->resize(size_t(2 * T * Hv));
  float* g = scratch->data();
  float* beta = g + T * Hv;
  const float* neg_exp_a = a.weights->neg_exp_a.data_ptr<float>();
  const float* dt_bias = a.weights->dt_bias.data_ptr<float>();
  for (int64_t t = 0; t < T; ++t) {
    const float* row = a.in + t * a.ld;
    for (int64_t h = 0; h < Hv; ++h) {
      beta[t * Hv + h] = sigmoid(row[b_col + h]);
      g[t * Hv + h] = neg_exp_a[h] * softplus(row[a_col + h] + dt_bias[h]);
    }
  }
  const int32_t S = plan.num_seqs();
  // Snapshot boundaries per sequence: rows before the boundary, and the slot to copy into.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> cuts(size_t(plan.num_seqs()));
  for (const StepPlan::StateCopy& c : plan.state_snapshots) {
    const int32_t first = plan.positions[size_t(plan.query_start[size_t(c.seq_index)])];
    cuts[size_t(c.seq_index)].push_back({c.num_tokens - first, a.snapshot_base + c.snapshot});
  }
  auto one = [&](int32_t i) {
    const int32_t begin = plan.query_start[size_t(i)];
    const int32_t n = plan.query_start[size_t(i) + 1] - begin;
    if (n > 0) {
      mix_sequence(a, begin, n, plan.state_slots[size_t(i)], cuts[size_t(i)], states, g, beta);
    }
  };
  // Many sequences (decode): one per thread. Few: one at a time, each kernel over its heads.
  if (S >= parallel_threads()) {
    parallel_for(0, S, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) one(int32_t(i));
    });
  } else {
    for (int32_t i = 0; i < S; ++i) one(i);
  }
}

}  // namespace ps
