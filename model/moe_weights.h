#pragma once
// The tensors of one sparse MLP, in Hugging Face layout ([out_features, in_features]).
// Includes ATen: only model/ sources include this header.
#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace ps {

struct ModelConfig;
struct WeightSlot;

struct ExpertWeights {
  at::Tensor gate_proj, up_proj;  // [width, hidden]
  at::Tensor down_proj;           // [hidden, width]
};

// Empty (no router) in a dense layer.
struct MoeLayerWeights {
  at::Tensor router;                   // mlp.gate.weight [num_experts, hidden]
  std::vector<ExpertWeights> experts;  // mlp.experts.J.*, moe_intermediate_size wide
  std::vector<ExpertWeights> shared;   // mlp.shared_experts.K.* (MiniMind 2), intermediate_size

  bool defined() const { return router.defined(); }
};

// Appends the slots of layer `layer`'s sparse MLP (router, then each expert's gate, up, down,
// then the shared experts) under `prefix` ("model.layers.N."). Sizes `w`'s expert lists first.
void append_moe_slots(const ModelConfig& c, const std::string& prefix, MoeLayerWeights& w,
                      std::vector<WeightSlot>* slots);

}  // namespace ps
