#pragma once
// The tensors of a decoder checkpoint. Includes ATen: only model/ sources include this header.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/moe_weights.h"

namespace ps {

// Hugging Face layout and names; linear weights are [out_features, in_features].
// Optional tensors (biases, q/k norms) are undefined tensors when the architecture has none.
struct LayerWeights {
  at::Tensor input_layernorm;           // [hidden]
  at::Tensor q_proj, k_proj, v_proj;    // [heads*hd, hidden], [kv*hd, hidden], [kv*hd, hidden]
  at::Tensor q_bias, k_bias, v_bias;    // qwen2 only
  at::Tensor q_norm, k_norm;            // [head_dim], qwen3 only
  at::Tensor o_proj;                    // [hidden, heads*hd]
  at::Tensor post_attention_layernorm;  // [hidden]
  at::Tensor gate_proj, up_proj;        // [inter, hidden]; undefined in a sparse layer
  at::Tensor down_proj;                 // [hidden, inter]
  MoeLayerWeights moe;                  // a sparse layer's router and experts (moe_weights.h)
};

struct ModelWeights {
  ModelConfig config;
  at::Tensor embed_tokens;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  at::Tensor norm;     // [hidden]
  at::Tensor lm_head;  // [vocab, hidden]; the same storage as embed_tokens when tied
};

// One checkpoint tensor: its Hugging Face name, the shape config.json implies, and its field.
struct WeightSlot {
  std::string name;
  std::vector<int64_t> shape;
  at::Tensor* tensor;
};

// Every tensor a checkpoint of `weights.config` stores, in canonical order (embedding, layers,
// final norm, then lm_head only when untied). Sizes weights.layers to the layer count; the
// pointers stay valid while `weights` is neither moved nor resized.
std::vector<WeightSlot> weight_slots(ModelWeights& weights);

}  // namespace ps
