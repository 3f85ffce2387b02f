#pragma once
// The mixture-of-experts part of a decoder's shape: Qwen3-MoE (`qwen3_moe`), the hybrid
// Qwen3-Next (`qwen3_next`) and Qwen3.5-MoE (`qwen3_5_moe_text`), and MiniMind's own format
// (`minimind`, dense or `use_moe`); gpt_oss's own fields are gpt_oss_config.cpp's. Parsed
// from config.json by ModelConfig::from_json.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

struct ModelConfig;

// How a sparse layer turns router logits into expert weights. All variants take an fp32 softmax
// over every expert and keep the top k; they differ in the renormalisation.
struct MoeConfig {
  int32_t num_experts = 0;  // routed experts; 0: every layer is dense
  int32_t num_experts_per_tok = 0;
  int32_t moe_intermediate_size = 0;  // width of one routed expert
  bool norm_topk_prob = false;        // divide the kept weights by their sum
  // MiniMind adds 1e-20 to that sum (HF Qwen3-MoE adds nothing) and its older generation
  // (n_routed_experts spelling) renormalises only when k > 1.
  float norm_topk_epsilon = 0.0f;
  bool norm_topk_only_above_one = false;
  int32_t decoder_sparse_step = 1;       // qwen3_moe: layer l is sparse when (l + 1) % step == 0
  std::vector<int32_t> mlp_only_layers;  // qwen3_moe: layers forced dense
  // MiniMind's older generation: dense experts of intermediate_size every token passes through,
  // added with weight 1 to the routed sum.
  int32_t num_shared_experts = 0;
  // qwen3_next, qwen3_5_moe_text: one shared expert of this width (0: none) beside the routed
  // ones, its output scaled per token by sigmoid(x . mlp.shared_expert_gate) before the add.
  int32_t shared_expert_intermediate_size = 0;
  // gpt_oss (gpt_oss_config.h): a bias on the router and on each expert's projections, gate and
  // up rows interleaved in the checkpoint (gate even, up odd), the activation
  // (clamp(up, +-limit) + 1) * g * sigmoid(1.702 g) with g = min(gate, limit), MXFP4 weights.
  bool gpt_oss_experts = false;
  float swiglu_limit = 0.0f;

  bool enabled() const { return num_experts > 0; }
  bool is_sparse_layer(int32_t layer) const;
};

// `minimind` config.json files come in two generations, told apart by how they spell the MoE
// fields (both write them whether or not use_moe is set): "n_routed_experts" (MiniMind 2:
// shared experts, no q/k norms) or "num_experts" (MiniMind 3: q/k norms, no shared experts).
// The ModelConfig's qk_norm flag records which one it is.
bool minimind_is_v2(const nlohmann::json& config);
// intermediate_size when a MiniMind config leaves it null (each generation's own formula).
int32_t minimind_default_intermediate_size(const nlohmann::json& config, int32_t hidden_size);

// intermediate_size when config.json leaves it out: Qwen3.5-MoE has no dense MLP, so the routed
// expert's width stands in (nullopt for the families that need the field).
std::optional<int32_t> sparse_only_intermediate_size(const nlohmann::json& config,
                                                     const std::string& type,
                                                     const std::string& origin);

// Reads the MoE fields of `config` (qwen3_moe, qwen3_next, qwen3_5_moe_text, minimind) into c->moe.
// A field a sparse model cannot do without (the expert count, k, the expert width) is a
// std::runtime_error naming it and `origin`.
void read_moe_fields(const nlohmann::json& config, const std::string& origin, ModelConfig* c);
// Throws std::runtime_error (prefixed with `origin`) when the MoE shape is inconsistent.
void validate_moe(const ModelConfig& c, const std::string& origin);
// Adds the fields read_moe_fields reads back (MiniMind spellings for minimind).
void write_moe_fields(const ModelConfig& c, nlohmann::json* out);

// Parameters of layer `layer`'s MLP: all of them, or only those one token uses (`active`).
int64_t mlp_params(const ModelConfig& c, int32_t layer, bool active);

}  // namespace ps
