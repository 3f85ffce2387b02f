#pragma once
// The tensors of a decoder checkpoint, in Hugging Face layout and names, over any tensor type:
// the serve path holds them in ps::Tensor (model_weights.h); training and the tests' PyTorch
// oracle hold the same structure in at::Tensor (torch_bridge/), so the two cannot drift apart.
// Linear weights are [out_features, in_features]. Optional tensors (biases, q/k norms) are
// undefined when the architecture has none.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace ps {

class SafetensorsFile;

template <typename T>
struct BasicExpertWeights {
  T gate_proj, up_proj;  // [width, hidden]
  T down_proj;           // [hidden, width]
};

// gpt-oss's experts, all of a layer's in one tensor each, as its checkpoints store them: the
// projections MXFP4 (kernels/mxfp4.h; blocks and scales are raw bytes), gate and up rows
// interleaved (row 2i of gate_up is gate row i, row 2i + 1 up row i), biases beside them.
template <typename T>
struct BasicMxfp4Experts {
  T gate_up_blocks, gate_up_scales;  // [E, 2 * width, hidden / 32, 16], [E, 2 * width, hidden / 32]
  T gate_up_bias;                    // [E, 2 * width]
  T down_blocks, down_scales;        // [E, hidden, width / 32, 16], [E, hidden, width / 32]
  T down_bias;                       // [E, hidden]
};

// Empty (no router) in a dense layer.
template <typename T>
struct BasicMoeLayerWeights {
  T router;       // mlp.gate.weight [num_experts, hidden] (gpt_oss: mlp.router.weight)
  T router_bias;  // gpt_oss: mlp.router.bias [num_experts]
  std::vector<BasicExpertWeights<T>> experts;  // mlp.experts.J.*, moe_intermediate_size wide
  std::vector<BasicExpertWeights<T>> shared;   // mlp.shared_experts.K.* (MiniMind 2), or
                                               // mlp.shared_expert.* (Qwen3-Next, Qwen3.5-MoE)
  T shared_expert_gate;                        // mlp.shared_expert_gate.weight [1, hidden]
  BasicMxfp4Experts<T> mxfp4;                  // gpt_oss, instead of `experts`
  bool defined() const { return router.defined(); }
};

template <typename T>
struct BasicLayerWeights {
  T input_layernorm;           // [hidden]
  T q_proj, k_proj, v_proj;    // [heads*hd, hidden], [kv*hd, hidden], [kv*hd, hidden]
  T q_bias, k_bias, v_bias;    // qwen2 and gpt_oss
  T o_bias;                    // [hidden], gpt_oss only
  T sinks;                     // [heads], gpt_oss's per-head attention sink logits
  T q_norm, k_norm;            // [head_dim], qwen3 only
  T o_proj;                    // [hidden, heads*hd]
  T post_attention_layernorm;  // [hidden]; Gemma 3: on the attention's output, before the add
  T pre_feedforward_layernorm, post_feedforward_layernorm;  // [hidden], Gemma 3 only
  // A Gated DeltaNet layer's mixer (linear_attn.*, Qwen3.5), instead of q/k/v/o: in_proj_qkv
  // [2 key_dim + value_dim, hidden] (q, k, v rows), in_proj_z [value_dim, hidden], in_proj_b and
  // in_proj_a [Hv, hidden], conv1d [conv_dim, 1, K], dt_bias and A_log [Hv], the gated norm
  // [v_head_dim] (applied as w), out_proj [hidden, value_dim].
  T in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, conv1d, dt_bias, A_log, linear_norm, out_proj;
  T gate_proj, up_proj;         // [inter, hidden]; undefined in a sparse layer
  T down_proj;                  // [hidden, inter]
  BasicMoeLayerWeights<T> moe;  // a sparse layer's router and experts
};

template <typename T>
struct BasicModelWeights {
  ModelConfig config;
  T embed_tokens;  // [vocab, hidden]
  std::vector<BasicLayerWeights<T>> layers;
  T norm;     // [hidden]
  T lm_head;  // [vocab, hidden]; the same storage as embed_tokens when tied
  // The checkpoint files that bf16/f16 matrices view without a copy (loader.h LoadOptions).
  std::vector<std::shared_ptr<const SafetensorsFile>> mapped;
};

// One checkpoint tensor: its Hugging Face name, the shape config.json implies, and its field.
template <typename T>
struct BasicWeightSlot {
  std::string name;
  std::vector<int64_t> shape;
  T* tensor;
  bool raw_bytes = false;  // stored as uint8 and kept so (MXFP4 blocks and scales)
};

template <typename T>
void append_expert_slots(const std::string& name, int64_t hidden, int64_t width,
                         BasicExpertWeights<T>& e, std::vector<BasicWeightSlot<T>>* slots) {
  slots->push_back({name + ".gate_proj.weight", {width, hidden}, &e.gate_proj});
  slots->push_back({name + ".up_proj.weight", {width, hidden}, &e.up_proj});
  slots->push_back({name + ".down_proj.weight", {hidden, width}, &e.down_proj});
}

// The slots of a sparse MLP (router, then each expert's gate, up, down, then the shared
// experts) under `prefix` ("model.layers.N."). Sizes `w`'s expert lists first.
// gpt-oss's router and fused MXFP4 experts under `prefix` ("model.layers.N.").
template <typename T>
void append_gpt_oss_moe_slots(const ModelConfig& c, const std::string& prefix,
                              BasicMoeLayerWeights<T>& w, std::vector<BasicWeightSlot<T>>* slots) {
  const int64_t hidden = c.hidden_size, e = c.moe.num_experts, width = c.moe.moe_intermediate_size;
  const std::string x = prefix + "mlp.experts.";
  BasicMxfp4Experts<T>& m = w.mxfp4;
  slots->push_back({prefix + "mlp.router.weight", {e, hidden}, &w.router});
  slots->push_back({prefix + "mlp.router.bias", {e}, &w.router_bias});
  slots->push_back(
      {x + "gate_up_proj_blocks", {e, 2 * width, hidden / 32, 16}, &m.gate_up_blocks, true});
  slots->push_back(
      {x + "gate_up_proj_scales", {e, 2 * width, hidden / 32}, &m.gate_up_scales, true});
  slots->push_back({x + "gate_up_proj_bias", {e, 2 * width}, &m.gate_up_bias});
  slots->push_back({x + "down_proj_blocks", {e, hidden, width / 32, 16}, &m.down_blocks, true});
  slots->push_back({x + "down_proj_scales", {e, hidden, width / 32}, &m.down_scales, true});
  slots->push_back({x + "down_proj_bias", {e, hidden}, &m.down_bias});
}

template <typename T>
void append_moe_slots(const ModelConfig& c, const std::string& prefix, BasicMoeLayerWeights<T>& w,
                      std::vector<BasicWeightSlot<T>>* slots) {
  if (c.gpt_oss()) {
    append_gpt_oss_moe_slots(c, prefix, w, slots);
    return;
  }
  const int64_t hidden = c.hidden_size;
  w.experts.resize(static_cast<size_t>(c.moe.num_experts));
  const bool gated_shared = c.moe.shared_expert_intermediate_size > 0;
  w.shared.resize(gated_shared ? 1 : static_cast<size_t>(c.moe.num_shared_experts));
  slots->push_back({prefix + "mlp.gate.weight", {c.moe.num_experts, hidden}, &w.router});
  for (size_t j = 0; j < w.experts.size(); ++j) {
    append_expert_slots(prefix + "mlp.experts." + std::to_string(j), hidden,
                        c.moe.moe_intermediate_size, w.experts[j], slots);
  }
  if (!gated_shared) {
    for (size_t k = 0; k < w.shared.size(); ++k) {
      append_expert_slots(prefix + "mlp.shared_experts." + std::to_string(k), hidden,
                          c.intermediate_size, w.shared[k], slots);
    }
  } else {
    append_expert_slots(prefix + "mlp.shared_expert", hidden, c.moe.shared_expert_intermediate_size,
                        w.shared[0], slots);
    slots->push_back(
        {prefix + "mlp.shared_expert_gate.weight", {1, hidden}, &w.shared_expert_gate});
  }
}

// A Gated DeltaNet layer's mixer under `prefix` ("model.layers.N.linear_attn.").
template <typename T>
void append_linear_attention_slots(const ModelConfig& c, const std::string& prefix,
                                   BasicLayerWeights<T>& l,
                                   std::vector<BasicWeightSlot<T>>* slots) {
  const LinearAttentionShape& s = c.linear;
  const int64_t hidden = c.hidden_size, hv = s.num_value_heads;
  slots->push_back({prefix + "in_proj_qkv.weight", {s.conv_dim(), hidden}, &l.in_proj_qkv});
  slots->push_back({prefix + "in_proj_z.weight", {s.value_dim(), hidden}, &l.in_proj_z});
  slots->push_back({prefix + "in_proj_b.weight", {hv, hidden}, &l.in_proj_b});
  slots->push_back({prefix + "in_proj_a.weight", {hv, hidden}, &l.in_proj_a});
  slots->push_back({prefix + "conv1d.weight", {s.conv_dim(), 1, s.conv_kernel}, &l.conv1d});
  slots->push_back({prefix + "dt_bias", {hv}, &l.dt_bias});
  slots->push_back({prefix + "A_log", {hv}, &l.A_log});
  slots->push_back({prefix + "norm.weight", {s.value_head_dim}, &l.linear_norm});
  slots->push_back({prefix + "out_proj.weight", {hidden, s.value_dim()}, &l.out_proj});
}

// A layer's MLP under `prefix` ("model.layers.N."): dense, or sparse (append_moe_slots).
template <typename T>
void append_mlp_slots(const ModelConfig& c, int32_t layer, const std::string& prefix,
                      BasicLayerWeights<T>& l, std::vector<BasicWeightSlot<T>>* slots) {
  if (c.moe.is_sparse_layer(layer)) {
    append_moe_slots(c, prefix, l.moe, slots);
    return;
  }
  const int64_t hidden = c.hidden_size, inter = c.intermediate_size;
  slots->push_back({prefix + "mlp.gate_proj.weight", {inter, hidden}, &l.gate_proj});
  slots->push_back({prefix + "mlp.up_proj.weight", {inter, hidden}, &l.up_proj});
  slots->push_back({prefix + "mlp.down_proj.weight", {hidden, inter}, &l.down_proj});
}

// Every tensor a checkpoint of `w.config` stores, in canonical order (embedding, layers, final
// norm, then lm_head only when untied). Sizes w.layers to the layer count; the pointers stay
// valid while `w` is neither moved nor resized.
template <typename T>
std::vector<BasicWeightSlot<T>> basic_weight_slots(BasicModelWeights<T>& w) {
  const ModelConfig& c = w.config;
  const int64_t hidden = c.hidden_size;
  const int64_t q = c.q_size(), kv = c.kv_size();
  w.layers.resize(static_cast<size_t>(c.num_hidden_layers));
  std::vector<BasicWeightSlot<T>> slots;
  slots.push_back({"model.embed_tokens.weight", {c.vocab_size, hidden}, &w.embed_tokens});
  for (int32_t i = 0; i < c.num_hidden_layers; ++i) {
    BasicLayerWeights<T>& l = w.layers[static_cast<size_t>(i)];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    slots.push_back({p + "input_layernorm.weight", {hidden}, &l.input_layernorm});
    if (c.layer_is_linear(i)) {
      append_linear_attention_slots(c, p + "linear_attn.", l, &slots);
      slots.push_back(
          {p + "post_attention_layernorm.weight", {hidden}, &l.post_attention_layernorm});
      append_mlp_slots(c, i, p, l, &slots);
      continue;
    }
    // Qwen3.5's q_proj gives each head's query and then its output gate.
    slots.push_back(
        {p + "self_attn.q_proj.weight", {c.attn_output_gate ? 2 * q : q, hidden}, &l.q_proj});
    slots.push_back({p + "self_attn.k_proj.weight", {kv, hidden}, &l.k_proj});
    slots.push_back({p + "self_attn.v_proj.weight", {kv, hidden}, &l.v_proj});
    if (c.attention_bias) {
      slots.push_back({p + "self_attn.q_proj.bias", {q}, &l.q_bias});
      slots.push_back({p + "self_attn.k_proj.bias", {kv}, &l.k_bias});
      slots.push_back({p + "self_attn.v_proj.bias", {kv}, &l.v_bias});
    }
    if (c.qk_norm) {
      slots.push_back({p + "self_attn.q_norm.weight", {c.head_dim}, &l.q_norm});
      slots.push_back({p + "self_attn.k_norm.weight", {c.head_dim}, &l.k_norm});
    }
    slots.push_back({p + "self_attn.o_proj.weight", {hidden, q}, &l.o_proj});
    if (c.gpt_oss()) {
      slots.push_back({p + "self_attn.o_proj.bias", {hidden}, &l.o_bias});
      slots.push_back({p + "self_attn.sinks", {c.num_attention_heads}, &l.sinks});
    }
    slots.push_back({p + "post_attention_layernorm.weight", {hidden}, &l.post_attention_layernorm});
    if (c.gemma_layout()) {
      slots.push_back(
          {p + "pre_feedforward_layernorm.weight", {hidden}, &l.pre_feedforward_layernorm});
      slots.push_back(
          {p + "post_feedforward_layernorm.weight", {hidden}, &l.post_feedforward_layernorm});
    }
    append_mlp_slots(c, i, p, l, &slots);
  }
  slots.push_back({"model.norm.weight", {hidden}, &w.norm});
  if (!c.tie_word_embeddings) {
    slots.push_back({"lm_head.weight", {c.vocab_size, hidden}, &w.lm_head});
  }
  return slots;
}

}  // namespace ps
