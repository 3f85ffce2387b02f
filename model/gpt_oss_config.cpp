#include "model/gpt_oss_config.h"

#include <cmath>

#include "model/config_json.h"
#include "model/layer_types.h"
#include "model/model_config.h"

namespace ps {

using config_json::fail;
using config_json::has;
using config_json::positive_int;

void read_gpt_oss_fields(const nlohmann::json& j, const std::string& origin, ModelConfig* c) {
  if (!has(j, "quantization_config")) {
    fail(origin,
         "gpt_oss without quantization_config is a checkpoint with dequantized experts, which "
         "is not supported; serve the released MXFP4 checkpoint");
  }
  const nlohmann::json& q = j.at("quantization_config");
  if (!q.is_object() || !has(q, "quant_method") || q.at("quant_method") != "mxfp4") {
    fail(origin, "quantization_config " + q.dump() +
                     " is not supported for gpt_oss (only quant_method \"mxfp4\")");
  }
  MoeConfig& m = c->moe;
  if (!has(j, "num_local_experts")) {
    fail(origin, "missing required field \"num_local_experts\" (the number of experts)");
  }
  m.num_experts = positive_int(j, "num_local_experts", origin);
  // HF spells k num_experts_per_tok; OpenAI's own field is experts_per_token.
  const char* k_key = has(j, "num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  if (!has(j, k_key)) {
    fail(origin,
         "missing required field \"num_experts_per_tok\" (how many experts each token "
         "uses)");
  }
  m.num_experts_per_tok = positive_int(j, k_key, origin);
  m.moe_intermediate_size = c->intermediate_size;  // gpt-oss's intermediate_size is one expert's
  // Top-k over the router logits, then a softmax over those k: the same weights as a softmax
  // over every expert renormalised over the k kept.
  m.norm_topk_prob = true;
  m.gpt_oss_experts = true;
  m.swiglu_limit = 7.0f;
  if (has(j, "swiglu_limit")) {
    const nlohmann::json& v = j.at("swiglu_limit");
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0)) {
      fail(origin, "field \"swiglu_limit\" must be a positive number, got " + v.dump());
    }
    m.swiglu_limit = static_cast<float>(v.get<double>());
  }
  c->sliding_window = has(j, "sliding_window") ? positive_int(j, "sliding_window", origin) : 128;
  // GptOssConfig's default: layer 0 slides, layer 1 attends fully, and so on.
  std::vector<LayerType> alternating;
  for (int32_t i = 0; i < c->num_hidden_layers; ++i) {
    alternating.push_back(i % 2 == 0 ? LayerType::sliding_attention : LayerType::full_attention);
  }
  read_layer_types(j, origin, alternating, c);
}

void validate_gpt_oss(const ModelConfig& c, const std::string& origin) {
  if (!c.gpt_oss()) return;
  if (!c.moe.enabled() || !c.moe.gpt_oss_experts) {
    fail(origin, "gpt_oss needs num_local_experts > 0");
  }
  if (c.hidden_size % 32 != 0 || c.moe.moe_intermediate_size % 32 != 0) {
    fail(origin,
         "gpt_oss's MXFP4 experts need hidden_size and intermediate_size to be multiples "
         "of 32, got " +
             std::to_string(c.hidden_size) + " and " + std::to_string(c.moe.moe_intermediate_size));
  }
  if (!(c.moe.swiglu_limit > 0)) fail(origin, "swiglu_limit must be positive");
}

void write_gpt_oss_fields(const ModelConfig& c, nlohmann::json* out) {
  if (!c.gpt_oss()) return;
  nlohmann::json& j = *out;
  j["num_local_experts"] = c.moe.num_experts;
  j["num_experts_per_tok"] = c.moe.num_experts_per_tok;
  j["experts_per_token"] = c.moe.num_experts_per_tok;
  j["swiglu_limit"] = c.moe.swiglu_limit;
  j["attention_bias"] = true;
  j["quantization_config"] = {
      {"quant_method", "mxfp4"},
      {"modules_to_not_convert",
       {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"}}};
  write_layer_types(c, &j);
}

}  // namespace ps
