#include "model/linear_attention_config.h"

#include <limits>

#include "model/config_json.h"

namespace ps {

using config_json::fail;
using config_json::has;
using config_json::positive_int;

namespace {

constexpr const char* kLinearFields[] = {"linear_conv_kernel_dim", "linear_num_key_heads",
                                         "linear_num_value_heads", "linear_key_head_dim",
                                         "linear_value_head_dim"};

}  // namespace

std::string qwen3_5_text_config(const nlohmann::json& j, const std::string& origin) {
  const std::string wrapper = j.at("model_type").get<std::string>();
  return config_json::nested_text_config(j, origin, wrapper, wrapper + "_text");
}

nlohmann::json without_mrope_fields(const nlohmann::json& rope_parameters) {
  nlohmann::json r = rope_parameters;
  if (r.is_object()) {
    r.erase("mrope_section");
    r.erase("mrope_interleaved");
  }
  return r;
}

void read_linear_attention_fields(const nlohmann::json& j, const std::string& origin,
                                  ModelConfig* c) {
  LinearAttentionShape& s = c->linear;
  s.conv_kernel = positive_int(j, kLinearFields[0], origin, 1 << 20);
  s.num_key_heads = positive_int(j, kLinearFields[1], origin, 1 << 20);
  s.num_value_heads = positive_int(j, kLinearFields[2], origin, 1 << 20);
  s.key_head_dim = positive_int(j, kLinearFields[3], origin, 1 << 20);
  s.value_head_dim = positive_int(j, kLinearFields[4], origin, 1 << 20);
  if (has(j, "attn_output_gate") && j.at("attn_output_gate") != true) {
    fail(origin, "attn_output_gate " + j.at("attn_output_gate").dump() +
                     " is not supported (Qwen3.5's attention always gates its output)");
  }
  c->attn_output_gate = true;
  const auto layers = static_cast<size_t>(std::max(0, c->num_hidden_layers));
  if (!has(j, "layer_types") && c->model_type == "qwen3_next") {
    // Qwen3NextConfig: without layer_types, every full_attention_interval-th layer (default 4th)
    // is full attention.
    const int32_t every =
        has(j, "full_attention_interval") ? positive_int(j, "full_attention_interval", origin) : 4;
    c->layer_types.assign(layers, LayerType::linear_attention);
    for (size_t i = every - 1; i < layers; i += every)
      c->layer_types[i] = LayerType::full_attention;
    return;
  }
  if (!has(j, "layer_types")) fail(origin, "missing required field \"layer_types\"");
  const nlohmann::json& list = j.at("layer_types");
  if (!list.is_array() || list.size() != layers) {
    fail(origin, "layer_types must be a list of num_hidden_layers (" + std::to_string(layers) +
                     ") entries");
  }
  c->layer_types.assign(layers, LayerType::full_attention);
  for (size_t i = 0; i < layers; ++i) {
    if (list[i] == "linear_attention") {
      c->layer_types[i] = LayerType::linear_attention;
    } else if (list[i] != "full_attention") {
      fail(origin, "layer_types[" + std::to_string(i) + "] is " + list[i].dump() +
                       "; each entry is \"linear_attention\" or \"full_attention\"");
    }
  }
}

void validate_linear_attention(const ModelConfig& c, const std::string& origin) {
  bool any_linear = false;
  for (LayerType t : c.layer_types) any_linear |= t == LayerType::linear_attention;
  if (!c.hybrid_layout()) {
    if (any_linear || c.attn_output_gate) {
      fail(origin,
           "linear_attention layers and attn_output_gate are only read for qwen3_5_text, "
           "qwen3_5_moe_text and qwen3_next, not " +
               c.model_type);
    }
    return;
  }
  if (c.layer_types.size() != static_cast<size_t>(c.num_hidden_layers)) {
    fail(origin, "layer_types has " + std::to_string(c.layer_types.size()) + " entries for " +
                     std::to_string(c.num_hidden_layers) + " layers");
  }
  for (LayerType t : c.layer_types) {
    if (t == LayerType::sliding_attention) {
      fail(origin, "layer_types: sliding_attention is not a " + c.model_type + " layer kind");
    }
  }
  if (!c.attn_output_gate) fail(origin, c.model_type + " needs attn_output_gate");
  const LinearAttentionShape& s = c.linear;
  const std::pair<const char*, int32_t> sizes[] = {{kLinearFields[0], s.conv_kernel},
                                                   {kLinearFields[1], s.num_key_heads},
                                                   {kLinearFields[2], s.num_value_heads},
                                                   {kLinearFields[3], s.key_head_dim},
                                                   {kLinearFields[4], s.value_head_dim}};
  for (const auto& [name, v] : sizes) {
    if (v < 1) fail(origin, std::string("field \"") + name + "\" must be positive");
  }
  if (s.num_value_heads % s.num_key_heads != 0) {
    fail(origin, "linear_num_value_heads (" + std::to_string(s.num_value_heads) +
                     ") must be a multiple of linear_num_key_heads (" +
                     std::to_string(s.num_key_heads) + ")");
  }
  if (s.state_floats() > std::numeric_limits<int32_t>::max()) {
    fail(origin, "the linear_* fields give a recurrent state too large to hold");
  }
}

void write_linear_attention_fields(const ModelConfig& c, nlohmann::json* j) {
  if (!c.hybrid_layout()) return;
  nlohmann::json list = nlohmann::json::array();
  for (LayerType t : c.layer_types) {
    list.push_back(t == LayerType::linear_attention ? "linear_attention" : "full_attention");
  }
  (*j)["layer_types"] = std::move(list);
  const LinearAttentionShape& s = c.linear;
  (*j)["linear_conv_kernel_dim"] = s.conv_kernel;
  (*j)["linear_num_key_heads"] = s.num_key_heads;
  (*j)["linear_num_value_heads"] = s.num_value_heads;
  (*j)["linear_key_head_dim"] = s.key_head_dim;
  (*j)["linear_value_head_dim"] = s.value_head_dim;
  (*j)["attn_output_gate"] = true;
  j->erase("use_sliding_window");
}

}  // namespace ps
