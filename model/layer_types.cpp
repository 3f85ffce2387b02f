#include "model/layer_types.h"

#include <cmath>

#include "model/config_json.h"
#include "model/model_config.h"

namespace ps {

using config_json::fail;
using config_json::has;

namespace {

float number_or(const nlohmann::json& j, const char* key, float fallback,
                const std::string& origin) {
  if (!has(j, key)) return fallback;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0)) {
    fail(origin, std::string("field \"") + key + "\" must be a positive number, got " + v.dump());
  }
  return static_cast<float>(v.get<double>());
}

void refuse_set(const nlohmann::json& j, const char* key, const std::string& origin,
                const std::string& why) {
  if (has(j, key))
    fail(origin, std::string(key) + " " + j.at(key).dump() + " is not supported" + why);
}

}  // namespace

// A multimodal `gemma3` config.json: its text_config, as a gemma3_text config of its own (the
// vision tower is not served). The top level's token ids and tying fill what it leaves out.
std::string gemma3_text_config(const nlohmann::json& j, const std::string& origin) {
  return config_json::nested_text_config(j, origin, "gemma3", "gemma3_text");
}

void read_gemma_fields(const nlohmann::json& j, const std::string& origin, ModelConfig* c) {
  const auto layers = static_cast<size_t>(std::max(0, c->num_hidden_layers));
  const bool gemma2 = c->model_type == "gemma2";
  for (const char* key : {"hidden_activation", "hidden_act"}) {
    if (has(j, key) && j.at(key) != "gelu_pytorch_tanh") {
      fail(origin, std::string(key) + " " + j.at(key).dump() + " is not supported for " +
                       c->model_type + " (only gelu_pytorch_tanh)");
    }
  }
  if (gemma2) {  // absent: Gemma2Config's defaults, 50 and 30; null: not capped
    c->attn_logit_softcapping = number_or(j, "attn_logit_softcapping",
                                          j.contains("attn_logit_softcapping") ? 0 : 50, origin);
    c->final_logit_softcapping = number_or(j, "final_logit_softcapping",
                                           j.contains("final_logit_softcapping") ? 0 : 30, origin);
  } else {
    refuse_set(j, "attn_logit_softcapping", origin, " for gemma3_text (Gemma 2 soft-caps)");
    refuse_set(j, "final_logit_softcapping", origin, " for gemma3_text (Gemma 2 soft-caps)");
  }
  if (has(j, "use_bidirectional_attention") && j.at("use_bidirectional_attention") == true) {
    fail(origin, "use_bidirectional_attention true is not supported (an embedding model)");
  }
  c->sliding_window = 4096;  // Gemma3TextConfig's default
  if (has(j, "sliding_window")) {
    const nlohmann::json& v = j.at("sliding_window");
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 30)) {
      fail(origin, "sliding_window must be a positive integer, got " + v.dump());
    }
    c->sliding_window = static_cast<int32_t>(v.get<int64_t>());
  }
  // Gemma 2's sliding layers rotate as its global ones.
  c->rope_local_base_freq =
      gemma2 ? c->rope_theta : number_or(j, "rope_local_base_freq", 10000.0f, origin);
  c->query_pre_attn_scalar = number_or(j, "query_pre_attn_scalar", float(c->head_dim), origin);
  if (has(j, "layer_types")) {
    read_layer_types(j, origin, {}, c);
    return;
  }
  int64_t pattern = gemma2 ? 2 : 6;
  for (const char* key : {"sliding_window_pattern", "_sliding_window_pattern"}) {
    if (!has(j, key)) continue;
    const nlohmann::json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      fail(origin, std::string(key) + " must be a positive integer, got " + v.dump());
    }
    pattern = std::min<int64_t>(v.get<int64_t>(), 1 << 20);
    break;
  }
  c->layer_types.assign(layers, LayerType::sliding_attention);
  for (size_t i = 0; i < layers; ++i) {
    if ((int64_t(i) + 1) % pattern == 0) c->layer_types[i] = LayerType::full_attention;
  }
}

void read_layer_types(const nlohmann::json& j, const std::string& origin,
                      std::vector<LayerType> fallback, ModelConfig* c) {
  const auto layers = static_cast<size_t>(std::max(0, c->num_hidden_layers));
  if (!has(j, "layer_types")) {
    c->layer_types = std::move(fallback);
    return;
  }
  c->layer_types.assign(layers, LayerType::sliding_attention);
  const nlohmann::json& list = j.at("layer_types");
  if (!list.is_array() || list.size() != layers) {
    fail(origin, "layer_types must be a list of num_hidden_layers (" + std::to_string(layers) +
                     ") entries");
  }
  for (size_t i = 0; i < layers; ++i) {
    const nlohmann::json& v = list[i];
    if (v == "full_attention") {
      c->layer_types[i] = LayerType::full_attention;
    } else if (v != "sliding_attention") {
      fail(origin, "layer_types[" + std::to_string(i) + "] is " + v.dump() +
                       "; each entry is \"full_attention\" or \"sliding_attention\"");
    }
  }
}

void write_layer_types(const ModelConfig& c, nlohmann::json* j) {
  nlohmann::json list = nlohmann::json::array();
  for (LayerType t : c.layer_types) {
    list.push_back(t == LayerType::full_attention ? "full_attention" : "sliding_attention");
  }
  (*j)["layer_types"] = std::move(list);
  (*j)["sliding_window"] = c.sliding_window;
}

void validate_layer_types(const ModelConfig& c, const std::string& origin) {
  if (c.layer_types.empty() || c.hybrid_layout()) return;  // linear_attention_config.h's
  if (!c.gemma_layout() && !c.gpt_oss()) {
    fail(origin,
         "per-layer attention kinds (layer_types) are only read for gemma3_text, gemma2 and "
         "gpt_oss, not " +
             c.model_type);
  }
  if (!(c.attn_logit_softcapping >= 0) || !(c.final_logit_softcapping >= 0)) {
    fail(origin, "soft-capping values must not be negative");
  }
  if (c.layer_types.size() != static_cast<size_t>(c.num_hidden_layers)) {
    fail(origin, "layer_types has " + std::to_string(c.layer_types.size()) + " entries for " +
                     std::to_string(c.num_hidden_layers) + " layers");
  }
  if (c.sliding_window < 1) fail(origin, "sliding_window must be positive");
  if (!(c.query_pre_attn_scalar >= 0) || !(c.rope_local_base_freq > 0)) {  // 0: head_dim
    fail(origin, "query_pre_attn_scalar and rope_local_base_freq must be positive");
  }
}

void write_gemma3_fields(const ModelConfig& c, nlohmann::json* j) {
  if (!c.gemma_layout()) return;
  write_layer_types(c, j);
  (*j)["rope_local_base_freq"] = c.rope_local_base_freq;
  (*j)["query_pre_attn_scalar"] =
      c.query_pre_attn_scalar > 0 ? c.query_pre_attn_scalar : float(c.head_dim);
  (*j)["hidden_activation"] = "gelu_pytorch_tanh";
  j->erase("hidden_act");
  auto cap = [](float v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  (*j)["attn_logit_softcapping"] = cap(c.attn_logit_softcapping);
  (*j)["final_logit_softcapping"] = cap(c.final_logit_softcapping);
  if (c.model_type == "gemma2") j->erase("rope_local_base_freq");
}

RopeFrequencies sliding_rope_frequencies(const ModelConfig& c) {
  if (c.model_type != "gemma3_text") return rope_frequencies(c);
  ModelConfig local = c;
  local.rope_theta = c.rope_local_base_freq;
  local.rope_scaling = RopeScaling{};
  return rope_frequencies(local);
}

}  // namespace ps
