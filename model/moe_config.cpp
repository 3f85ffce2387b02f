#include "model/moe_config.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/config_json.h"
#include "model/model_config.h"

namespace ps {
namespace {

using json = nlohmann::json;

using config_json::fail;

using config_json::has;

int32_t int_field(const json& j, const char* key, const std::string& origin) {
  const json& v = j.at(key);
  if (v.is_number_integer()) {
    const auto x = v.get<int64_t>();
    if (x >= -(int64_t{1} << 31) && x < (int64_t{1} << 31)) return static_cast<int32_t>(x);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 2147483647.0) {
      return static_cast<int32_t>(d);
    }
  }
  fail(origin, std::string("field \"") + key + "\" must be an integer, got " + v.dump());
}

// A field a sparse model cannot be built without: the message names it and why it is needed.
int32_t required_int(const json& j, const char* key, const std::string& why,
                     const std::string& origin) {
  if (!has(j, key))
    fail(origin, std::string("missing required field \"") + key + "\" (" + why + ")");
  return int_field(j, key, origin);
}

int32_t optional_int(const json& j, const char* key, int32_t fallback, const std::string& origin) {
  return has(j, key) ? int_field(j, key, origin) : fallback;
}

bool optional_bool(const json& j, const char* key, bool fallback, const std::string& origin) {
  if (!has(j, key)) return fallback;
  if (!j.at(key).is_boolean())
    fail(origin, std::string("field \"") + key + "\" must be true or false");
  return j.at(key).get<bool>();
}

// qwen3_moe, and the hybrid qwen3_next / qwen3_5_moe_text that add one gated shared expert.
void read_qwen3_moe(const json& j, const std::string& type, const std::string& origin,
                    MoeConfig* m) {
  m->num_experts = required_int(j, "num_experts", "the number of routed experts", origin);
  m->num_experts_per_tok =
      required_int(j, "num_experts_per_tok", "how many experts each token uses", origin);
  m->moe_intermediate_size =
      required_int(j, "moe_intermediate_size", "the width of one expert", origin);
  if (type != "qwen3_moe") {
    m->shared_expert_intermediate_size = required_int(j, "shared_expert_intermediate_size",
                                                      "the width of the shared expert", origin);
  }
  // The rest have the defaults Qwen3MoeConfig / Qwen3NextConfig give them; Qwen3.5-MoE always
  // renormalises the kept weights and makes every layer sparse.
  m->norm_topk_prob = optional_bool(j, "norm_topk_prob", type != "qwen3_moe", origin);
  if (type == "qwen3_5_moe_text") {
    if (!m->norm_topk_prob) fail(origin, "norm_topk_prob false is not a qwen3_5_moe_text option");
    return;
  }
  m->decoder_sparse_step = optional_int(j, "decoder_sparse_step", 1, origin);
  if (has(j, "mlp_only_layers")) {
    const json& v = j.at("mlp_only_layers");
    if (!v.is_array()) fail(origin, "field \"mlp_only_layers\" must be a list of layer indices");
    for (const json& e : v) {
      if (!e.is_number_integer()) {
        fail(origin, "field \"mlp_only_layers\" must hold integers, got " + e.dump());
      }
      m->mlp_only_layers.push_back(e.get<int32_t>());
    }
  }
}

void read_minimind_moe(const json& j, const std::string& origin, const ModelConfig& c,
                       MoeConfig* m) {
  if (!optional_bool(j, "use_moe", false, origin)) return;  // dense: the MoE fields are unused
  if (has(j, "scoring_func") && j.at("scoring_func") != "softmax") {
    fail(origin, "scoring_func " + j.at("scoring_func").dump() +
                     " is not supported (MiniMind only defines \"softmax\")");
  }
  m->num_experts_per_tok =
      required_int(j, "num_experts_per_tok", "how many experts each token uses", origin);
  m->norm_topk_prob = optional_bool(j, "norm_topk_prob", true, origin);
  m->norm_topk_epsilon = 1e-20f;
  if (minimind_is_v2(j)) {
    m->num_experts = required_int(j, "n_routed_experts", "the number of routed experts", origin);
    m->num_shared_experts =
        required_int(j, "n_shared_experts", "the number of shared experts", origin);
    m->moe_intermediate_size = c.intermediate_size;  // every expert is a full FeedForward
    m->norm_topk_only_above_one = true;
  } else {
    m->num_experts = required_int(j, "num_experts", "the number of routed experts", origin);
    m->moe_intermediate_size =
        optional_int(j, "moe_intermediate_size", c.intermediate_size, origin);
  }
}

}  // namespace

bool MoeConfig::is_sparse_layer(int32_t layer) const {
  if (!enabled() || decoder_sparse_step <= 0) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end()) {
    return false;
  }
  return (layer + 1) % decoder_sparse_step == 0;
}

std::optional<int32_t> sparse_only_intermediate_size(const json& j, const std::string& type,
                                                     const std::string& origin) {
  if (type != "qwen3_5_moe_text" || !has(j, "moe_intermediate_size")) return std::nullopt;
  return int_field(j, "moe_intermediate_size", origin);
}

bool minimind_is_v2(const json& config) {
  return config.contains("n_routed_experts") && !config.contains("num_experts");
}

int32_t minimind_default_intermediate_size(const json& config, int32_t hidden) {
  if (minimind_is_v2(config)) {
    // MiniMind 2's FeedForward: 8/3 of hidden, rounded up to a multiple of 64.
    const int32_t raw = static_cast<int32_t>(hidden * 8 / 3);
    return 64 * ((raw + 63) / 64);
  }
  // MiniMind 3: ceil(hidden * pi / 64) * 64.
  return static_cast<int32_t>(std::ceil(hidden * 3.141592653589793 / 64.0)) * 64;
}

void read_moe_fields(const json& j, const std::string& origin, ModelConfig* c) {
  if (c->model_type == "gpt_oss") return;  // read_gpt_oss_fields
  c->moe = MoeConfig{};
  if (c->model_type == "qwen3_moe" || c->model_type == "qwen3_next" ||
      c->model_type == "qwen3_5_moe_text") {
    read_qwen3_moe(j, c->model_type, origin, &c->moe);
  }
  if (c->model_type == "minimind") {
    // MiniMind's inference_rope_scaling writes a YaRN of its own (no attention factor, its own
    // ramp), which HF's yarn formula would not reproduce.
    if (has(j, "rope_scaling")) {
      fail(origin,
           "MiniMind's rope_scaling (inference_rope_scaling) is not supported; serve it without");
    }
    read_minimind_moe(j, origin, *c, &c->moe);
  }
}

void validate_moe(const ModelConfig& c, const std::string& origin) {
  const MoeConfig& m = c.moe;
  const bool qwen_moe = c.model_type == "qwen3_moe" || c.model_type == "qwen3_next" ||
                        c.model_type == "qwen3_5_moe_text";
  if (qwen_moe && !m.enabled()) {
    fail(origin, "model_type " + c.model_type + " needs num_experts > 0");
  }
  if (!m.enabled()) {
    if (m.num_shared_experts != 0 || m.shared_expert_intermediate_size != 0) {
      fail(origin, "shared experts without routed experts");
    }
    return;
  }
  if (!qwen_moe && c.model_type != "minimind" && c.model_type != "gpt_oss") {
    fail(origin,
         "experts are only supported for model_type qwen3_moe, qwen3_next, qwen3_5_moe_text, "
         "minimind and gpt_oss, not " +
             c.model_type);
  }
  if (m.shared_expert_intermediate_size < 0 ||
      (m.shared_expert_intermediate_size > 0 && m.num_shared_experts > 0)) {
    fail(origin,
         "shared_expert_intermediate_size must be positive and not beside n_shared_experts");
  }
  if (m.num_experts_per_tok < 1 || m.num_experts_per_tok > m.num_experts) {
    fail(origin, "num_experts_per_tok must be between 1 and the number of experts (" +
                     std::to_string(m.num_experts) + "), got " +
                     std::to_string(m.num_experts_per_tok));
  }
  if (m.moe_intermediate_size <= 0) {
    fail(origin,
         "moe_intermediate_size must be positive, got " + std::to_string(m.moe_intermediate_size));
  }
  if (m.decoder_sparse_step < 1) {
    fail(origin,
         "decoder_sparse_step must be at least 1, got " + std::to_string(m.decoder_sparse_step));
  }
  if (m.num_shared_experts < 0) fail(origin, "n_shared_experts must not be negative");
  for (int32_t l : m.mlp_only_layers) {
    if (l < 0 || l >= c.num_hidden_layers) {
      fail(origin, "mlp_only_layers names layer " + std::to_string(l) + " but the model has " +
                       std::to_string(c.num_hidden_layers) + " layers");
    }
  }
}

void write_moe_fields(const ModelConfig& c, json* out) {
  json& j = *out;
  const MoeConfig& m = c.moe;
  if (c.model_type == "qwen3_moe" || c.model_type == "qwen3_next" ||
      c.model_type == "qwen3_5_moe_text") {
    if (m.shared_expert_intermediate_size > 0) {
      j["shared_expert_intermediate_size"] = m.shared_expert_intermediate_size;
    }
    j["num_experts"] = m.num_experts;
    j["num_experts_per_tok"] = m.num_experts_per_tok;
    j["moe_intermediate_size"] = m.moe_intermediate_size;
    j["norm_topk_prob"] = m.norm_topk_prob;
    j["decoder_sparse_step"] = m.decoder_sparse_step;
    j["mlp_only_layers"] = m.mlp_only_layers;
    return;
  }
  if (c.model_type != "minimind") return;
  j["use_moe"] = m.enabled();
  j["num_experts_per_tok"] = m.enabled() ? m.num_experts_per_tok : 1;
  j["norm_topk_prob"] = m.enabled() ? m.norm_topk_prob : true;
  if (!c.qk_norm) {  // MiniMind 2 spelling
    j["n_routed_experts"] = m.enabled() ? m.num_experts : 4;
    j["n_shared_experts"] = m.enabled() ? m.num_shared_experts : 1;
    j["scoring_func"] = "softmax";
  } else {
    j["num_experts"] = m.enabled() ? m.num_experts : 4;
    j["moe_intermediate_size"] = m.enabled() ? m.moe_intermediate_size : c.intermediate_size;
  }
}

int64_t mlp_params(const ModelConfig& c, int32_t layer, bool active) {
  const int64_t h = c.hidden_size;
  if (!c.moe.is_sparse_layer(layer)) return 3 * h * c.intermediate_size;
  const MoeConfig& m = c.moe;
  const int64_t routed = active ? m.num_experts_per_tok : m.num_experts;
  const int64_t gated_shared =
      m.shared_expert_intermediate_size > 0 ? 3 * h * m.shared_expert_intermediate_size + h : 0;
  return h * m.num_experts + routed * 3 * h * m.moe_intermediate_size +
         int64_t{m.num_shared_experts} * 3 * h * c.intermediate_size + gated_shared;
}

}  // namespace ps
